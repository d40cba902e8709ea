class Node:
    def __init__(self, name):
        self.name = name


class Builder:
    node_class = Node

    def make(self, name):
        cls = self.node_class
        return cls(name)


def build(builder: Builder):
    make = builder.node_class
    return make("root")


def run():
    build(Builder())
    return Builder().make("leaf")


run()

class Visitor:
    def visit(self, node):
        method = "visit_" + type(node).__name__
        return getattr(self, method, self.generic_visit)(node)

    def generic_visit(self, node):
        for child in node.children:
            self.visit(child)

    def visit_Leaf(self, node):
        return node.value


class Node:
    def __init__(self, *children):
        self.children = children


class Leaf(Node):
    def __init__(self, value):
        super().__init__()
        self.value = value


def main():
    return Visitor().visit(Node(Leaf(1), Leaf(2)))

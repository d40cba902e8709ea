class Node:
    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent

    def child(self, name):
        return type(self)(name, parent=self)

    def copy(self):
        return self.__class__(self.name)

    def label(self):
        return self.name


class Leaf(Node):
    def __init__(self, name, parent=None):
        super().__init__(name, parent)


plain = Node("plain")
root = Leaf("root")
kid = root.child("kid")
plain.child("other")
root.copy()
plain.copy()
kid.label()

class Name:
    pass


class Call:
    pass


class Checker:
    def __init__(self):
        self._handlers = {}

    def handler_for(self, node_class):
        try:
            return self._handlers[node_class]
        except KeyError:
            node_type = node_class.__name__.upper()
        self._handlers[node_class] = handler = getattr(self, node_type, self.unknown)
        return handler

    def handle(self, node):
        handler = self.handler_for(node.__class__)
        handler(node)

    def unknown(self, node):
        return None

    def NAME(self, node):
        return "name"

    def CALL(self, node):
        return self.helper()

    def helper(self):
        return "not a handler: its name is not in capitals"


def main():
    checker = Checker()
    checker.handle(Name())
    checker.handle(Call())

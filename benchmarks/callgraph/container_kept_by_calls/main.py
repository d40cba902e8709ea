class Registry:
    """A container of its own: register keeps the item, iteration gives it back."""

    def __init__(self):
        self._data = {}

    def register(self, item, name):
        self._data[name] = item

    def __iter__(self):
        return iter(list(self._data.values()))


class Strip:
    def process(self, text):
        return text.strip()


class Upper:
    def process(self, text):
        return text.upper()


class Inline:
    def run(self, text):
        return text


class Tree:
    def run(self, text):
        return text


class Unused:
    def process(self, text):
        return "never kept in any container"


class Stack:
    def __init__(self):
        self.filters = []

    def apply(self, text):
        for f in self.filters:
            text = f.process(text)
        return text


def build_stack(stack):
    stack.filters.append(Strip())


def build_tree():
    procs = Registry()
    procs.register(Inline(), "inline")
    return procs


class Doc:
    def __init__(self):
        self.procs = build_tree()
        self.procs.register(Tree(), "tree")

    def convert(self, text):
        for p in self.procs:
            text = p.run(text)
        return text


def main():
    stack = Stack()
    build_stack(stack)
    stack.filters.append(Upper())
    stack.apply(" a ")
    Unused()
    return Doc().convert("b")

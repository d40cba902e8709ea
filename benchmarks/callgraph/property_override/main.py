class Pattern:
    def __init__(self, value):
        self.value = value

    @property
    def width(self):
        raise NotImplementedError

    def describe(self):
        return self.width


class Text(Pattern):
    @property
    def width(self):
        return len(self.value)


class Regex(Pattern):
    @property
    def width(self):
        return 1


class Terminal:
    def __init__(self, pattern: Pattern):
        self.pattern = pattern


def widest(terminal: Terminal):
    return terminal.pattern.width


def main():
    Text("ab").describe()
    return widest(Terminal(Regex("a+")))

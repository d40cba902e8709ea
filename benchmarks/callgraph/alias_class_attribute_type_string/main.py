import typing as t


class Formatter:
    def __init__(self, width):
        self.width = width

    def write(self, text):
        return text[: self.width]


class Context:
    formatter_class: "t.Type[Formatter]" = Formatter
    other_class: t.Type["Formatter"] = Formatter

    def make_formatter(self):
        return self.formatter_class(80)

    def make_other(self):
        return self.other_class(40).write("x")


ctx = Context()
ctx.make_formatter().write("hello")
ctx.make_other()

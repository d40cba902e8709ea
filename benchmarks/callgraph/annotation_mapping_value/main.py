import typing as t


class Option:
    def process(self, value):
        return value

    @property
    def takes_value(self):
        return True


class Parser:
    def __init__(self):
        self._long: t.Dict[str, Option] = {}
        self._short: "dict[str, Option]" = {}

    def add(self, name, option):
        self._long[name] = option
        self._short[name[:1]] = option

    def match_long(self, name, value):
        option = self._long[name]
        if option.takes_value:
            return option.process(value)
        return None

    def match_short(self, name):
        found = self._short.get(name)
        return found.process(name)


def lookup(table: t.Mapping[str, Option], key):
    return table[key].process(key)


parser = Parser()
parser.add("x", Option())
parser.match_long("x", 1)
parser.match_short("x")
lookup({"z": Option()}, "z")

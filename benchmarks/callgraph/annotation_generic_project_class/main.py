from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self):
        self._items = []

    def register(self, item):
        self._items.append(item)


class Hooks:  # a second family defining register: no guess by the name alone
    def register(self, hook):
        return hook


class Proc:
    def run(self):
        return 1


_CACHE = {}


def build() -> Registry[Proc]:
    registry = Registry()
    registry.register(Proc())
    return _CACHE.setdefault("procs", registry)


class App:
    def __init__(self):
        self.procs = build()

    def go(self):
        self.procs.register(Proc())


def main():
    App().go()


def feed(procs: Registry[Proc], extra: "Registry[Proc]"):
    procs.register(Proc())
    extra.register(None)

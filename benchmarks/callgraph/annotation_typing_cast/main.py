import typing as t
from typing import cast


class Base:
    def run(self):
        return 0


class Special(Base):
    def run(self):
        return 1

    def extra(self):
        return 2


def make() -> Base:
    return Special()


def use():
    thing = t.cast(Special, make())
    thing.extra()
    return cast("Special", make()).run()


use()

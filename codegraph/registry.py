"""A name -> factory table: how models of every kind plug in (`@MODELS.register("name")`)."""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    def __init__(self, what: str, error: type[Exception] = ValueError) -> None:
        self.what, self.error = what, error
        self.factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str):
        def wrap(factory):
            self.factories[name] = factory
            return factory
        return wrap

    def create(self, name: str, **options) -> T:
        try:
            factory = self.factories[name]
        except KeyError:
            raise self.error(f"unknown {self.what} {name!r}: choose one of {', '.join(sorted(self.factories))}") from None
        return factory(**options)

    def __contains__(self, name: str) -> bool:
        return name in self.factories

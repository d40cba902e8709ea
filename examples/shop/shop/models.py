"""What the shop sells and the cart that holds it."""

from dataclasses import dataclass, field


@dataclass
class Item:
    """A thing with a name and a net price."""

    name: str
    price: float


@dataclass
class Cart:
    """Items a customer is about to buy."""

    items: list = field(default_factory=list)

    def add(self, item: Item) -> None:
        self.items.append(item)

    def count(self) -> int:
        return len(self.items)

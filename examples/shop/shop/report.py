"""One-line summaries of carts."""

from shop.models import Cart


def summarize(cart: Cart, rate: float = 0.1) -> str:
    raise NotImplementedError

from shop.models import Cart, Item
from shop.report import summarize


def test_summarize_counts_items_and_applies_the_discount():
    cart = Cart()
    cart.add(Item("tea", 10.0))
    cart.add(Item("cake", 20.0))
    assert summarize(cart) == "2 items, 27.00"


def test_summarize_with_another_rate():
    cart = Cart()
    cart.add(Item("tea", 10.0))
    assert summarize(cart, rate=0.5) == "1 items, 5.00"

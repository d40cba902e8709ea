class Deck:
    def __init__(self, cards):
        self.cards = list(cards)

    def __len__(self):
        return len(self.cards)

    def __iter__(self):
        return iter(self.cards)

    def __repr__(self):
        return "Deck(%d)" % len(self)

    def __bool__(self):
        return bool(self.cards)


def main():
    deck = Deck([1, 2])
    total = len(deck)
    first = next(iter(deck))
    return repr(deck), bool(deck), total, first, sorted(deck)

class Money:
    def __init__(self, cents):
        self.cents = cents

    def __repr__(self):
        return f"Money({self.cents})"


class Account:
    def __init__(self, balance: Money):
        self.balance = balance

    def describe(self):
        return f"balance={self.balance!r}"


Account(Money(5)).describe()

class Expr:
    def __init__(self, name):
        self.name = name

    def __add__(self, other):
        return Sum(self, other)

    def __radd__(self, other):
        return Sum(Expr(str(other)), self)

    def __or__(self, other):
        return Choice(self, other)

    def __invert__(self):
        return Not(self)

    def __neg__(self):
        return Not(self)


class Sum(Expr):
    def __init__(self, left, right):
        super().__init__("sum")
        self.parts = [left, right]


class Choice(Expr):
    def __init__(self, left, right):
        super().__init__("choice")
        self.options = [left, right]


class Not(Expr):
    def __init__(self, inner):
        super().__init__("not")
        self.inner = inner


class Counter:
    def __init__(self):
        self.n = 0

    def __add__(self, k):
        return self


word = Expr("word")
number = Expr("number")
term = word + number
line = "x" + word
choice = word | Expr("y")
negated = ~word
minus = -number
count = Counter()
count += 1
total = 1 + 2

class Table:
    def __init__(self):
        self.rows = {}

    def __contains__(self, key):
        return key in self.rows

    def __getitem__(self, key):
        return self.rows[key]

    def __setitem__(self, key, value):
        self.rows[key] = value

    def __delitem__(self, key):
        del self.rows[key]

    def __eq__(self, other):
        return self.rows == other

    def __lt__(self, other):
        return len(self.rows) < len(other)

    def move(self, old, new):
        if old not in self:
            return False
        self[new] = self[old]
        del self[old]
        return True

    def bump(self, key):
        self[key] += 1

    def same(self, other):
        if self is other or other is None:
            return True
        return self == other and not self < other

    def peek(self, other, key):
        return key in other, key in self.rows, other[key]


class Cached(Table):
    def __getitem__(self, key):
        return super().__getitem__(key)


t = Cached()
t.rows["a"] = 1
t.move("a", "b")
t.bump("b")
t.same(t)
t.peek({"b": 1}, "b")

class Memoizer:
    def __init__(self):
        self.seen = {}

    def __call__(self, key):
        return self.seen.setdefault(key, len(self.seen))


class Validator:
    _memo = Memoizer()

    def check(self, value):
        return self._memo(value)


counter = Memoizer()


def count(value):
    return counter(value)


Validator().check("a")
count("b")

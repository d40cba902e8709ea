from collections import deque
from itertools import islice


def consume(iterator, n=None):
    if n is None:
        deque(iterator, maxlen=0)
    else:
        next(islice(iterator, n, n), None)


def take(n, iterable):
    return list(islice(iterable, n))


class Seekable:
    def __init__(self, items):
        self._source = iter(items)
        self._cache = []

    def __iter__(self):
        return self

    def __next__(self):
        item = next(self._source)
        self._cache.append(item)
        return item

    def seek(self, index):
        remainder = index - len(self._cache)
        if remainder > 0:
            consume(self, remainder)

    def head(self, n):
        return take(n, self)


class Counter:
    def __init__(self):
        self.n = 0

    def __iter__(self):
        return self

    def __next__(self):
        self.n += 1
        return self.n


def firsts():
    return list(islice(Counter(), 3))


s = Seekable("abcdef")
s.seek(2)
s.head(2)
firsts()

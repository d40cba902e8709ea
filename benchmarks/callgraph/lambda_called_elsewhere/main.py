def measure(s):
    return len(s)


def choose_width(multiline):
    if multiline:
        width_fn = lambda s: measure(s)
    else:
        width_fn = len
    return width_fn


def align(header, width_fn):
    return width_fn(header)


def table(header, multiline):
    width_fn = choose_width(multiline)
    return align(header, width_fn)


class Bucket:
    def __init__(self, validator=None):
        self._validator = validator or (lambda x: True)

    def holds(self, value):
        return self._validator(value)


def by_size(words):
    return sorted(words, key=lambda s: measure(s))


table("a", True)
Bucket().holds("x")
by_size(["bb", "a"])

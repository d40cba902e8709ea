from functools import partial


class curry:
    def __init__(self, *args, **kwargs):
        func, args = args[0], args[1:]
        if kwargs:
            self._partial = partial(func, *args, **kwargs)
        else:
            self._partial = partial(func, *args)

    def __call__(self, *args, **kwargs):
        return self._partial(*args, **kwargs)


def merge(*dicts):
    out = {}
    for d in dicts:
        out.update(d)
    return out


@curry
def take(n, seq):
    return list(seq)[:n]


merged = curry(merge)
merged({"a": 1}, {"b": 2})
take(2, [1, 2, 3])

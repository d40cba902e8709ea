def _pairs_fallback(xs):
    return list(zip(xs, xs[1:]))


# Where itertools has pairwise (Python 3.10 and later), the def below is what `pairs` names.
try:
    from itertools import pairwise as _itertools_pairwise
except ImportError:
    pairs = _pairs_fallback
else:
    def pairs(xs):
        return list(_itertools_pairwise(xs))


def is_sorted(xs):
    return all(a <= b for a, b in pairs(xs))


is_sorted([1, 2, 3])

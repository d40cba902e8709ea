import functools
from functools import partial


def add(a, b):
    return a + b


def scale(factor, x):
    return factor * x


def show(value, sep=" "):
    return sep.join(str(value))


def run(verbose):
    inc = functools.partial(add, 1)
    if verbose:
        out = partial(show, sep=", ")
    else:
        out = show
    out(inc(2) + partial(scale, 2)(3))


run(True)
run(False)

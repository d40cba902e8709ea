from functools import partial
from itertools import islice


def take(n, iterable):
    return [x for x in islice(iterable, n)]


def chunked(iterable, n, strict=False):
    iterator = iter(partial(take, n, iter(iterable)), [])
    if strict:
        def ret():
            out = []
            for chunk in iterator:
                if len(chunk) != n:
                    raise ValueError("short")
                out.append(chunk)
            return out
        return ret()
    return iterator


def side_effect(func, iterable, chunk_size):
    seen = []
    for chunk in chunked(iterable, chunk_size):
        func(chunk)
        seen.extend(chunk)
    return seen


def read_block(stream):
    return stream.read(4)


def blocks(stream):
    return [b for b in iter(lambda: read_block(stream), "")]


list(chunked("abcde", 2, strict=False))
list(chunked("abcd", 2, strict=True))
side_effect(print, "abc", 2)
import io
blocks(io.StringIO("abcdefgh"))

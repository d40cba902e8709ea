def double(x):
    return 2 * x


def absolute(x):
    return -x if x < 0 else x


def apply(fn, xs):
    return list(map(fn, xs))


def pick(key, xs):
    return sorted(xs, key=key)


def run():
    apply(double, [1, 2])
    return pick(absolute, [-1, 2])


run()

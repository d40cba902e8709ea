def helper():
    return 1


def run(xs):
    return sorted(xs, key=lambda helper: helper())

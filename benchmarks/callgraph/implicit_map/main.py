def double(x):
    return 2 * x

def run(xs):
    return list(map(double, xs))

def keep(x):
    return x > 0

def run(xs):
    return list(filter(keep, xs))

def weight(x):
    return -x

def run(xs):
    return sorted(xs, key=weight)

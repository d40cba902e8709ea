def handler():
    return 1

def outer(f):
    return inner(f)

def inner(g):
    return g()

def main():
    return outer(handler)

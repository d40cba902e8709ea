def a():
    pass

def b(x):
    return x

def run():
    b(a())

def one():
    return 1

def two():
    return 2

def run():
    a, b = one, two
    return a() + b()

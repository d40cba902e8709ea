def a():
    return 1

def b():
    return 2

def run():
    for f in (a, b):
        f()

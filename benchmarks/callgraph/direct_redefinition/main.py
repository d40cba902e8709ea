def f():
    return 1

def f():
    return 2

def run():
    return f()

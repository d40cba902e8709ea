def a():
    return 1

def b():
    return 2

HANDLERS = {"a": a, "b": b}

def run(key):
    return HANDLERS[key]()

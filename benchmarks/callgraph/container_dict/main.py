def a():
    return 1

HANDLERS = {"a": a}

def run():
    return HANDLERS["a"]()

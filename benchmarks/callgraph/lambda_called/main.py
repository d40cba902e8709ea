def helper():
    return 1

def run():
    f = lambda: helper()
    return f()

def helper():
    return 1

def run(fn):
    helper = fn
    def inner():
        nonlocal helper
        return helper()
    return inner()

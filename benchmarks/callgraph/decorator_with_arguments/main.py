def tag(name):
    def wrap(fn):
        return fn
    return wrap

@tag("x")
def work():
    return 1

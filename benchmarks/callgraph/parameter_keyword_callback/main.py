def handler():
    return 1

def call(x, cb=None):
    return cb()

def run():
    return call(1, cb=handler)

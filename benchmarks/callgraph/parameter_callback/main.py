def handler():
    return 1

def call(cb):
    return cb()

def run():
    return call(handler)

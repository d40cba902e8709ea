def a():
    return 1

def run():
    fs = [a]
    return fs[0]()

def a():
    return 1

def b():
    return 2

def run(flag):
    if flag:
        f = a
    else:
        f = b
    return f()

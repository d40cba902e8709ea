def helper():
    return 1

def run():
    a = b = helper
    return a() + b()

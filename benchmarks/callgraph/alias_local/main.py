def helper():
    return 1

def run():
    h = helper
    return h()

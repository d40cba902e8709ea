def helper():
    return 1

h = helper

def run():
    return h()

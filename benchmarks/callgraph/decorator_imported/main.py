from deco import trace

@trace
def work():
    return 1

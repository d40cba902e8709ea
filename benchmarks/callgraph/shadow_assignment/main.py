def helper():
    return 1


def run(x):
    helper = x
    return helper()

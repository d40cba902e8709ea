def helper():
    return 1


def run(items):
    first, *helper = items
    return helper()

def helper():
    return 1


def run(items):
    for helper in items:
        helper()

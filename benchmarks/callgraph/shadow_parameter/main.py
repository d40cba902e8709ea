def helper():
    return 1


def run(helper):
    return helper()

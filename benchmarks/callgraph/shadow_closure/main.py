def helper():
    return 1


def run(helper):
    def inner():
        return helper()
    return inner()

def helper():
    return 1


def run(make):
    if (helper := make()):
        return helper()

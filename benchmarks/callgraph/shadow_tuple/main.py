def helper():
    return 1


def run(pair):
    helper, other = pair
    return helper() + other

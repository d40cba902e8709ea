def helper():
    return 1


def run(ctx):
    with ctx as helper:
        helper()

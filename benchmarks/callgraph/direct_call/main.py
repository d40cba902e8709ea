def helper():
    return 1

def run():
    return helper()

run()

def helper():
    return 1

def run():
    global helper
    return helper()

def inner():
    return 1

def get():
    return inner

def run():
    return get()()

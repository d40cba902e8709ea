def make():
    def inner():
        return 1
    return inner

def run():
    return make()()

def log(fn):
    def wrapper(*args):
        return fn(*args)
    return wrapper

@log
def work():
    return 1

def main():
    return work()

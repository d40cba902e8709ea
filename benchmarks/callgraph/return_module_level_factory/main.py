def cached(make):
    def func():
        return make()
    return func

def stream():
    return 1

get_stream = cached(stream)

def main():
    return get_stream()

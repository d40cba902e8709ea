def run():
    return later()

def later():
    return 2

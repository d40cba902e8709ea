def cb():
    return 1

class Runner:
    def __init__(self, fn):
        self.fn = fn

    def go(self):
        return self.fn()

def main():
    return Runner(cb).go()

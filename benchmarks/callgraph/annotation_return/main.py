class A:
    def f(self):
        return 1

def make() -> A:
    return A()

def run():
    return make().f()

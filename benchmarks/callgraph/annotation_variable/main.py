class A:
    def f(self):
        return 1

def run(factory):
    a: A = factory()
    return a.f()

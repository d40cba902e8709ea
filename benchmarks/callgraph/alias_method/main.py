class A:
    def f(self):
        return 1

def run():
    a = A()
    g = a.f
    return g()

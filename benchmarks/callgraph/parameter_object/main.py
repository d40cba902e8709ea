class A:
    def f(self):
        return 1

def use(a):
    return a.f()

def run():
    return use(A())

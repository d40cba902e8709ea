class A:
    def f(self):
        return 1

def use(a: A):
    return a.f()

class A:
    def f(self):
        return 1

def run():
    a = A()
    return a.f()

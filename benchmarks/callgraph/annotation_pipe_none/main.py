class A:
    def f(self):
        return 1

def use(a: A | None):
    return a.f() if a else None

def logged(fn):
    return fn

class A:
    @logged
    def f(self):
        return 1

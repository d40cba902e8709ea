class A:
    def f(self):
        return self.g()

    def g(self):
        return 1

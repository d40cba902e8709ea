class Base:
    def g(self):
        return 1

class A(Base):
    def f(self):
        return self.g()

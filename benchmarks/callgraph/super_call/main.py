class Base:
    def f(self):
        return 1

class A(Base):
    def f(self):
        return super().f()

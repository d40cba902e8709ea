class Base:
    def f(self):
        return 1

class A(Base):
    pass

def run():
    a = A()
    return a.f()

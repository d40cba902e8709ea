class Base:
    def __init__(self):
        self.x = 1

class A(Base):
    pass

def run():
    return A()

class Base:
    def __init__(self):
        self.ready = True

    def greet(self):
        return "base"


class Middle(Base):
    def greet(self):
        return "middle"


class Leaf(Middle):
    def __init__(self):
        super(Leaf, self).__init__()

    def greet(self):
        return super(Middle, self).greet()

    @classmethod
    def make(cls):
        return super(Leaf, cls).greet


Leaf().greet()

class Meta(type):
    def __init__(cls, name, bases, namespace):
        super().__init__(name, bases, namespace)
        cls.registered = True


class Base(metaclass=Meta):
    pass


class Child(Base):
    pass


def make():
    class Local(Child):
        pass
    return Local


make()

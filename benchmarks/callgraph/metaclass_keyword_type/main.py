class Meta(type):
    def __new__(mcs, name, bases, namespace):
        return super().__new__(mcs, name, bases, namespace)


class Base(metaclass=Meta):
    pass


def make():
    class Child(Base, metaclass=type):
        pass
    return Child


make()

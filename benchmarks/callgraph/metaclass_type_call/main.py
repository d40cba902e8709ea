class Meta(type):
    def __new__(mcs, name, bases, namespace):
        return super().__new__(mcs, name, bases, namespace)


class Model(metaclass=Meta):
    @classmethod
    def derive(cls, name, fields):
        return type(name, (cls,), dict(fields))


Point = Model.derive("Point", {"x": 0})

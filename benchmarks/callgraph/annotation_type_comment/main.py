import typing


class Field:
    def serialize(self, value):
        return value


class Schema:
    registry = None  # type: Field

    def __init__(self):
        self.dump_fields = {}  # type: typing.Dict[str, Field]
        self.default = None  # type: typing.Optional[Field]
        self.loose = {}  # type: ignore

    def dump(self, obj):
        out = {}
        for name, field in self.dump_fields.items():
            out[name] = field.serialize(getattr(obj, name))
        return out

    def first(self, value):
        if self.default is not None:
            return self.default.serialize(value)
        current = None  # type: Field
        return current


s = Schema()
s.dump_fields["a"] = Field()
s.dump(type("O", (), {"a": 1})())
s.default = Field()
s.first(2)

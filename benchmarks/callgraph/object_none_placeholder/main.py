class Field:
    def load(self, value):
        return value


def make(spec):
    return Field()


class Mapping:
    def __init__(self, values=None):
        self.value_field = None
        if values is not None:
            self.value_field = make(values)

    def load(self, data):
        return {k: self.value_field.load(v) for k, v in data.items()}


Mapping("x").load({"a": 1})

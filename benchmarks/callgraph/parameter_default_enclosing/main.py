class Field:
    def load(self, value):
        return value


class Schema:
    fields = [Field()]

    def run(self, data):
        out = []
        for field_obj in self.fields:
            def getter(value, field_obj=field_obj):
                return field_obj.load(value)
            out.append(getter(data))
        return out


def handler():
    return "handled"


def run(handler=handler):
    return handler()


Schema().run(1)
run()

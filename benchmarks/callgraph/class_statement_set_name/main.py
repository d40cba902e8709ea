class Field:
    def __init__(self, default=None):
        self.default = default

    def __set_name__(self, owner, name):
        self.name = name


class Plain:
    def __init__(self, value):
        self.value = value


class Record:
    title = Field()
    size = Field(0)
    note = Plain("not a descriptor")


def build():
    class Local:
        key = Field()
    return Local


build()

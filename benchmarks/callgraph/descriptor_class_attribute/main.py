class Typed:
    def __init__(self, kind):
        self.kind = kind

    def __get__(self, obj, owner=None):
        return obj.__dict__.get("value")

    def __set__(self, obj, value):
        obj.__dict__["value"] = value


class Record:
    value = Typed(int)

    def show(self):
        return self.value


def main():
    record = Record()
    record.value = 3
    return record.show()

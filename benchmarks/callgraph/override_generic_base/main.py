import typing as t

T = t.TypeVar("T")

class Serializer(t.Generic[T]):
    def dumps(self):
        return self.payload()

    def payload(self):
        return 0

class Safe(Serializer[str]):
    def payload(self):
        return 1

def main():
    return Safe().dumps()

from __future__ import annotations


class Field:
    def dump(self, value):
        return value


class Upper(Field):
    def dump(self, value):
        return value.upper()


def ensure_instance(cls_or_instance):
    if isinstance(cls_or_instance, type):
        return cls_or_instance()
    return cls_or_instance


class List(Field):
    def __init__(self, inner: Field | type):
        self.inner = ensure_instance(inner)

    def dump(self, value):
        return [self.inner.dump(each) for each in value]


List(Upper()).dump(["a"])

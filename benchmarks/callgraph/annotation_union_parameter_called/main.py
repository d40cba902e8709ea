from __future__ import annotations


class Field:
    def __init__(self):
        self.name = None


class Upper(Field):
    pass


def ensure(cls_or_instance: Field | type):
    if isinstance(cls_or_instance, type):
        return cls_or_instance()
    return cls_or_instance


ensure(Upper)
ensure(Field())

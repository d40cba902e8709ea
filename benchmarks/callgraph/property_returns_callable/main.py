class And:
    def __init__(self, check):
        self.check = check

    def __call__(self, value):
        return self.check(value)


def positive(value):
    return value > 0


class Field:
    @property
    def validate_all(self):
        return And(positive)

    def validate(self, value):
        return self.validate_all(value)


Field().validate(3)

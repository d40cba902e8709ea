class Length:
    def __call__(self, value):
        return len(value) > 0


class Email:
    def __call__(self, value):
        return "@" in value


class And:
    def __init__(self, *validators, error=None):
        self.validators = validators
        self.error = error

    def __call__(self, value):
        for validator in self.validators:
            validator(value)
        return value


And(Length(), Email())("a@b")

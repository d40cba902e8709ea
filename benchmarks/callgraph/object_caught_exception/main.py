class ValidationError(Exception):
    def __init__(self, messages):
        super().__init__(messages)
        self.messages = messages

    def normalized(self):
        return {"_schema": self.messages}


class Timeout(Exception):
    def normalized(self):
        return {"_timeout": True}


def check(value):
    if value < 0:
        raise ValidationError("negative")
    if value > 100:
        raise Timeout()
    return value


def load(value):
    try:
        return check(value)
    except ValidationError as error:
        return error.normalized()


def load_any(value):
    try:
        return check(value)
    except (ValidationError, Timeout) as error:
        return error.normalized()


load(-1)
load_any(-2)
load_any(1000)

def quiet(error):
    return None


def loud(error):
    raise error


def fail():
    raise ValueError("no")


def run(action, on_error=quiet):
    try:
        return action()
    except ValueError as error:
        return on_error(error)


class Guard:
    def __init__(self, handler=quiet, label=None):
        self.handler = handler
        self.label = label

    def __call__(self, error):
        return self.handler(error)


def check(value, strict=False):
    return bool(value) if strict else value


run(fail)
Guard()(ValueError("x"))
check(1)

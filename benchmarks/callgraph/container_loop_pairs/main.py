class Arg:
    def process(self, value):
        return value


def ready():
    return True


def steady():
    return False


HANDLERS = {"ready": ready, "steady": steady}


def run(values):
    args = [Arg(), Arg()]
    for index, arg in enumerate(args):
        arg.process(values[index])
    for arg, value in zip(args, values):
        arg.process(value)


def dispatch():
    for name, handler in HANDLERS.items():
        handler()
    for handler in HANDLERS.values():
        handler()


run([1, 2])
dispatch()

class Constant:
    def __init__(self, func):
        self.name = func.__name__

    def __get__(self, obj, owner=None):
        return 42


def constant(func):
    return Constant(func)


class Settings:
    @constant
    def answer(self):
        return 0

    def double(self):
        return self.answer * 2


def main():
    return Settings().double()

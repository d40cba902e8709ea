class Cached:
    def __init__(self, func):
        self.func = func

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        return self.func(obj)


class Page:
    @Cached
    def title(self):
        return "t"

    def render(self):
        return self.title.upper()


def main():
    return Page().render()

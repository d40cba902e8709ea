class Mixin:
    def load(self):
        return 1

class Core:
    def go(self):
        return self.load()

    def load(self):
        return 0

class Both(Mixin, Core):
    pass

def main():
    return Core().go() + Both().go()

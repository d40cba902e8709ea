class C:
    def __init__(self):
        self.x = 1

    @classmethod
    def create(cls):
        return cls()

    def run(self):
        return self.x

def main():
    return C.create().run()

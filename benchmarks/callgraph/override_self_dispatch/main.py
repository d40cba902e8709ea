class Base:
    def run(self):
        return self.step()

    def step(self):
        return 0

class Fast(Base):
    def step(self):
        return 1

def main():
    return Base().run() + Fast().run()

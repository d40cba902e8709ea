class Box:
    @property
    def size(self):
        return 3

    def grow(self):
        return self.size + 1

def main():
    box = Box()
    return box.size

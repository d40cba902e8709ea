class Bag:
    def __iter__(self):
        return iter([])

def run():
    for x in Bag():
        pass

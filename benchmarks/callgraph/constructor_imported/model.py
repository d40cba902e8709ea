class Item:
    def __init__(self):
        self.n = 0

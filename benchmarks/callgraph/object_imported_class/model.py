class Store:
    def save(self):
        pass

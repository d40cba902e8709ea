class Signer:
    def __init__(self, key):
        self.key = key

class Serializer:
    signer = Signer

    def make(self):
        return self.signer("k")

def main():
    return Serializer().make()

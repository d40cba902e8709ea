import typing as t

class Signer:
    def sign(self):
        return 1

class Serializer:
    signer: t.Type[Signer] = Signer

    def make(self):
        return self.signer().sign()

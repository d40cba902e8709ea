class A:
    @classmethod
    def make(cls):
        return cls.build()

    @classmethod
    def build(cls):
        return None

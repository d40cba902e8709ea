class A:
    @staticmethod
    def s():
        return 1

def run():
    return A.s()

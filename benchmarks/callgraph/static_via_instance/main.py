class C:
    @staticmethod
    def s():
        return 1

def main():
    obj = C()
    return obj.s()

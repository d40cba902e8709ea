class A:
    def f(self):
        return 1

def run():
    return A().f()

class A:
    def __init__(self):
        self.a = 1

class B(A):
    def __init__(self):
        super().__init__()

def main():
    return B()

class Stack:
    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)

    def __repr__(self):
        return "Stack"


class Named(Stack):
    def __str__(self):
        return "named"


def describe(stack: Stack):
    if bool(stack):
        return str(stack)
    return hash(stack)


def main(named: Named):
    return str(named), describe(Stack()), len(Stack)

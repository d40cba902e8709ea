class Oops(Exception):
    def __init__(self):
        super().__init__("oops")

def run():
    raise Oops

from shapes import Square

def run():
    Square.unit()

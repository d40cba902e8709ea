from model import Item

def run():
    return Item()

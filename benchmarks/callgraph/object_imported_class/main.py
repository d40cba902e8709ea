from model import Store

def run():
    store = Store()
    store.save()

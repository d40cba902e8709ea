def g():
    pass

def h():
    pass

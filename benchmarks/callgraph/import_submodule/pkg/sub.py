def work():
    pass

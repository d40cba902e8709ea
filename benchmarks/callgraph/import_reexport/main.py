from pkg import work

def run():
    work()

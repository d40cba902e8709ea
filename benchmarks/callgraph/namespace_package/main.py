from ns.tools import work

def run():
    work()

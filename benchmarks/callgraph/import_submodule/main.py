import pkg.sub

def run():
    pkg.sub.work()

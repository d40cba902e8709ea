from pkg.sub.mod import f

def run():
    return f()

def f():
    class Local:
        def m(self):
            return 1
    return Local().m()

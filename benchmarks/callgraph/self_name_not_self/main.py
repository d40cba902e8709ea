class A:
    def f(this):
        return this.g()

    def g(this):
        return 1

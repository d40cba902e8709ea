def helper():
    return 1

class A:
    def f(self, helper):
        return helper()

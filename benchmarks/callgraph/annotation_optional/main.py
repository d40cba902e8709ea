from typing import Optional

class A:
    def f(self):
        return 1

def use(a: Optional[A] = None):
    if a is not None:
        return a.f()

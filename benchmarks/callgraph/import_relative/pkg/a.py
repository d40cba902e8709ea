from .b import g
from . import b

def f():
    g()
    b.h()

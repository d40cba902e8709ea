from functools import partial


class InstanceProperty(property):
    def __init__(self, fget=None, fset=None, fdel=None, doc=None, classval=None):
        self.classval = classval
        property.__init__(self, fget=fget, fset=fset, fdel=fdel, doc=doc)

    def __get__(self, obj, type=None):
        if obj is None:
            return self.classval
        return property.__get__(self, obj, type)


def instanceproperty(fget=None, classval=None):
    if fget is None:
        return partial(instanceproperty, classval=classval)
    return InstanceProperty(fget=fget, classval=classval)


class Box:
    """A box."""

    def __init__(self, value):
        self._value = value

    @instanceproperty
    def value(self):
        return self._value

    @instanceproperty(classval=__doc__)
    def __doc__(self):
        return "a box of " + repr(self._value)

    def show(self):
        return self.value, self.__doc__


Box(1).show()

class Trace(list):
    def cut(self, start):
        return Trace(self[start:])

    def keep(self, rule):
        return Trace(filter(rule, self))


def visible(entry):
    return entry > 0


def shorten(trace: Trace):
    short = trace.cut(1)
    if short:
        short = short.cut(1)
        short = short.keep(visible)
    return short


shorten(Trace([1, 2, 3]))

def pad_left(width, s):
    return s.rjust(width)


def pad_right(width, s):
    return s.ljust(width)


def choose(strings, alignment):
    if alignment == "right":
        padfn = pad_left
    else:
        padfn = pad_right
    return strings, padfn


def align(strings, alignment):
    strings, padfn = choose(strings, alignment)
    return [padfn(10, s) for s in strings]


align(["a"], "right")

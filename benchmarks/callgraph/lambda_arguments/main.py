def shout(x):
    return str(x).upper()


def whisper(x):
    return str(x).lower()


def make(cb):
    return lambda x: cb(x)


def run():
    f = make(shout)
    # whisper is the lambda's argument, not make's: cb is still shout
    return f(whisper)


run()

class Base:
    def __init__(self, handler, label="base"):
        self.handler = handler
        self.label = label

    def fire(self):
        return self.handler(self.label)


class Child(Base):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)


def shout(text):
    return text.upper()


def whisper(text):
    return text.lower()


def run(callback, value):
    return callback(value)


def forward(*args):
    return run(*args)


def forward_keywords(**kwargs):
    return run(**kwargs)


Child(shout).fire()
Child(handler=whisper).fire()
forward(shout, "a")
forward_keywords(callback=whisper, value="b")

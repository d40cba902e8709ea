class Stream:
    def read(self):
        return "x"


class Tokenizer:
    """A state machine: each state sets the next one; iteration runs whatever is set."""

    def __init__(self):
        self.state = self.data_state
        self.stream = None

    def open(self):
        self.stream = Stream()

    def data_state(self):
        self.state = self.tag_state
        return True

    def tag_state(self):
        self.state = self.end_state
        return self.stream.read() != ""

    def end_state(self):
        return False

    def run(self):
        while self.state():
            pass


def main():
    tokenizer = Tokenizer()
    tokenizer.open()
    tokenizer.run()

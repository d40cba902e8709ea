class Reader:
    def read(self):
        return "data"


class Writer:
    def write(self, data):
        return len(data)


def open_pair():
    return Reader(), Writer()


def copy():
    source, sink = open_pair()
    sink.write(source.read())


copy()

class Span:
    def __init__(self, start, stop):
        self.start = start
        self.stop = stop

    def __bool__(self):
        return self.stop > self.start

    def __hash__(self):
        if self:
            return hash((self.start, self.stop))
        return hash(None)


class Queue:
    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)

    def drain(self):
        while self:
            self.items.pop()


def empty(span: Span):
    return not span


def pending(queue: Queue):
    return "busy" if queue else "idle"


hash(Span(1, 3))
q = Queue()
q.items.append(1)
q.drain()
empty(Span(2, 2))
pending(q)

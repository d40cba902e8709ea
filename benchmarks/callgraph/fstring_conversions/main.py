class Point:
    def __init__(self, x):
        self.x = x

    def __repr__(self):
        return "Point(%r)" % (self.x,)


class Labelled(Point):
    def __str__(self):
        return "labelled"


def show(p: Point, q: Labelled):
    return f"{p} / {q!s} / {q!r} / {p.x}"


show(Point(1), Labelled(2))

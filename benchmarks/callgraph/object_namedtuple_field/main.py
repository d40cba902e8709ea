from collections import namedtuple
from functools import partial

Format = namedtuple("Format", ["row", "line"])


def plain_row(cells):
    return " ".join(cells)


def latex_row(cells, sep):
    return sep.join(cells)


def rule(width):
    return "-" * width


FORMATS = {
    "plain": Format(row=plain_row, line=rule),
    "latex": Format(row=partial(latex_row, sep=" & "), line=None),
}


def build_row(cells, rowfmt):
    return rowfmt(cells)


def render(cells, fmt):
    out = [build_row(cells, fmt.row)]
    if fmt.line:
        out.append(fmt.line(len(cells)))
    return out


def table(cells, tablefmt="plain"):
    tablefmt = FORMATS.get(tablefmt, FORMATS["plain"])
    return render(cells, tablefmt)


table(["a"])
table(["a"], "latex")

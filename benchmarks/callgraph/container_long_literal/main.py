from collections import namedtuple

Format = namedtuple("Format", ["row", "line"])


def plain_row(cells):
    return " ".join(cells)


def grid_row(cells):
    return "| " + " | ".join(cells) + " |"


def html_row(cells):
    return "".join("<td>%s</td>" % c for c in cells)


def latex_row(cells):
    return " & ".join(cells) + r" \\"


def rule(width):
    return "-" * width


def double_rule(width):
    return "=" * width


# A registry far longer than one line: the entries near its end matter as much as the first.
FORMATS = {
    "plain": Format(row=plain_row, line=None),
    "simple": Format(row=plain_row, line=rule),
    "grid": Format(row=grid_row, line=rule),
    "fancy_grid": Format(row=grid_row, line=double_rule),
    "html": Format(row=html_row, line=None),
    "unsafehtml": Format(row=html_row, line=None),
    "latex": Format(row=latex_row, line=None),
    "latex_booktabs": Format(row=latex_row, line=double_rule),
}


class Csv:
    def write(self, rows):
        return "\n".join(",".join(r) for r in rows)


class Tsv:
    def write(self, rows):
        return "\n".join("\t".join(r) for r in rows)


class Json:
    def write(self, rows):
        return repr(rows)


class Yaml:
    def write(self, rows):
        return "\n".join("- " + repr(r) for r in rows)


WRITERS = [Csv, Tsv, Json, Yaml, Csv, Tsv, Json, Yaml, Csv, Tsv, Json, Yaml, Csv, Tsv, Json, Yaml, Csv, Tsv, Json,
           Yaml, Csv, Tsv, Json, Yaml, Csv, Tsv, Json, Yaml, Csv, Tsv, Json, Yaml, Csv, Tsv, Json, Yaml, Csv, Tsv,
           Json, Yaml, Csv, Tsv, Json, Yaml]


def render(cells, fmt):
    out = [fmt.row(cells)]
    if fmt.line:
        out.append(fmt.line(len(cells)))
    return out


def table(cells, name):
    return render(cells, FORMATS[name])


def export(rows):
    out = []
    for writer in WRITERS:
        out.append(writer().write(rows))
    return out


for name in ("plain", "simple", "grid", "fancy_grid", "html", "latex", "latex_booktabs"):
    table(["a", "b"], name)
export([["a", "b"]])

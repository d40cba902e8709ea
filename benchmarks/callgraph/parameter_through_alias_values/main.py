def plain(cells):
    return " ".join(cells)


def fancy(cells):
    return "| " + " | ".join(cells) + " |"


def emit_basic(lines, cells, rowfmt):
    lines.append(rowfmt(cells))


def emit_each(lines, cells, rowfmt):
    for cell in cells:
        lines.append(rowfmt([cell]))


def render(cells, one_per_line, rowfmt):
    # Whichever function the name holds gets the same arguments.
    if one_per_line:
        emit = emit_each
    else:
        emit = emit_basic
    lines = []
    emit(lines, cells, rowfmt)
    return lines


render(["a", "b"], False, plain)
render(["a", "b"], True, plain)
render(["a", "b"], False, fancy)
render(["a", "b"], True, fancy)

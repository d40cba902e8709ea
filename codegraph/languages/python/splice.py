"""Getting code out of model answers, and putting it into the target file.

Models return prose around code, markdown fences, several blocks, truncated blocks and empty
answers. `code_from_answer` picks the block that defines the wanted symbol (else the longest),
and trims a truncated tail back to the last line that parses. `splice` replaces the symbol's
definition in the file (a top-level function or class, or `Class.method`) or appends it.
"""

from __future__ import annotations

import re
import textwrap

from tree_sitter import Node

from ..base import Spliced
from .extract import _PARSER

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)


def _parses(code: str) -> bool:
    return not _PARSER.parse(code.encode()).root_node.has_error


def _defines(code: str, name: str) -> bool:
    leaf = name.rpartition(".")[2]
    return re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(leaf)}\b", code, re.M) is not None


def _statement_ends(code: str) -> tuple[bool, list[int]]:
    """(parses, the end rows of complete statements): one parse and one walk of the tree."""
    root = _PARSER.parse(code.encode()).root_node
    if not root.has_error:
        return True, []
    ends, stack = [], [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if (kind.endswith("_statement") or kind.endswith("definition")) and not node.has_error:
            ends.append(node.end_point[0])
            continue  # its insides end no later than it does
        stack.extend(node.children)
    return False, ends


def _trim_truncated(code: str, max_cuts: int = 12) -> str:
    """Cut a truncated answer back to code that parses (a model cut off mid-statement).

    Each cut keeps the text up to the end of the last complete statement before the final line,
    so a few parses suffice: linear in the answer's length, whatever its size."""
    lines = code.rstrip().split("\n")
    for _ in range(max_cuts):
        parses, ends = _statement_ends("\n".join(lines))
        if parses:
            return "\n".join(lines)
        earlier = [row for row in ends if row < len(lines) - 1]
        if not earlier:
            return ""
        lines = lines[: max(earlier) + 1]
    return ""


def code_from_answer(answer: str, symbol: str) -> str | None:
    """The code for `symbol` in a model's answer, or None when there is none."""
    if not answer or not answer.strip():
        return None
    blocks = [body for lang, body in _FENCE.findall(answer) if lang.lower() in ("", "python", "py", "python3")]
    if not blocks:
        # no fence: take from the first def/class/import/decorator line to the end
        m = re.search(r"^(?:@|def |async def |class |from |import )", answer, re.M)
        if not m:
            return None
        blocks = [answer[m.start():]]
    blocks = [textwrap.dedent(b).strip("\n") for b in blocks if b.strip()]
    if not blocks:
        return None
    defining = [b for b in blocks if _defines(b, symbol)]
    chosen = max(defining or blocks, key=len)
    if not _parses(chosen):
        trimmed = _trim_truncated(chosen)
        chosen = trimmed if trimmed.strip() and _defines(trimmed, symbol) else chosen
    return chosen + "\n"


def _find(root: Node, symbol: str) -> Node | None:
    """The definition node (decorators included) of `name` or `Class.name` at top level."""
    parts = symbol.split(".")
    scope = root
    node = None
    for depth, part in enumerate(parts):
        node = None
        body = scope if scope.type in ("module", "block") else scope.child_by_field_name("body")
        if body is None:
            return None
        for child in body.named_children:
            inner = child
            if child.type == "decorated_definition":
                inner = child.child_by_field_name("definition")
            if inner is not None and inner.type in ("function_definition", "class_definition"):
                name = inner.child_by_field_name("name")
                if name is not None and name.text.decode() == part:
                    node = child
                    scope = inner
                    break
        if node is None:
            return None
    return node


def splice(source: str, symbol: str, code: str) -> Spliced:
    """Replace (or add) `symbol`'s definition in `source` with `code`.

    Import lines at the top of `code` that the file lacks go to the file's import block, so a
    model may answer with the imports its code needs.
    """
    code_lines = code.rstrip("\n").split("\n")
    imports = []
    while code_lines and re.match(r"^(from\s+\S+\s+import\s|import\s)", code_lines[0]):
        imports.append(code_lines.pop(0))
    while code_lines and not code_lines[0].strip():
        code_lines.pop(0)
    lines = source.split("\n")
    missing = [line for line in imports if line.strip() not in {l.strip() for l in lines}]
    tree = _PARSER.parse(source.encode())
    node = _find(tree.root_node, symbol)
    if node is not None:
        start, end = node.start_point[0], node.end_point[0]
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        body = textwrap.indent(textwrap.dedent("\n".join(code_lines)), indent).split("\n")
        body = [line if line.strip() else "" for line in body]
        new_lines = lines[:start] + body + lines[end + 1 :]
        first = start + 1
    elif "." in symbol:
        owner = _find(tree.root_node, symbol.rpartition(".")[0])
        if owner is None:
            raise ValueError(f"{symbol}: class {symbol.rpartition('.')[0]} is not in the target file")
        end = owner.end_point[0]
        body = textwrap.indent(textwrap.dedent("\n".join(code_lines)), "    ").split("\n")
        new_lines = lines[: end + 1] + [""] + body + lines[end + 1 :]
        first = end + 3
    else:
        while lines and not lines[-1].strip():
            lines.pop()
        body = textwrap.dedent("\n".join(code_lines)).split("\n")
        new_lines = lines + ["", ""] + body + [""]
        first = len(lines) + 3
    last = first + len(body) - 1
    added: tuple[int, ...] = ()
    if missing:
        at = _import_insert_line(tree.root_node)
        new_lines = new_lines[:at] + missing + new_lines[at:]
        first += len(missing)
        last += len(missing)
        added = tuple(range(at + 1, at + 1 + len(missing)))
    return Spliced("\n".join(new_lines), first, last, added)


def _import_insert_line(root: Node) -> int:
    """0-based line after the module docstring and the existing top-level imports."""
    line = 0
    for child in root.named_children:
        if child.type in ("import_statement", "import_from_statement", "future_import_statement"):
            line = child.end_point[0] + 1
        elif child.type == "expression_statement" and line == 0 and child.named_children and \
                child.named_children[0].type == "string":
            line = child.end_point[0] + 1
        elif child.type != "comment":
            break
    return line


def definition_of(text: str, symbol: str) -> str:
    """`symbol`'s definition in `text` (decorators included) at its own indentation, or ""."""
    node = _find(_PARSER.parse(text.encode()).root_node, symbol)
    if node is None:
        return ""
    return " " * node.start_point[1] + text.encode()[node.start_byte:node.end_byte].decode()


def import_insert_line(text: str) -> int:
    """0-based line of `text` where an import goes: after the docstring and the imports there."""
    return _import_insert_line(_PARSER.parse(text.encode()).root_node)

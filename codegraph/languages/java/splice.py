"""Getting Java code out of model answers, and putting it into the target file.

A task's symbol is a top-level type (`Cart`) or a member of one (`Cart.total`, `Cart.Cart` for
its constructors). `code_from_answer` picks the ```java block that declares it (else the longest);
`splice` drops the answer's `package` line (its licence header goes to a file without one),
moves its `import` lines to the file's imports, and
replaces the declaration (a member: the overload with the same parameter types, else the first
of that name) or adds it: a type at the end of the file, a member before its class's closing
brace. A Javadoc comment right above a replaced declaration goes when the answer brings its own.
"""

from __future__ import annotations

import re
import textwrap

from tree_sitter import Node

from ..base import Spliced
from .extract import _PARSER

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)
_TYPES = ("class_declaration", "interface_declaration", "enum_declaration", "record_declaration",
          "annotation_type_declaration")
_MEMBERS = ("method_declaration", "constructor_declaration", "compact_constructor_declaration")
_IMPORT_LINE = re.compile(r"^\s*import\s+(static\s+)?[\w.]+(\.\*)?\s*;\s*$")
_PACKAGE_LINE = re.compile(r"^\s*package\s+[\w.]+\s*;\s*$")
_START = re.compile(r"^(?:package |import |@|/\*\*|(?:(?:public|protected|private|abstract|final|static|sealed|"
                    r"non-sealed|strictfp)\s+)*(?:class|interface|enum|record)\s)", re.M)


def _declares(code: str, symbol: str) -> bool:
    leaf = symbol.rpartition(".")[2]
    if "." in symbol:  # a member: `name(` after a type or modifiers, not a call (no `.` or `new` before it)
        return re.search(rf"(?<![.\w])(?<!new ){re.escape(leaf)}\s*\([^;{{}}]*\)\s*(?:throws[^{{;]*)?\{{", code) is not None
    return re.search(rf"\b(?:class|interface|enum|record|@interface)\s+{re.escape(leaf)}\b", code) is not None


def code_from_answer(answer: str, symbol: str) -> str | None:
    """The code for `symbol` in a model's answer, or None when there is none."""
    if not answer or not answer.strip():
        return None
    blocks = [body for lang, body in _FENCE.findall(answer) if lang.lower() in ("", "java")]
    if not blocks:
        m = _START.search(answer)
        if not m:
            return None
        blocks = [answer[m.start():]]
    blocks = [textwrap.dedent(b).strip("\n") for b in blocks if b.strip()]
    if not blocks:
        return None
    declaring = [b for b in blocks if _declares(b, symbol)]
    return max(declaring or blocks, key=len) + "\n"


def _name(node: Node) -> str:
    name = node.child_by_field_name("name")
    return name.text.decode() if name is not None else ""


def _parameter_types(node: Node) -> list[str]:
    params = node.child_by_field_name("parameters")
    if params is None:
        return []
    out = []
    for param in params.named_children:
        kind = param.child_by_field_name("type")
        if kind is not None:
            out.append(re.sub(r"\s+", "", kind.text.decode()) + ("..." if param.type == "spread_parameter" else ""))
        elif param.type == "spread_parameter":
            out.append(re.sub(r"\s+", "", param.named_children[-2].text.decode() if len(param.named_children) > 1
                              else param.text.decode()))
    return out


def _type_named(root: Node, name: str) -> Node | None:
    for child in root.named_children:
        if child.type in _TYPES and _name(child) == name:
            return child
    return None


def _members(owner: Node, name: str) -> list[Node]:
    body = owner.child_by_field_name("body")
    if body is None:
        return []
    found = []
    for child in body.named_children:
        if child.type == "enum_body_declarations":
            found += [c for c in child.named_children if c.type in _MEMBERS and _name(c) == name]
        elif child.type in _MEMBERS and _name(child) == name:
            found.append(child)
    return found


def _first_declaration(code: str) -> Node | None:
    """The type or member the answer declares (its first), parsed alone or inside a class."""
    root = _PARSER.parse(code.encode()).root_node
    for child in root.named_children:
        if child.type in _TYPES or child.type in _MEMBERS:
            return child
    wrapped = _PARSER.parse(("class __Answer {\n" + code + "\n}").encode()).root_node
    owner = _type_named(wrapped, "__Answer")
    body = owner.child_by_field_name("body") if owner is not None else None
    return next((c for c in body.named_children if c.type in _MEMBERS), None) if body is not None else None


def _find(root: Node, symbol: str, code: str | None = None) -> Node | None:
    """`symbol`'s declaration: a top-level type, or `Type.member` (the overload `code` declares
    when it has the same parameter types, else the first of that name)."""
    owner_name, _, member = symbol.partition(".")
    owner = _type_named(root, owner_name)
    if owner is None or not member:
        return owner
    candidates = _members(owner, member)
    if not candidates:
        return None
    if code is not None:
        answer = _first_declaration(code)
        if answer is not None:
            wanted = _parameter_types(answer)
            same = [c for c in candidates if _parameter_types(c) == wanted]
            if same:
                return same[0]
    return candidates[0]


def _with_javadoc(node: Node) -> Node:
    """The Javadoc comment right above `node`, if any, else the node."""
    before = node.prev_named_sibling
    if before is not None and before.type == "block_comment" and before.text.startswith(b"/**") and \
            before.end_point[0] >= node.start_point[0] - 1:
        return before
    return node


def _split(code: str) -> tuple[list[str], list[str], list[str], list[str]]:
    """(import lines, the rest, the header, the import block as written) of an answer: what comes
    before its last `import` or `package` declaration is not the declaration; the comments above
    a package line are its header (a licence), which a file without one takes; a file without
    imports takes the answer's block with its groups (the blank lines a build's style may check)."""
    lines = code.rstrip("\n").split("\n")
    imports, last, header, start = [], -1, [], None
    for child in _PARSER.parse(code.encode()).root_node.children:
        if child.type == "import_declaration":
            imports.append(re.sub(r"\s+", " ", child.text.decode()).strip())
            start = child.start_point[0] if start is None else start
            last = child.end_point[0]
        elif child.type == "package_declaration":
            header = lines[:child.start_point[0]] if last < 0 else []
            last = child.end_point[0]
        elif child.type not in ("line_comment", "block_comment"):
            break
    if last < 0:  # a member alone may not parse as a file: its leading import lines by their shape
        while last + 1 < len(lines) and (_IMPORT_LINE.match(lines[last + 1]) or _PACKAGE_LINE.match(lines[last + 1])
                                         or not lines[last + 1].strip()):
            last += 1
            if _IMPORT_LINE.match(lines[last]):
                imports.append(lines[last].strip())
    rest = lines[last + 1:]
    while rest and not rest[0].strip():
        rest.pop(0)
    block = lines[start:last + 1] if start is not None else imports
    return imports, rest, header, block


def splice(source: str, symbol: str, code: str) -> Spliced:
    """Replace (or add) `symbol`'s declaration in `source` with `code`; the answer's imports the
    file lacks join the file's imports."""
    imports, code_lines, header, written = _split(code)
    lines = source.split("\n")
    have = {re.sub(r"\s+", " ", l.strip()) for l in lines}
    missing = list(dict.fromkeys(i for i in imports if re.sub(r"\s+", " ", i) not in have))
    root = _PARSER.parse(source.encode()).root_node
    node = _find(root, symbol, "\n".join(code_lines))
    body_text = textwrap.dedent("\n".join(code_lines))
    if node is not None:
        start_node = _with_javadoc(node) if body_text.lstrip().startswith("/**") else node
        start, end = start_node.start_point[0], node.end_point[0]
        prefix = lines[start][: start_node.start_point[1]]
        suffix = lines[end][node.end_point[1]:]
        indent = prefix if not prefix.strip() else ""
        body = textwrap.indent(body_text, indent).split("\n")
        body = [line if line.strip() else "" for line in body]
        if prefix.strip():
            body[0] = prefix + body[0].lstrip()
        if suffix.strip():
            body[-1] += suffix
        new_lines = lines[:start] + body + lines[end + 1:]
        first = start + 1
    elif "." in symbol:
        owner = _type_named(root, symbol.partition(".")[0])
        if owner is None:
            raise ValueError(f"{symbol}: type {symbol.partition('.')[0]} is not in the target file")
        close = owner.end_point[0]
        indent = re.match(r"\s*", lines[owner.start_point[0]]).group(0) + "    "
        body = [line if line.strip() else "" for line in textwrap.indent(body_text, indent).split("\n")]
        head, closing = lines[close][: owner.end_point[1] - 1], lines[close][owner.end_point[1] - 1:]
        if head.strip():  # `class A { int x; }` on one line: the brace goes on a line of its own
            new_lines = lines[:close] + [head.rstrip(), ""] + body + [closing.lstrip()] + lines[close + 1:]
            first = close + 3
        else:
            new_lines = lines[:close] + [""] + body + lines[close:]
            first = close + 2
    else:
        while lines and not lines[-1].strip():
            lines.pop()
        body = body_text.split("\n")
        new_lines = lines + ([""] if lines else []) + body + [""]
        first = len(lines) + (2 if lines else 1)
    last = first + len(body) - 1
    added: tuple[int, ...] = ()
    if missing:
        at = _import_insert_line(_PARSER.parse("\n".join(new_lines).encode()).root_node)
        block = missing
        if not any(c.type == "import_declaration" for c in root.named_children):
            block = written if len(missing) == len(imports) else missing
            block = ([""] if at > 0 else []) + block  # after the package line: one blank line between
        new_lines = new_lines[:at] + block + new_lines[at:]
        first += len(block)
        last += len(block)
        added = tuple(at + 1 + i for i, line in enumerate(block) if _IMPORT_LINE.match(line))
    first_child = next(iter(root.named_children), None)
    if header and first_child is not None and first_child.type not in ("line_comment", "block_comment"):
        new_lines = header + new_lines  # the file had no header: the answer's (a licence a build may check)
        first, last, added = first + len(header), last + len(header), tuple(a + len(header) for a in added)
    return Spliced("\n".join(new_lines), first, last, added)


def _import_insert_line(root: Node) -> int:
    """0-based line after the package declaration and the imports there."""
    line = 0
    for child in root.named_children:
        if child.type in ("package_declaration", "import_declaration"):
            line = child.end_point[0] + 1
        elif child.type not in ("line_comment", "block_comment"):
            break
    return line


def definition_of(text: str, symbol: str) -> str:
    """`symbol`'s declaration in `text` (annotations included) at its own indentation, or ""."""
    node = _find(_PARSER.parse(text.encode()).root_node, symbol)
    if node is None:
        return ""
    return " " * node.start_point[1] + text.encode()[node.start_byte:node.end_byte].decode()


def import_insert_line(text: str) -> int:
    """0-based line of `text` where an import goes: after the package line and the imports."""
    return _import_insert_line(_PARSER.parse(text.encode()).root_node)

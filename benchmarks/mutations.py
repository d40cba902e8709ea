"""Edits of real code made mechanically, the kinds a model makes while it fixes code: a call
that runs another function, arguments swapped, a value, base, default or stored attribute that
names another thing, a method or a module's function or class renamed, a parameter added, an annotation or a keyword argument
naming another class or function, a decorator or an imported name dropped. Each kind finds its candidates with `ast` and takes one, chosen by a hash of the file's
path (no choice made here by hand); the edit replaces text on one line, so the other lines stay
where they were. update_replay's --mutations replays them against a rebuild."""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator


@dataclass(frozen=True)
class Edit:
    """Replace line[start:end] (characters) of the 0-based line with text."""

    kind: str
    line: int
    start: int
    end: int
    text: str


def _chars(line: str, offset: int) -> int:
    """ast's column (UTF-8 bytes) as a character index."""
    return len(line.encode()[:offset].decode(errors="ignore"))


class _Module:
    """The module's names that an edit may swap one for another."""

    def __init__(self, tree: ast.Module, lines: list[str]) -> None:
        self.tree, self.lines = tree, lines
        self.functions = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        self.classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)] + [
            a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names
            if a.name != "*" and (a.asname or a.name)[:1].isupper()]
        self.methods = {n.name: [m.name for m in n.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
                        for n in tree.body if isinstance(n, ast.ClassDef)}

    def one_line(self, node: ast.AST) -> bool:
        return getattr(node, "lineno", None) is not None and node.lineno == node.end_lineno

    def span(self, node: ast.AST) -> tuple[int, int, int]:
        line = self.lines[node.lineno - 1]
        return node.lineno - 1, _chars(line, node.col_offset), _chars(line, node.end_col_offset)

    def other(self, name: str, pool: list[str]) -> str | None:
        return next((n for n in pool if n != name), None)

    def renamed(self, kind: str, node: ast.Name, pool: list[str]) -> Edit | None:
        other = self.other(node.id, pool) if node.id in pool else None
        if other is None or not self.one_line(node):
            return None
        line, start, end = self.span(node)
        return Edit(kind, line, start, end, other) if self.lines[line][start:end] == node.id else None


def _swapped(m: _Module, kind: str, names: Iterable[ast.AST]) -> Iterator[Edit]:
    """Each of these names of a function of the module for another function, of a class for another class."""
    for name in names:
        if isinstance(name, ast.Name):
            edit = m.renamed(kind, name, m.functions if name.id in m.functions else m.classes)
            if edit:
                yield edit


def _calls_retargeted(m: _Module) -> Iterator[Edit]:
    """`helper(x)` -> `other_helper(x)`, `Thing(x)` -> `OtherThing(x)`."""
    return _swapped(m, "call retargeted", (n.func for n in ast.walk(m.tree) if isinstance(n, ast.Call)))


def _method_calls_retargeted(m: _Module) -> Iterator[Edit]:
    """`self.a(x)` -> `self.b(x)`, b another method of the class."""
    for klass in (n for n in m.tree.body if isinstance(n, ast.ClassDef)):
        methods = m.methods[klass.name]
        for node in ast.walk(klass):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
                    and func.attr in methods and m.one_line(func):
                other = m.other(func.attr, methods)
                line, _start, end = m.span(func)
                start = end - len(func.attr)
                if other and m.lines[line][start:end] == func.attr:
                    yield Edit("method call retargeted", line, start, end, other)


def _arguments_swapped(m: _Module) -> Iterator[Edit]:
    """`f(a, b)` -> `f(b, a)`: two names or dotted names passed side by side."""
    simple = (ast.Name, ast.Attribute)
    for node in ast.walk(m.tree):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and all(isinstance(a, simple) for a in node.args[:2]) \
                and m.one_line(node.args[0]) and m.one_line(node.args[1]) and node.args[0].lineno == node.args[1].lineno:
            line, start, first_end = m.span(node.args[0])
            _, second_start, end = m.span(node.args[1])
            text = m.lines[line]
            first, second = text[start:first_end], text[second_start:end]
            if first != second:
                yield Edit("arguments swapped", line, start, end, second + text[first_end:second_start] + first)


def _values_renamed(m: _Module) -> Iterator[Edit]:
    """`handler = on_save` -> `handler = on_load`: a name bound to another function or class."""
    return _swapped(m, "value renamed", (n.value for n in ast.walk(m.tree) if isinstance(n, ast.Assign)))


def _bases_changed(m: _Module) -> Iterator[Edit]:
    """`class A(Base)` -> `class A(Other)`."""
    for node in ast.walk(m.tree):
        if isinstance(node, ast.ClassDef) and node.bases and isinstance(node.bases[0], ast.Name):
            edit = m.renamed("base changed", node.bases[0], [c for c in m.classes if c != node.name])
            if edit:
                yield edit


def _methods_renamed(m: _Module) -> Iterator[Edit]:
    """`def save(self)` -> `def save_renamed(self)` in a class."""
    for klass in (n for n in ast.walk(m.tree) if isinstance(n, ast.ClassDef)):
        for method in (n for n in klass.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            line = m.lines[method.lineno - 1]
            at = line.find(f"def {method.name}(")
            if at >= 0:
                start = at + 4
                yield Edit("method renamed", method.lineno - 1, start, start + len(method.name), method.name + "_renamed")


def _definitions_renamed(m: _Module) -> Iterator[Edit]:
    """`def helper(` -> `def helper_renamed(`, `class Thing` -> `class Thing_renamed`, at module level:
    what other modules import by that name is gone."""
    for node in m.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            line = m.lines[node.lineno - 1]
            word = "class " if isinstance(node, ast.ClassDef) else "def "
            at = line.find(f"{word}{node.name}")
            if at >= 0:
                start = at + len(word)
                yield Edit("definition renamed", node.lineno - 1, start, start + len(node.name), node.name + "_renamed")


def _parameters_added(m: _Module) -> Iterator[Edit]:
    """`def f(a, b=1)` -> `def f(a, b=1, added=helper)`: positional parameters only, on one line."""
    for node in ast.walk(m.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or not args.args:
            continue
        parts = [*args.args, *args.defaults]
        if any(p.lineno != node.lineno or p.end_lineno != node.lineno for p in parts):
            continue
        line = m.lines[node.lineno - 1]
        after = max(_chars(line, p.end_col_offset) for p in parts)
        value = next((f for f in m.functions if f != node.name), "None")
        yield Edit("parameter added", node.lineno - 1, after, after, f", added={value}")


def _stored_changed(m: _Module) -> Iterator[Edit]:
    """`self.x = a` -> `self.x = b` in a method, a and b its parameters."""
    for function in (n for n in ast.walk(m.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        names = [a.arg for a in function.args.args if a.arg not in ("self", "cls")]
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Attribute) and isinstance(node.targets[0].value, ast.Name) \
                    and node.targets[0].value.id == "self":
                edit = m.renamed("stored attribute changed", node.value, names)
                if edit:
                    yield edit


def _decorators_dropped(m: _Module) -> Iterator[Edit]:
    """`@staticmethod`, `@classmethod`, `@property` taken off a method (its line left blank)."""
    for klass in (n for n in ast.walk(m.tree) if isinstance(n, ast.ClassDef)):
        for method in (n for n in klass.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
            for decorator in method.decorator_list:
                if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod", "property"):
                    line = m.lines[decorator.lineno - 1]
                    start = _chars(line, decorator.col_offset) - 1
                    if line[start:].rstrip("\r\n") == "@" + decorator.id:
                        yield Edit("decorator dropped", decorator.lineno - 1, start, start + 1 + len(decorator.id), "")


def _imports_dropped(m: _Module) -> Iterator[Edit]:
    """`from a import b, c` -> `from a import b`."""
    for node in ast.walk(m.tree):
        if isinstance(node, ast.ImportFrom) and len(node.names) >= 2 and m.one_line(node):
            line = m.lines[node.lineno - 1]
            last = node.names[-1]
            text = last.name + (f" as {last.asname}" if last.asname else "")
            end = _chars(line, node.end_col_offset)
            at = line.rfind(", " + text, 0, end)
            if at >= 0 and line[at + 2 + len(text):end].strip() in ("", ")"):
                yield Edit("imported name dropped", node.lineno - 1, at, at + 2 + len(text), "")


def _annotations_changed(m: _Module) -> Iterator[Edit]:
    """`def f(x: Thing)` -> `def f(x: Other)`, and `-> Thing` the same: the types calls go by."""
    for node in ast.walk(m.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for annotation in [a.annotation for a in (*node.args.args, *node.args.kwonlyargs)] + [node.returns]:
                if isinstance(annotation, ast.Name):
                    edit = m.renamed("annotation changed", annotation, m.classes)
                    if edit:
                        yield edit


def _keywords_changed(m: _Module) -> Iterator[Edit]:
    """`run(x, key=helper)` -> `run(x, key=other_helper)`: what a call passes by a keyword."""
    return _swapped(m, "keyword argument changed", (k.value for n in ast.walk(m.tree) if isinstance(n, ast.Call)
                                                   for k in n.keywords))


KINDS: dict[str, Callable[[_Module], Iterator[Edit]]] = {
    "call": _calls_retargeted, "method-call": _method_calls_retargeted, "arguments": _arguments_swapped,
    "value": _values_renamed, "base": _bases_changed, "method-name": _methods_renamed,
    "definition-name": _definitions_renamed,
    "parameter": _parameters_added, "stored": _stored_changed, "decorator": _decorators_dropped,
    "import": _imports_dropped, "annotation": _annotations_changed, "keyword": _keywords_changed,
}


def mutated(text: str, path: str, kinds: tuple[str, ...] = tuple(KINDS)) -> tuple[str, list[Edit]] | None:
    """The module with one edit of each kind that has a candidate (the candidate a hash of the
    path and the kind picks; one edit a line), each kept only if the module still parses; None
    when no edit was made."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.splitlines(keepends=True)
    module = _Module(tree, lines)
    made: list[Edit] = []
    for kind in kinds:
        candidates = [e for e in KINDS[kind](module) if all(e.line != d.line for d in made)]
        if not candidates:
            continue
        pick = int(hashlib.sha256(f"{path}\0{kind}".encode()).hexdigest(), 16) % len(candidates)
        edit = candidates[pick]
        line = lines[edit.line]
        trial = lines[:edit.line] + [line[:edit.start] + edit.text + line[edit.end:]] + lines[edit.line + 1:]
        try:
            ast.parse("".join(trial))
        except (SyntaxError, ValueError):
            continue
        lines = trial
        module.lines = lines
        made.append(edit)
    return ("".join(lines), made) if made else None

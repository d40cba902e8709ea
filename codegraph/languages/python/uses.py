"""Where a file uses names: calls, the methods Python calls without a call expression, and
references (reads, writes, annotations). A mixin of the extractor (extract.py), whose scopes and
rows these fill."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Iterable

from tree_sitter import Node

from ...schema import BY_NAME
from .expressions import ARITHMETIC


@dataclass(slots=True)
class Scope:
    """A module, class or function while its file is extracted: where it starts and ends, and
    what the rows inside it need of it."""
    kind: str  # module | class | function
    qualname: str
    id: int
    start: int
    end: int
    class_scope: "Scope | None" = None  # for a method: the class it belongs to
    self_name: str | None = None  # for a method: its first parameter, the instance
    member_names: set | None = None  # for a class: names defined in the body


CallRow, RefRow = BY_NAME["calls"].row, BY_NAME["refs"].row
_VALUE_LIMIT = 240
_DOTTED_TEXT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*\Z")


def _shorten(value: str | None) -> str | None:
    """An expression as stored: at most _VALUE_LIMIT characters."""
    return value[:_VALUE_LIMIT] + "..." if value is not None and len(value) > _VALUE_LIMIT else value


def _callee_text(src: bytes, start: int, end: int) -> tuple[str, bool]:
    """(the callee as stored, whether that is all of it): whitespace runs as one space, at most
    _VALUE_LIMIT characters. Only a window of the source is read, so that a chain of 20,000 calls
    (each callee spanning all before it) costs linear time, not quadratic."""
    window = 4 * _VALUE_LIMIT
    while True:
        cut = min(end, start + window)
        text = src[start:cut].decode("utf-8", "replace")
        if "\n" in text or "  " in text:
            text = " ".join(text.split())
        if len(text) > _VALUE_LIMIT:
            return text[:_VALUE_LIMIT] + "...", False
        if cut == end:
            return text, True
        window *= 4  # mostly whitespace: read further


class _ArgumentsAfter:
    """A call's argument list found from its callee without asking for the callee's parent:
    tree-sitter finds a parent by walking down from the root, so in a chain of 20,000 calls
    that made extraction quadratic (and so does a query pattern on a call's second child: the
    query keeps a pending match for every call it is inside of). The arguments are the first
    argument list (or generator) after the callee with nothing but blanks, comments and line
    continuations between."""

    def __init__(self, src: bytes, nodes: list[Node]) -> None:
        self.src = src
        self.nodes = sorted(nodes, key=lambda n: n.start_byte)
        self.starts = [n.start_byte for n in self.nodes]

    def __call__(self, callee: Node) -> Node | None:
        at = bisect.bisect_left(self.starts, callee.end_byte)
        if at == len(self.starts):
            return None
        gap = self.src[callee.end_byte:self.starts[at]]
        if gap and _BLANK.sub(b"", gap):
            return None
        return self.nodes[at]


_BLANK = re.compile(rb"(?:\s|\\\r?\n|#[^\n]*)+")


class Uses:
    """Mixed into the extractor."""

    def collect_calls(self, nodes: list[Node], argument_nodes: list[Node], module_scope: Scope,
                      intervals: list[Scope]) -> None:
        out = self.rows["calls"]
        src = self.src
        arguments_after = _ArgumentsAfter(src, argument_nodes)
        for callee, scope in self._sweep(nodes, module_scope, intervals):
            text, whole = _callee_text(src, callee.start_byte, callee.end_byte)
            kind = callee.type
            if kind == "identifier":
                name = text
            elif kind == "attribute":
                if whole:
                    name = text.rpartition(".")[2].strip()
                else:  # the text is cut: the name is the attribute's own
                    attribute = callee.child_by_field_name("attribute")
                    name = src[attribute.start_byte:attribute.end_byte].decode("utf-8", "replace") if attribute else None
            else:
                name = None
            sp, ep = callee.start_point, callee.end_point
            out.append(CallRow(file_id=self.file_id, caller_id=scope.id, caller_qualname=scope.qualname,
                               line=sp[0] + 1, col=sp[1], end_line=ep[0] + 1, end_col=ep[1], callee_text=text,
                               callee_name=name, kind="call", arguments=self.arguments(arguments_after(callee))))

    def arguments(self, node: Node | None) -> list[str]:
        """The arguments of a call as written: `x`, `name=x`, `*xs`, `**kw` (shortened)."""
        if node is None:
            return []
        if node.type != "argument_list":  # f(x for x in y)
            return [_shorten(self.flat(node))]
        return [_shorten(self.flat(c)) for c in node.named_children if c.type != "comment"]

    _IMPLICIT = {"implicit_with": ("__enter__", "__exit__"), "implicit_for": ("__iter__",),
                 "implicit_raise": ("__init__",), "implicit_truth": ("__bool__",)}
    # f"{x}" runs x.__format__ (or else its __str__, or else its __repr__), f"{x!s}" its __str__, f"{x!r}" its __repr__
    _FORMATTED = {"!s": "__str__", "!r": "__repr__", "!a": "__repr__"}
    _COMPARED = {"==": "__eq__", "!=": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}
    _UNARY = {"-": "__neg__", "+": "__pos__", "~": "__invert__"}
    _LITERALS = frozenset({"string", "concatenated_string", "integer", "float", "list", "tuple", "dictionary", "set",
                           "true", "false", "none"})

    def collect_implicit(self, captures: dict, module_scope: Scope, intervals: list[Scope]) -> None:
        """Rows for the methods Python calls without a call expression: the callee text names the
        object and the method (`Ctx().__enter__`), for the resolver to follow like any call.
        A truth test of a name (`if x:`, `not x`, `x or y`) runs its __bool__ (or __len__), an
        f-string's `{x}` its __format__ (or __str__, or __repr__).
        Operators: a comparison of a name or an attribute (`version < other`, `k in self.seen`: the
        left operand's method; `in`, the right one's), a subscript of self or an attribute
        (`self[k]`, `self.cache[k]`; of a plain name it costs more rows than it finds), arithmetic
        and bitwise operators on a name, an attribute or a call (`a | b`: a.__or__; `"x" + expr`:
        expr.__radd__, after a literal only; `~a`, `a += b`)."""
        for capture, methods in self._IMPLICIT.items():
            for node, scope in self._sweep(captures.get(capture, []), module_scope, intervals):
                if node.type == "as_pattern":  # with X as y: the object is X
                    node = next((c for c in node.named_children if c.type != "comment"), None)
                if node is None or (capture == "implicit_raise" and node.type not in ("identifier", "attribute")):
                    continue  # `raise C(...)` is a constructor call, handled as one
                text = self.flat(node)
                if text is not None and len(text) <= _VALUE_LIMIT:
                    self._implicit_rows(node, scope, text, methods)
        for node, scope in self._sweep(captures.get("implicit_format", []), module_scope, intervals):
            text = self.flat(node)
            if text is not None and len(text) <= _VALUE_LIMIT:
                conversion = next((c for c in node.parent.children if c.type == "type_conversion"), None)
                self._implicit_rows(node, scope, text, (self._FORMATTED.get(self.text(conversion), "__format__"),))
        for capture, operations in (("implicit_item", self._item_methods), ("implicit_compare", self._compared),
                                    ("implicit_operand", self._operated)):
            for node, scope in self._sweep(captures.get(capture, []), module_scope, intervals):
                methods = operations(node)
                text = self.flat(node) if methods else None
                if text is not None and len(text) <= _VALUE_LIMIT:
                    self._implicit_rows(node, scope, text, methods)

    def _implicit_rows(self, node: Node, scope: Scope, text: str, methods: Iterable[str]) -> None:
        sp, ep = node.start_point, node.end_point
        for method in methods:
            self.rows["calls"].append(CallRow(
                file_id=self.file_id, caller_id=scope.id, caller_qualname=scope.qualname, line=sp[0] + 1,
                col=sp[1], end_line=ep[0] + 1, end_col=ep[1], callee_text=f"{text}.{method}",
                callee_name=method, kind="implicit", arguments=[]))

    @staticmethod
    def _item_methods(value: Node) -> tuple[str, ...]:
        """`self[k]` reads with __getitem__, `self[k] = v` writes with __setitem__, `self[k] += 1`
        does both, `del self[k]` runs __delitem__."""
        item = value.parent
        holder = item.parent
        if holder is not None and holder.type == "expression_list" and holder.parent is not None \
                and holder.parent.type == "delete_statement":
            holder = holder.parent
        if holder is None:
            return ("__getitem__",)
        if holder.type == "delete_statement":
            return ("__delitem__",)
        left = holder.child_by_field_name("left") if holder.type in ("assignment", "augmented_assignment") else None
        if left is not None and left.id == item.id:
            return ("__getitem__", "__setitem__") if holder.type == "augmented_assignment" else ("__setitem__",)
        if holder.type in ("pattern_list", "tuple_pattern"):  # self[a], self[b] = pair
            return ("__setitem__",)
        return ("__getitem__",)

    def _compared(self, operand: Node) -> tuple[str, ...]:
        """`k in self` runs self's __contains__; `self == other`, `self < other`: self's __eq__,
        __lt__ (the left operand's method is tried first)."""
        siblings = operand.parent.children
        at = next(i for i, c in enumerate(siblings) if c.id == operand.id)
        before = siblings[at - 1].type if at > 0 else None
        after = siblings[at + 1].type if at + 1 < len(siblings) else None
        methods = ("__contains__",) if before in ("in", "not in") else ()
        return methods + ((self._COMPARED[after],) if after in self._COMPARED else ())

    def _operated(self, operand: Node) -> tuple[str, ...]:
        """The method an operator runs on this operand: the left one's `__add__`, the right one's
        reflected `__radd__`, a unary operator's `__neg__`, an augmented assignment's `__iadd__`
        (the resolver falls back to `__add__`: IMPLICIT_PROTOCOLS)."""
        holder = operand.parent
        token = holder.child_by_field_name("operator")
        token = token.type if token is not None else None
        if holder.type == "unary_operator":
            return (self._UNARY[token],) if token in self._UNARY else ()
        if holder.type == "augmented_assignment":
            name = ARITHMETIC.get(token[:-1]) if token else None
            return (f"__i{name}__",) if name else ()
        name = ARITHMETIC.get(token)
        if name is None:
            return ()
        left = holder.child_by_field_name("left")
        if left is not None and left.id == operand.id:
            return (f"__{name}__",)
        # the reflected method runs when the left operand's gives NotImplemented: said for sure only
        # of a builtin literal's (`"(" + expr`); of a name, its own method would run first
        return (f"__r{name}__",) if left is not None and left.type in self._LITERALS else ()

    def _assigned(self, node: Node) -> str | None:
        """What `node = value` assigns, as stored (`a.x = b = v`: v); None for `a.x += 1` and unpacking."""
        parent = node.parent
        if parent is None or parent.type != "assignment" or parent.child_by_field_name("left") != node:
            return None
        right = parent.child_by_field_name("right")
        while right is not None and right.type == "assignment":
            right = right.child_by_field_name("right")
        return _shorten(self.flat(right)) if right is not None else None

    def collect_refs(self, captures: dict, module_scope: Scope, intervals: list[Scope]) -> None:
        """Uses of names that are not calls: every dotted prefix of an attribute chain read or
        written (`a.b.c` reads `a.b`), a bare name used as a value, a name in an annotation."""
        out = self.rows["refs"]
        skip = {n.id for n in captures.get("call", ())}  # the function of a call: a calls row
        kinds = {n.id: "read" for n in captures.get("ref_attribute", ()) if n.id not in skip}
        kinds.update((n.id, "read") for n in captures.get("ref_value", ()))
        kinds.update((n.id, "write") for n in captures.get("ref_write", ()))
        kinds.update((n.id, "annotation") for n in captures.get("ref_annotation", ()))
        nodes = [n for name in ("ref_attribute", "ref_value") for n in captures.get(name, ()) if n.id in kinds]
        nodes += captures.get("ref_annotation", [])  # an annotation's name, when it is not an attribute
        src, file_id, match = self.src, self.file_id, _DOTTED_TEXT.match
        seen: set[int] = set()
        for node, scope in self._sweep(nodes, module_scope, intervals):
            if node.id in seen:
                continue
            seen.add(node.id)
            if node.end_byte - node.start_byte > _VALUE_LIMIT:
                continue  # a chain thousands of names long would store every prefix: quadratic
            text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
            if not match(text):
                continue  # `f(x).y`, `a[0].b`: not a name
            sp = node.start_point
            out.append(RefRow(file_id=file_id, scope_qualname=scope.qualname, line=sp[0] + 1, col=sp[1], text=text,
                              kind=kinds[node.id], value=self._assigned(node) if kinds[node.id] == "write" else None))

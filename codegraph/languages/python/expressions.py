"""What the text of a Python expression says, without resolving anything: the callee of a call,
the elements of a literal, the type argument of an annotation; and the fixed tables of what
builtins and library functions do with their arguments. The Resolver reads code through these."""

from __future__ import annotations

import ast
import builtins
import functools
import io
import re
import warnings
from typing import Iterable

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*\Z")
_SUPER = re.compile(r"super\(\)\.([A-Za-z_][A-Za-z_0-9]*)\Z")
# super(C, self).f, super(C, cls).f: f after C in the MRO of the instance's class
_SUPER_OF = re.compile(r"super\(\s*([A-Za-z_][A-Za-z_0-9.]*)\s*,\s*[A-Za-z_][A-Za-z_0-9]*\s*\)"
                       r"\.([A-Za-z_][A-Za-z_0-9]*)\Z")
BUILTINS = frozenset(dir(builtins))
# The names the builtin types' values answer to: `d.update(x)` may be a dict's and `str(x)` runs
# object's __str__, so no guess gives a project method of one of these names (Resolver.by_name,
# Resolver._member_below).
# The members of each builtin type a value nothing describes may be (by_name): each type's, and all of them.
_BUILTIN_TYPE_MEMBERS = tuple(frozenset(dir(kind)) for kind in (
    object, type, str, bytes, bytearray, memoryview, int, float, complex, bool, list, tuple, dict, set, frozenset,
    range, slice, BaseException, io.TextIOWrapper, io.BufferedReader, io.BufferedWriter, io.BytesIO, io.StringIO))
_BUILTIN_MEMBERS = frozenset().union(*_BUILTIN_TYPE_MEMBERS)
_SELF_KINDS = frozenset({"method", "property", "classmethod"})
_SELF_OR_STATIC = _SELF_KINDS | {"staticmethod"}
_LOCALS = ".<locals>."
# `name` or `name.lower()`: a local getattr may be given as a name (what the update's SQL reads of its value)
CASED_NAME = r"([A-Za-z_][A-Za-z_0-9]*)(?:\.(lower|upper)\(\))?"
# A name written in capitals (`NAME`, `CALL_2`): what getattr of an upper-cased string may give
# (Values._attribute_names, and the update's SQL)
IN_CAPITALS = r"[A-Z0-9_]*[A-Z][A-Z0-9_]*"
# Calls that keep a value in the list, set or dict they are called on, and the argument kept (all
# its elements for extend): Containers._kept_in, resolution.keeping_sites
KEEPING: dict[str, int | None] = {"append": 0, "add": 0, "appendleft": 0, "insert": 1, "setdefault": 1, "extend": 0}
_MAX_DOTS = 24  # longer dotted names come only from following bindings in circles


@functools.lru_cache(maxsize=65536)
def _function_scopes(qualname: str) -> tuple[str, ...]:
    """`m.f.<locals>.g` -> ('m.f.<locals>.g', 'm.f'): the function scopes a name is looked up in."""
    if _LOCALS not in qualname:
        return (qualname,)
    parts = qualname.split(_LOCALS)
    return tuple(_LOCALS.join(parts[: i + 1]) for i in range(len(parts) - 1, -1, -1))


_CALLABLE_KINDS = frozenset({"function", "method", "classmethod", "staticmethod", "property", "nested_function"})
_METHOD_KINDS = frozenset({"method", "classmethod", "staticmethod", "property"})
_CALLABLE_OR_CLASS = _CALLABLE_KINDS | {"class"}
_CALLABLE_CLASS_OR_MODULE = _CALLABLE_KINDS | {"class", "module"}
_MAX_FLOWS = 64  # arguments read per parameter: a function called from everywhere says little
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")
_NAMEISH = re.compile(r"[A-Za-z_]")  # an argument that may name something (not a literal)
_TYPE_OF_CLASS = re.compile(r"(?:typing\.|t\.)?[Tt]ype\[(.+)\]\Z")


# Library functions that call what they are given: qualified name -> the argument positions and
# keywords they call.
_CALLS_ITS_ARGUMENTS: dict[str, tuple] = {
    "builtins.map": (0,), "builtins.filter": (0,), "builtins.sorted": ("key",), "builtins.min": ("key",),
    "builtins.max": ("key",), "functools.reduce": (0,), "itertools.starmap": (0,), "itertools.filterfalse": (0,),
    "itertools.takewhile": (0,), "itertools.dropwhile": (0,), "itertools.groupby": (1, "key"),
    "itertools.accumulate": (1, "func"), "threading.Thread": ("target",), "atexit.register": (0,),
    "functools.update_wrapper": (),
    # a replacement function, sort keys, handlers and finalisers the library calls back
    "re.sub": (1, "repl"), "re.subn": (1, "repl"),
    "heapq.nlargest": ("key",), "heapq.nsmallest": ("key",), "heapq.merge": ("key",),
    **{f"bisect.{name}": ("key",) for name in ("bisect", "bisect_left", "bisect_right", "insort", "insort_left",
                                               "insort_right")},
    "builtins.list.sort": ("key",), "functools.cmp_to_key": (0,), "signal.signal": (1, "handler"),
    "threading.Timer": (1, "function"), "weakref.finalize": (1, "func"), "weakref.ref": (1, "callback"),
    "contextlib.ExitStack.callback": (0, "callback"), "contextlib._BaseExitStack.callback": (0, "callback"),
}
# Builtins and library functions that run a method of their (first) argument: the methods, the
# first one a class has. Those that iterate it call the __next__ of what __iter__ returns too,
# but iter(), which only makes the iterator.
_ITERATES = ("__iter__", "__getitem__")
_TRUTH = ("__bool__", "__len__")
_SHOWN = ("__str__", "__repr__")  # object.__str__ calls repr(); object.__format__ str()
PROTOCOL_CALLS: dict[str, tuple[str, ...]] = {
    "builtins.len": ("__len__",), "builtins.bool": _TRUTH, "builtins.iter": _ITERATES,
    "builtins.next": ("__next__",), "builtins.hash": ("__hash__",), "builtins.repr": ("__repr__",),
    "builtins.str": _SHOWN, "builtins.reversed": ("__reversed__",), "builtins.abs": ("__abs__",),
    "builtins.int": ("__int__", "__index__"), "builtins.float": ("__float__",), "builtins.round": ("__round__",),
    "builtins.format": ("__format__", *_SHOWN), "builtins.dir": ("__dir__",),
    **{f"builtins.{name}": _ITERATES for name in ("list", "tuple", "set", "frozenset", "sorted", "sum", "min", "max",
                                                  "any", "all", "enumerate", "zip")},
    **{name: _ITERATES for name in ("itertools.islice", "itertools.cycle", "itertools.chain", "itertools.tee",
                                    "itertools.pairwise", "itertools.zip_longest", "collections.deque")},
}
ONLY_MAKES_AN_ITERATOR = "builtins.iter"
# The arithmetic and bitwise operators by the name of their methods: `a + b` runs a.__add__ (and
# b.__radd__ when that gives NotImplemented), `a += b` a.__iadd__.
ARITHMETIC = {"+": "add", "-": "sub", "*": "mul", "@": "matmul", "/": "truediv", "//": "floordiv", "%": "mod",
              "**": "pow", "<<": "lshift", ">>": "rshift", "&": "and", "^": "xor", "|": "or"}
# What the methods of implicit calls rows fall back on: a truth test (`if x:`, `not x`) runs
# __bool__ or else __len__, a for loop __iter__ or else __getitem__, an f-string's `{x}`
# __format__, else __str__, else __repr__; `a += b` a.__iadd__, or else a.__add__.
IMPLICIT_PROTOCOLS = {**{names[0]: names for names in (_ITERATES, _TRUTH, _SHOWN, ("__format__", *_SHOWN))},
                      **{f"__i{name}__": (f"__i{name}__", f"__{name}__") for name in ARITHMETIC.values()}}
_ELEMENT_OF = "\x01"  # a value that stands for any element of the expression after it
_ENTERED = "\x02"  # a value that stands for what `with` gets from the expression after it
_CAUGHT = "\x03"  # a value that stands for an instance of the exception class (or classes) after it
_DEFAULT = "\x04"  # a parameter's default: the expression after it, evaluated where the def is
_FORWARDED = "\x05"  # `run(*args, **kwargs)`: "args\x00<index>" or "kwargs\x00<keyword>" of the caller's own

_GOT = re.compile(r"([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)\.get\([^()]*\)\Z")
_GENERIC = re.compile(r"([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)\[.*\]\Z")
_SUBSCRIPTED = re.compile(r"([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)\[[^\[\]]*\]\Z")


def _evaluated(value: str, scope: str) -> tuple[str, str]:
    """A value of a function's local name and the scope its names are looked up in: a default
    (`def f(x=x)`) in the one around the def (the enclosing function, class or module)."""
    if not value.startswith(_DEFAULT):
        return value, scope
    return value[1:], scope.rsplit(_LOCALS, 1)[0] if _LOCALS in scope else scope.rpartition(".")[0]


_COLLECTIONS = frozenset({
    "List", "Sequence", "MutableSequence", "Iterable", "Iterator", "Collection", "Set", "FrozenSet", "AbstractSet",
    "MutableSet", "Tuple", "Generator", "Deque", "list", "set", "frozenset", "tuple", "deque"})
_MAPPINGS = frozenset({"Dict", "Mapping", "MutableMapping", "DefaultDict", "OrderedDict", "ChainMap", "dict",
                       "defaultdict"})


@functools.lru_cache(maxsize=1 << 16)
def _type_arguments(annotation: str) -> tuple[str, tuple[str, ...]]:
    """`t.Dict[str, "Option"]` -> ('Dict', ('str', '"Option"')); ('', ()) when not subscripted."""
    annotation = annotation.strip().strip("'\"")
    name, bracket, rest = annotation.partition("[")
    if not bracket or not rest.endswith("]"):
        return "", ()
    out, depth, start = [], 0, 0
    for i, char in enumerate(rest[:-1]):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            out.append(rest[start:i].strip())
            start = i + 1
    out.append(rest[start:-1].strip())
    return name.rpartition(".")[2], tuple(out)


def _first_type_argument(annotation: str) -> str | None:
    """`t.List["Param"]` -> `"Param"`: the element type of a collection annotation."""
    name, arguments = _type_arguments(annotation)
    return arguments[0] if name in _COLLECTIONS else None


def _item_type_argument(annotation: str) -> str | None:
    """The type of `x[k]` and `x.get(k)` when x is annotated: a mapping's values, a list's elements."""
    name, arguments = _type_arguments(annotation)
    if name in _MAPPINGS and len(arguments) == 2:
        return arguments[1]
    return arguments[0] if name in _COLLECTIONS and name not in ("Tuple", "tuple") else None


def _parsed(text: str) -> ast.expr | None:
    """A stored expression's syntax tree, or None when it does not parse (a shortened one). The
    warnings a string literal's invalid escape gives are the source's business, not the reader's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
            return ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


_LAMBDA_START = re.compile(r"\(*lambda\b")


@functools.lru_cache(maxsize=1 << 14)
def _is_lambda(text: str) -> bool:
    """`lambda x: f(x)` and `(lambda: x)` are lambdas; `(lambda: x)()` is what one returns."""
    return _LAMBDA_START.match(text) is not None and isinstance(_parsed(text), ast.Lambda)


@functools.lru_cache(maxsize=1 << 14)
def _either(text: str) -> tuple[str, ...]:
    """`validator or (lambda x: True)` -> ('validator', 'lambda x: True'), `a if strict else b`
    -> ('a', 'b'): the values an `or` or a conditional expression may give; the text alone
    otherwise."""
    node = _parsed(text) if " or " in text or " else " in text else None
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return tuple(ast.unparse(v) for v in node.values)
    if isinstance(node, ast.IfExp):
        return ast.unparse(node.body), ast.unparse(node.orelse)
    return (text,)


_STAR_ELEMENT = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\[(\d+)\]\Z")  # `args[0]`: an element of a name
_UNPACKED = re.compile(r"(.+\))\[(\d+)\]\Z")  # `f(x)[1]`: how bindings write `a, b = f(x)`


@functools.lru_cache(maxsize=1 << 14)
def _tuple_element(text: str, index: int) -> str | None:
    """`strings, padfn` (a return statement's tuple) and 1 -> `padfn`; None when the text is not
    a tuple of at least index + 1 elements, or the element is starred."""
    node = _parsed(f"({text})")
    if not isinstance(node, ast.Tuple) or index >= len(node.elts) or \
            any(isinstance(e, ast.Starred) for e in node.elts[: index + 1]):
        return None
    return ast.unparse(node.elts[index])


@functools.lru_cache(maxsize=1 << 14)
def _call_parts(text: str) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """A call's positional arguments as written, up to the first starred one, and its keyword
    arguments; both empty when the text is not a call."""
    node = _parsed(text)
    if not isinstance(node, ast.Call):
        return (), ()
    positional = []
    for argument in node.args:
        if isinstance(argument, ast.Starred):
            break
        positional.append(ast.unparse(argument))
    return tuple(positional), tuple((k.arg, ast.unparse(k.value)) for k in node.keywords if k.arg is not None)


@functools.lru_cache(maxsize=1 << 14)
def _getattr_named(text: str) -> tuple[str, str, str | None] | None:
    """`getattr(self, "visit_" + kind, self.generic)` -> ('self', '"visit_" + kind', 'self.generic'):
    the object, the name's expression and the default; None for anything but a getattr call."""
    node = _parsed(text)
    if not (_names_by_getattr(node) and 2 <= len(node.args) <= 3 and not node.keywords
            and not any(isinstance(a, ast.Starred) for a in node.args)):
        return None
    return (ast.unparse(node.args[0]), ast.unparse(node.args[1]),
            ast.unparse(node.args[2]) if len(node.args) == 3 else None)


@functools.lru_cache(maxsize=1 << 14)
def _string_start(text: str) -> tuple[str, bool] | None:
    """The attribute name a string expression gives: ('visit', True) for a plain string, or the
    start every name it may be shares, ('visit_', False), for a string added to something, an
    f-string, a %-format or a str.format starting with text; None for anything else."""
    node = _parsed(text)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format" \
            and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
        start, brace, _ = node.func.value.value.partition("{")  # "_process_{cls}".format(cls=kind)
        return (start, not brace) if start and _IDENTIFIER.match(start) else None
    name = node
    while isinstance(name, ast.BinOp) and isinstance(name.op, (ast.Add, ast.Mod)):
        name = name.left
    if isinstance(name, ast.JoinedStr) and name.values:
        name = name.values[0]
    if isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value:
        start = name.value.split("%", 1)[0] if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) \
            else name.value
        if start and _IDENTIFIER.match(start):
            return start, False
    return None


def _call_arguments(text: str) -> tuple[str, ...]:
    """`cast(T, make())` -> ('T', 'make()')."""
    return _call_parts(text)[0]


def _call_keywords(text: str) -> dict[str, str]:
    """`Format(row=plain_row, line=None)` -> {'row': 'plain_row', 'line': 'None'}."""
    return dict(_call_parts(text)[1])


@functools.lru_cache(maxsize=1 << 16)
def _literal_elements(text: str, calls: bool = False) -> list[str] | None:
    """The element expressions of a literal list, tuple, set or dict (a dict's values) that name
    something (and, with calls, that call something), or None."""
    if not text or text[0] not in "([{":
        return None
    node = _parsed(text)
    if isinstance(node, ast.Dict):
        items = node.values
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = node.elts
    elif isinstance(node, (ast.DictComp, ast.ListComp, ast.SetComp)):  # {k: getattr(self, "on_" + k) for k in K}
        loop = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        item = node.value if isinstance(node, ast.DictComp) else node.elt
        head = item
        while isinstance(head, ast.Attribute):
            head = head.value
        items = [] if isinstance(head, ast.Name) and head.id in loop else [item]  # the loop's own values: unknown
    else:
        return None
    kinds = (ast.Name, ast.Attribute, ast.Call) if calls else (ast.Name, ast.Attribute)
    return [ast.unparse(e) for e in items if isinstance(e, kinds) or _names_by_getattr(e)]


def _pair_values(text: str, calls: bool = False) -> list[str] | None:
    """The second elements of a literal list or tuple of pairs (`[("html", start_html), ...]`: what
    `dict(pairs)` maps to) that name something (and, with calls, that call something); None when
    the text is no such literal."""
    if not text or text[0] not in "([":
        return None
    node = _parsed(text)
    if not isinstance(node, (ast.List, ast.Tuple)) or not all(
            isinstance(e, ast.Tuple) and len(e.elts) == 2 for e in node.elts):
        return None
    kinds = (ast.Name, ast.Attribute, ast.Call) if calls else (ast.Name, ast.Attribute)
    return [ast.unparse(e.elts[1]) for e in node.elts if isinstance(e.elts[1], kinds)]


def _names_by_getattr(node: ast.AST) -> bool:
    """`getattr(obj, "name")`: a call that names a function, as a name does."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"


def _unique(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """First answer per definition, in order."""
    seen: set[str] = set()
    out = []
    for target, how in pairs:
        if target is not None and target not in seen:
            seen.add(target)
            out.append((target, how))
    return out
_OPTIONAL = re.compile(r"(?:typing\.|t\.)?Optional\[(.+)\]\Z")
_NONE_UNION = re.compile(r"\s*\|\s*None\b|\bNone\s*\|\s*")


def _bare_annotation(text: str) -> str:
    """`Optional["C"]`, `C | None`, `'C'` -> `C`: the annotation without its quotes and None."""
    text = text.strip().strip("'\"")
    optional = _OPTIONAL.match(text)
    if optional:
        text = optional.group(1)
    return _NONE_UNION.sub("", text).strip().strip("'\"")


def _union_members(annotation: str) -> list[str]:
    """`Field | type`, `Union[Field, type]` -> ['Field', 'type']; [] for anything else."""
    name, arguments = _type_arguments(annotation)
    if name == "Union":
        members = list(arguments)
    elif "|" in annotation and "[" not in annotation:
        members = annotation.split("|")
    else:
        return []
    return [m.strip().strip("'\"") for m in members]


_NAME_TAIL = re.compile(r"\.([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)\Z")


@functools.lru_cache(maxsize=1 << 16)
def _callee_of(text: str) -> str | None:
    """`pkg.C(a, (b))` -> `pkg.C`: the dotted callee of a call expression whose parentheses are
    its own (not `f(a).g(b)`)."""
    head = _DOTTED_PREFIX.match(text)
    if head is None or not text.endswith(")") or text[head.end():head.end() + 1] != "(":
        return None
    depth = 0
    for i in range(head.end(), len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0 and i != len(text) - 1:
            return None
    return head.group(0)


@functools.lru_cache(maxsize=1 << 16)
def _split_receiver(text: str) -> tuple[str | None, str]:
    """`C(x).f` -> ("C(x)", "f"); `a(b).c.d` -> ("a(b)", "c.d"); `t[k].f` -> ("t[k]", "f")."""
    tail = _NAME_TAIL.search(text)
    if tail is None:
        return None, ""
    receiver = text[: tail.start()]
    return (receiver, tail.group(1)) if receiver.endswith((")", "]")) else (None, "")


_OWN_CLASS = ("type(self)", "self.__class__")
_OWN_CLASS_CALLED = tuple(f"{own}(" for own in _OWN_CLASS)


def _own_class_call(text: str) -> str | None:
    """`type(self)(...)` -> `type(self)`, `self.__class__(...)` -> `self.__class__`: a call of
    the receiver's own class, or None."""
    if not text.startswith(_OWN_CLASS_CALLED):  # most calls: answered without a loop
        return None
    return next((own for own in _OWN_CLASS
                 if text.startswith(f"{own}(") and _callee_of("f" + text[len(own):]) == "f"), None)


_DOTTED_PREFIX = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*")


class ByName(dict):
    """name -> what `answer` gives for it, asked once: one of the resolver's maps over every
    definition, made a name at a time for an update (learning.py)."""

    def __init__(self, answer) -> None:
        super().__init__()
        self.answer = answer

    def __missing__(self, name: str):
        found = self[name] = self.answer(name)
        return found

    def get(self, name: str, default=None):
        found = self[name]
        return found if found else default

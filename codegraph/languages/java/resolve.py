"""What Java names mean, through declared types: the Resolution of Java's files.

Types by the JLS's rules for a simple type name (6.5.5.1, 6.4.1): the member types of the class
and of the classes around it (and those they inherit), the file's single-type imports, the
classes of its package, its on-demand imports, then java.lang. A call's receiver is typed by what
declares it: a local's or parameter's declared type, a field's (inherited ones too), the class a
`new` makes, the return type of the method a call runs, `this`, `super`, `Outer.this`, a cast, a
literal, an operator's result. A method is chosen among its overloads as JLS 15.12.2 says: those
applicable by subtyping and widening, else with boxing, else by variable arity; among them the
most specific (an argument of unknown type excludes nothing). The library layer's classes (the
JDK's API and the dependency jars' as stubs, library.py) are classes as the repository's are, and
an answer that ends there says `library`; names in no layer resolve to their dotted path with
resolution `external`, and the JDK's own types, when a JDK is there (jdk.py), say what its
classes derive from and what its methods return (with --no-libraries too), so that a chain
through them and an overload chosen by them are typed.

Every lookup of the resolver's state is a fact read (`class:p.Foo`, `member:p.Foo#bar`,
`params:...`; _Read, answers kept with the facts they read: _memo), recorded per file in the
`reads` table. An update compares the facts the changed files' rows gave and give now
(JavaResolver.facts) and resolves again the changed files and the files that read a fact that
changed: derived from what resolution read, not from a second copy of its rules.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable

import duckdb
import numpy as np
import pyarrow as pa

from ... import forked
from ...columns import IN_FRESH, IN_GONE, column_lists, concat, extracted, insert_arrow, keep_values, register_values, update_by_id
from ...schema import BY_NAME, LIBRARY_SCHEMA, RESOLVED_TABLES
from ..base import Emit, Resolution
from .extract import _PARSER, plain_type
from .jdk import JdkTypes, jdk_types

RESOLVED_COLUMNS = {name: BY_NAME[name].names("resolve") for name in RESOLVED_TABLES}
FORK_AT = 5_000  # calls of a full build from which a forked copy answers half (gson's 3,000 gained nothing measurable)
_PRIMITIVES = frozenset({"int", "long", "short", "byte", "char", "boolean", "float", "double", "void", "var"})
# java.lang's classes and interfaces (JLS 7.3: every compilation unit imports them on demand)
_JAVA_LANG = frozenset("""Appendable AutoCloseable CharSequence Cloneable Comparable Iterable Readable Runnable
Boolean Byte Character Class ClassLoader Double Enum Float Integer Long Math Number Object Package Process
ProcessBuilder Record Runtime Short StackTraceElement StrictMath String StringBuffer StringBuilder System Thread
ThreadGroup ThreadLocal Throwable Void ArithmeticException ArrayIndexOutOfBoundsException ArrayStoreException
ClassCastException ClassNotFoundException CloneNotSupportedException Exception IllegalAccessException
IllegalArgumentException IllegalMonitorStateException IllegalStateException IndexOutOfBoundsException
InstantiationException InterruptedException NegativeArraySizeException NoSuchFieldException NoSuchMethodException
NullPointerException NumberFormatException ReflectiveOperationException RuntimeException SecurityException
StringIndexOutOfBoundsException UnsupportedOperationException AssertionError Error LinkageError
NoClassDefFoundError OutOfMemoryError StackOverflowError VirtualMachineError Deprecated FunctionalInterface
Override SafeVarargs SuppressWarnings""".split())
_TYPE_VARIABLE = re.compile(r"[A-Z][0-9]?\Z")  # T, E, K, V, T2: a type parameter's name by convention
_OBJECT, _STRING = "java.lang.Object", "java.lang.String"
_LITERALS = {"string_literal": _STRING, "text_block": _STRING, "character_literal": "char", "true": "boolean",
             "false": "boolean", "null_literal": "null", "class_literal": "java.lang.Class"}
# JLS 5.1.2 (widening primitive conversions) and 5.1.7-5.1.8 (boxing and unboxing)
_WIDER = {"byte": ("short", "int", "long", "float", "double"), "short": ("int", "long", "float", "double"),
          "char": ("int", "long", "float", "double"), "int": ("long", "float", "double"),
          "long": ("float", "double"), "float": ("double",)}
_BOXES = {"boolean": "java.lang.Boolean", "byte": "java.lang.Byte", "short": "java.lang.Short",
          "char": "java.lang.Character", "int": "java.lang.Integer", "long": "java.lang.Long",
          "float": "java.lang.Float", "double": "java.lang.Double"}
_UNBOXED = {box: primitive for primitive, box in _BOXES.items()}
# The supertypes of java.lang's value classes (their declarations in the JDK), until a JDK layer says them
_JDK_SUPERTYPES = {
    **{box: ("java.lang.Number", "java.lang.Comparable", "java.io.Serializable", _OBJECT)
       for box in ("java.lang.Byte", "java.lang.Short", "java.lang.Integer", "java.lang.Long", "java.lang.Float",
                   "java.lang.Double")},
    "java.lang.Boolean": ("java.lang.Comparable", "java.io.Serializable", _OBJECT),
    "java.lang.Character": ("java.lang.Comparable", "java.io.Serializable", _OBJECT),
    _STRING: ("java.lang.CharSequence", "java.lang.Comparable", "java.io.Serializable", _OBJECT),
    "java.lang.StringBuilder": ("java.lang.CharSequence", "java.lang.Appendable", "java.io.Serializable", _OBJECT),
    "java.lang.StringBuffer": ("java.lang.CharSequence", "java.lang.Appendable", "java.io.Serializable", _OBJECT),
    "java.lang.Number": ("java.io.Serializable", _OBJECT), "java.lang.Class": (_OBJECT,)}
_MAX_DEPTH = 64  # expressions typed one inside another, at most
_NUMERIC = ("byte", "short", "char", "int", "long", "float", "double")
_FINAL = frozenset({_STRING, "java.lang.StringBuilder", "java.lang.StringBuffer", "java.lang.Class",
                    *_BOXES.values()})  # final classes of java.lang: no other class is one


def _promoted(left: str | None, right: str | None) -> str | None:
    """JLS 5.6: the type binary numeric promotion gives two operands."""
    if left not in _NUMERIC or right not in _NUMERIC:
        return None
    wider = max(_NUMERIC.index(left), _NUMERIC.index(right), _NUMERIC.index("int"))
    return _NUMERIC[wider]


def _bare(type_text: str | None) -> str | None:
    """A type as written without annotations, generic arguments and array brackets."""
    if not type_text:
        return None
    type_text = type_text.partition("|")[0]  # a multi-catch parameter: its first alternative
    text = plain_type(type_text)
    return "".join(text.split()).replace("...", "").replace("[]", "") or None


class _Log:
    """Where the facts read by the answers being made now go (JavaResolver.log), each a
    (`kind:` prefix, key) pair: the set of the file being resolved, or of a cached answer being
    made (_memo); an update resolves a file again when a fact it read changed (JavaResolver.facts)."""

    __slots__ = ("reads", "merged")

    def __init__(self) -> None:
        self.reads: set[tuple[str, object]] | None = None  # (kind prefix, key): the fact `prefix + key`
        self.merged: set[int] = set()  # the cached answers' facts already in `reads` (by the id of their set)

    def into(self, reads: set | None, merged: set[int]) -> None:
        """Record into `reads` from now on."""
        self.reads, self.merged = reads, merged


class _Read(dict):
    """A dict of the resolver's state whose lookups by key (`get`, `[]`, `in`) are facts read;
    with `load`, a key not held yet is first asked of it (JavaResolver._learn_pending), once
    (`asked`: the keys asked already, shared by every dict that loads)."""

    __slots__ = ("prefix", "log", "load", "asked")

    def __init__(self, data: dict, prefix: str, log: _Log) -> None:
        super().__init__(data)
        self.prefix, self.log, self.load, self.asked = prefix, log, None, frozenset()

    def _loaded(self, key) -> bool:
        """Was `key` missing and is it held now?"""
        return self.load is not None and key not in self.asked and self.load(key) and dict.__contains__(self, key)

    def get(self, key, default=None):
        reads = self.log.reads
        if reads is not None:  # (prefix, key): a tuple costs half of a string made here
            reads.add((self.prefix, key))
        return self.peek(key, default)

    def __getitem__(self, key):
        reads = self.log.reads
        if reads is not None:
            reads.add((self.prefix, key))
        if self.load is not None and not dict.__contains__(self, key):
            self._loaded(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key) -> bool:
        reads = self.log.reads
        if reads is not None:
            reads.add((self.prefix, key))
        return dict.__contains__(self, key) or self._loaded(key)

    def peek(self, key, default=None):
        """The value held for `key`, not a fact read (what the answers do not depend on)."""
        found = dict.get(self, key, _ABSENT)
        if found is _ABSENT:
            return dict.__getitem__(self, key) if self._loaded(key) else default
        return found


_ABSENT = object()


class _ReadSet(frozenset):
    """A set of the resolver's state whose membership tests are facts read."""

    def __new__(cls, data, prefix: str, log: _Log):
        out = super().__new__(cls, data)
        out.prefix, out.log = prefix, log
        return out

    def __contains__(self, key) -> bool:
        reads = self.log.reads
        if reads is not None:
            reads.add((self.prefix, key))
        return frozenset.__contains__(self, key)


def _memo(log: _Log, function: Callable) -> Callable:
    """`function` with its answers kept, each with the facts it read: an answer given again from
    the cache records them again for the file that asks."""
    cache: dict = {}

    def run(*args):
        hit = cache.get(args)
        if hit is None:
            outer, merged = log.reads, log.merged
            log.into(set(), set())
            try:
                value = function(*args)
            finally:
                read = log.reads
                log.into(outer, merged)
            hit = cache[args] = (value, read)
        if log.reads is not None and id(hit[1]) not in log.merged:  # each answer's facts once per file
            log.merged.add(id(hit[1]))
            log.reads |= hit[1]
        return hit[0]
    return run


# What the resolver keeps of the graph, each as facts of one kind (JavaResolver.facts, _Read's prefix)
_FACTS = {"classes": "class:", "members": "method:", "type_parameters": "tparams:", "more_bounds": "bounds:",
          "parameters": "params:", "locals": "locals:", "local_classes": "lclass:", "files": "file:",
          "packages": "package:"}


# The state kept under a class's or member's name (_Read.load): a key's rows are in the file of a
# class its dotted head starts with.
_BY_NAME = ("classes", "members", "type_parameters", "more_bounds", "parameters", "local_classes")


class _Pending:
    """The rows of JavaResolver's `later` not learned yet, a file at a time (with the files that
    define a class of the same name: the rows of both make that class, as learning all at once
    would). A file that defines a class the learned state has already, or an earlier source of
    `later` has, is hidden by it, never learned: the repository's `dep.Other` is what `dep.Other`
    means, whenever a lookup comes."""

    def __init__(self, sources: list[dict[str, pa.Table]], known: Callable[[str], bool]) -> None:
        # one chunk each: Arrow's take of a table of several chunks concatenates them first, each
        # time (2.6 ms against 0.08 ms for guava's members; 0.1 s of a one-file update)
        self.tables = {name: concat(name, [source[name] for source in sources], LEARNED[name]).combine_chunks()
                       for name in LEARNED}
        rank: dict[int, int] = {}  # file -> the position of its source
        for position, source in enumerate(sources):
            for file_id in source["classes"].column("file_id").to_pylist():
                rank.setdefault(file_id, position)
        qualnames, scopes, file_ids = column_lists(self.tables["classes"], ("qualname", "scope_qualname", "file_id"))
        self.files_of: dict[str, list[int]] = defaultdict(list)  # class -> the files defining it
        for qualname, file_id in zip(qualnames, file_ids):
            self.files_of[qualname].append(file_id)
        names = frozenset(qualnames)
        self.packages = {q.rpartition(".")[0] for q, scope in zip(qualnames, scopes)
                         if _outer_of(q, scope, names.__contains__) is None}
        hidden: set[int] = set()
        for qualname, listed in self.files_of.items():
            first = -1 if known(qualname) else min(rank[f] for f in listed)
            hidden.update(f for f in listed if rank[f] > first)
        self.group: dict[int, set[int]] = {}  # file -> the files learned with it (those not learned yet)
        self.asked: set[str] = set()  # the keys taken already
        for listed in self.files_of.values():
            listed = [f for f in listed if f not in hidden]
            together = set(listed).union(*(self.group.get(f, ()) for f in listed))
            for file_id in together:
                self.group[file_id] = together
        # each table's row numbers ordered by file (a file's rows in their order), and where each
        # file's are in them: what a file's lookup learns is a gather of its rows alone (the whole
        # tables reordered once cost 0.1 s of a one-file update of guava)
        self.order: dict[str, np.ndarray] = {}
        self.spans: dict[str, dict[int, tuple[int, int]]] = {}
        self.first: dict[int, int] = {}  # file -> its first row in `classes`: the order files are learned in
        for name, table in self.tables.items():
            ids = table.column("file_id").to_numpy(zero_copy_only=False)
            order = self.order[name] = np.argsort(ids, kind="stable")
            files, starts, counts = np.unique(ids[order], return_index=True, return_counts=True)
            self.spans[name] = {f: (start, count) for f, start, count in
                                zip(files.tolist(), starts.tolist(), counts.tolist())}
            if name == "classes":
                self.first = dict(zip(files.tolist(), order[starts].tolist()))

    def take(self, key) -> dict[str, pa.Table] | None:
        """The rows not learned yet that a lookup of `key` may need; None when there are none."""
        self.asked.add(key)  # what its lookup may need is learned from here on
        if not self.group or not isinstance(key, str):
            return None
        head, files = key.split("(", 1)[0], set()
        while head:
            for file_id in self.files_of.get(head, ()):
                files |= self.group.get(file_id, set())
            head = head.rpartition(".")[0]
        return self._take(files) if files else None

    def _take(self, files: set[int]) -> dict[str, pa.Table]:
        for file_id in files:  # a group whole (take's)
            self.group.pop(file_id, None)
        ordered = sorted(files, key=lambda f: self.first.get(f, 0))
        out = {}
        for name, table in self.tables.items():
            spans, order = self.spans[name], self.order[name]
            rows = [order[start:start + count] for start, count in (spans[f] for f in ordered if f in spans)]
            out[name] = table.take(pa.array(np.concatenate(rows) if rows else [], pa.int64()))
        return out


def _outer_of(qualname: str, scope: str | None, known: Callable[[str], bool]) -> str | None:
    """The class a class is declared in, `known` telling the classes: the class it is a member of
    (`p.Outer.Inner`, `p.Outer$1`), or the class of the method it is local to; None at the top of
    its file, whose module may be spelled as a class is (`p.Shop` holds `p.Shop` and `p.Second`)."""
    if scope and "(" in scope:
        if known(scope):
            return scope
        owner = scope[:scope.index("(")].rpartition(".")[0]
        return owner if known(owner) else None
    if scope is not None and known(scope) and qualname.startswith((f"{scope}.", f"{scope}$")):
        return scope
    return None


@dataclass
class _Class:
    qualname: str
    kind: str
    file_id: int
    outer: str | None  # the class it is declared in (for a local or anonymous one, the method's class)
    bases: list[str]  # as written
    method: str | None = None  # for a local or anonymous class, the method whose locals it sees
    members: dict[str, list[tuple]] = field(default_factory=lambda: defaultdict(list))  # name -> member rows


@dataclass
class _File:
    package: str
    single: dict[str, str] = field(default_factory=dict)  # simple name -> imported class
    on_demand: list[str] = field(default_factory=list)  # packages (or classes) imported with *
    static_single: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # member -> classes
    static_on_demand: list[str] = field(default_factory=list)


class JavaResolver:
    def __init__(self, tables: dict[str, pa.Table], jdk: JdkTypes | None = None,
                 library_files: frozenset[int] = frozenset(), later: list[dict[str, pa.Table]] = ()):
        """tables: the state learned now (classes, members, parameters, imports, bindings): the
        files resolved. later: the classes, members, parameters and imports of other files (the
        repository's others in an update, then the library layer's), learned a file at a time the
        first time a lookup could need them (_Pending): a one-file update learns the few classes
        its answers ask about, not all of them. The answers, and the facts they read, are those of
        a resolver that learned them all at once, a class the files resolved define hiding one of
        `later`'s, and one of an earlier source of `later` hiding the next's."""
        self.jdk = jdk  # the JDK's public types, when a JDK is there (jdk.py)
        self.library_files = library_files  # the files of `tables` and `later` that are the library layer's
        self.classes: dict[str, _Class] = {}
        self.members: dict[str, tuple] = {}  # qualname -> (class, name, kind, signature, annotation)
        # a class's or method's type parameters: name -> its first bound as written (None: Object)
        self.type_parameters: dict[str, dict[str, str | None]] = {}
        self.more_bounds: dict[str, dict[str, list[str]]] = {}
        self.parameters: dict[str, list[tuple]] = {}  # owner -> [(position, name, annotation, kind)]
        self.locals: dict[str, dict[str, list[tuple]]] = defaultdict(lambda: defaultdict(list))
        for scope, name, line, annotation, value in zip(*column_lists(
                tables["bindings"], ("scope_qualname", "name", "line", "annotation", "value"))):
            self.locals[scope][name].append((line or 0, annotation, value))
        # local classes by the method that declares them (JLS 14.3): `p.Main$1Step` is `Step` there
        self.local_classes: dict[str, dict[str, str]] = defaultdict(dict)
        self.files: dict[int, _File] = {}
        self.packages: set[str] = set(self._learn(tables))
        later = [source for source in later if source["classes"].num_rows]
        pending = _Pending(later, self.classes.__contains__) if later else None
        if pending is not None:
            self.packages |= pending.packages
        self._busy: set[str] = set()  # classes whose bases are being resolved
        self._depth = 0  # expressions being typed, one inside another
        # From here on every lookup of the state is a fact read (_Log); answers per build are
        # kept with the facts they read (_memo), and go with the resolver.
        self.log = _Log()
        for klass in self.classes.values():
            klass.members = _Read(klass.members, f"member:{klass.qualname}#", self.log)
        for name, prefix in _FACTS.items():
            held = getattr(self, name)
            setattr(self, name, _ReadSet(held, prefix, self.log) if isinstance(held, set) else
                    _Read({k: dict(v) if isinstance(v, defaultdict) else v for k, v in held.items()}, prefix, self.log))
        if pending is not None:
            load = functools.partial(self._learn_pending, pending)
            for name in _BY_NAME:
                getattr(self, name).load, getattr(self, name).asked = load, pending.asked
        self.resolve_type = _memo(self.log, self._resolve_type)
        self.supertypes = _memo(self.log, self._supertypes)
        self.ancestors = _memo(self.log, self._ancestors)
        self.parameter_types = _memo(self.log, self._parameter_types)

    def _learn(self, tables: dict[str, pa.Table]) -> set[str]:
        """Learn the classes, members, type parameters, parameters and imports of some files (all
        of each class's own rows among them); the packages of their top-level classes."""
        classes = tables["classes"]
        known = functools.partial(dict.__contains__, self.classes)
        qualnames = column_lists(classes, ("qualname",))[0]
        for qualname, kind, file_id, bases in zip(qualnames, *column_lists(classes, ("kind", "file_id", "bases"))):
            dict.__setitem__(self.classes, qualname, _Class(qualname, kind, file_id, None, list(bases or ())))
        for qualname, scope in zip(qualnames, column_lists(classes, ("scope_qualname",))[0]):
            klass = dict.__getitem__(self.classes, qualname)
            klass.outer = _outer_of(qualname, scope, known)
            klass.method = scope if scope and "(" in scope else None
        learned = [dict.__getitem__(self.classes, q) for q in dict.fromkeys(qualnames)]  # a name written twice: the last
        for klass, name, qualname, kind, signature, annotation in zip(*column_lists(
                tables["members"], ("class_qualname", "name", "qualname", "kind", "signature", "annotation"))):
            held = dict.get(self.classes, klass)
            if held is not None:
                held.members[name].append((qualname, kind, signature, annotation))
                dict.__setitem__(self.members, qualname, (klass, name, kind, signature, annotation))
        for name in ("classes", "members"):
            for qualname, listed in zip(*column_lists(tables[name], ("qualname", "type_parameters"))):
                if listed:
                    dict.__setitem__(self.type_parameters, qualname, {
                        p.split()[0]: p.partition(" extends ")[2].split("&")[0].strip() or None for p in listed})
                    # an intersection's other bounds (JLS 4.9): their members are the variable's too
                    more = {p.split()[0]: [b.strip() for b in p.partition(" extends ")[2].split("&")[1:] if b.strip()]
                            for p in listed}
                    dict.__setitem__(self.more_bounds, qualname, {k: v for k, v in more.items() if v})
        owners = set()
        for owner, position, name, kind, annotation in zip(*column_lists(
                tables["parameters"], ("owner_qualname", "position", "name", "kind", "annotation"))):
            dict.setdefault(self.parameters, owner, []).append((position, name, annotation, kind))
            owners.add(owner)
        for owner in owners:
            dict.__getitem__(self.parameters, owner).sort()
        packages = set()
        for klass in learned:
            named = _LOCAL_CLASS.search(klass.qualname) if klass.method is not None else None
            if named is not None:
                dict.setdefault(self.local_classes, klass.method, {}).setdefault(named.group(1), klass.qualname)
            if klass.outer is None:  # a top-level class: its file's package
                package = klass.qualname.rpartition(".")[0]
                dict.setdefault(self.files, klass.file_id, _File(package))
                packages.add(package)
        for file_id, module, name, level, star, target in zip(*column_lists(
                tables["imports"], ("file_id", "imported_module", "name", "level", "is_star", "bound_name"))):
            here = dict.setdefault(self.files, file_id, _File(""))
            if level:
                (here.static_on_demand.append(module) if star else here.static_single[name].append(module))
            elif star:
                here.on_demand.append(module)
            else:
                here.single[name] = f"{module}.{name}"
        return packages

    def _learn_pending(self, pending: _Pending, key) -> bool:
        """Learn the files of `later` that may hold a row keyed `key` (a class, member or method:
        the files of the classes its dotted head starts with); did any come? Learning reads no
        fact: the state it adds was there all along."""
        tables = pending.take(key)
        if tables is None:
            return False
        reads, merged = self.log.reads, self.log.merged
        self.log.into(None, set())
        try:
            self._learn(tables)
        finally:
            self.log.into(reads, merged)
        for qualname in tables["classes"].column("qualname").to_pylist():
            klass = dict.__getitem__(self.classes, qualname)
            if not isinstance(klass.members, _Read):
                klass.members = _Read(klass.members, f"member:{qualname}#", self.log)
        return True

    def facts(self) -> dict[str, object]:
        """Every fact this resolver's state holds, keyed as answers read them (_FACTS; a class's
        members by name): a resolver of some files' rows before and after their change differs
        where an answer of another file that read them may differ."""
        out: dict[str, object] = {}
        for name, prefix in _FACTS.items():
            held = getattr(self, name)
            for key in (held if isinstance(held, frozenset) else dict.keys(held)):
                value = True if isinstance(held, frozenset) else dict.__getitem__(held, key)
                if isinstance(value, _Class):
                    for member, rows in dict.items(value.members):
                        out[f"member:{key}#{member}"] = _frozen(rows)
                    value = (value.kind, value.file_id, value.outer, value.bases, value.method)
                elif isinstance(value, _File):
                    value = vars(value)
                out[f"{prefix}{key}"] = _frozen(value)
        return out

    def in_library(self, qualname: str) -> bool:
        """Is this class or member (`a.C`, `a.C.m(int)`, `a.C.<init>`) the library layer's? Not a
        fact a file's answer reads: the layer changes only with a rebuild."""
        if not self.library_files:
            return False
        head = qualname.split("(")[0]
        for candidate in (head, head.rpartition(".")[0]):
            klass = self.classes.peek(candidate)
            if klass is not None:
                return klass.file_id in self.library_files
        return False

    def _class_around(self, scope: str | None) -> str | None:
        """The class a declaration sits in: its scope, or the class of the method it is in."""
        if scope in self.classes:
            return scope
        if scope and "(" in scope:
            owner = scope[:scope.index("(")].rpartition(".")[0]
            return owner if owner in self.classes else None
        return None

    # -- types ------------------------------------------------------------------------------
    def file_of(self, klass: str) -> _File:
        found = self.classes.get(klass)
        return self.files.get(found.file_id, _File("")) if found is not None else _File("")

    def _resolve_type(self, written: str | None, context: str | None, file_id: int | None = None
                      ) -> tuple[str, str] | None:
        """(the class a type name means where `context` (a class) uses it, or, without one, at
        the top of the file `file_id`; how: local | import | external); None for a primitive, a
        type variable or what cannot be told."""
        name = _bare(written)
        if not name or name in _PRIMITIVES:
            return None
        head, _, rest = name.partition(".")
        found = self._simple_type(head, context, file_id)
        if found is None:
            if name in self.classes:
                return name, "import"
            if rest and head[:1].islower():  # a package: a qualified name outside the repository
                return name, "external"
            return None
        qualname, how = found
        for part in rest.split(".") if rest else ():
            inner = self._member_type(qualname, part) if how != "external" else None
            qualname = inner if inner is not None else f"{qualname}.{part}"
        return qualname, how

    def _simple_type(self, name: str, context: str | None, file_id: int | None) -> tuple[str, str] | None:
        klass = context
        while klass is not None:  # member types of the class and those around it, inherited ones too
            if klass.rpartition(".")[2] == name and klass in self.classes:
                return klass, "local"
            inner = self._member_type(klass, name)
            if inner is not None:
                return inner, "local"
            klass = self.classes[klass].outer if klass in self.classes else None
        here = self.file_of(context) if context else self.files.get(file_id, _File(""))
        if name in here.single:
            target = here.single[name]
            return (target, "import") if target in self.classes else (target, "external")
        if f"{here.package}.{name}" in self.classes or (not here.package and name in self.classes):
            return (f"{here.package}.{name}" if here.package else name), "local"
        for package in here.on_demand:
            if f"{package}.{name}" in self.classes:
                return f"{package}.{name}", "import"
        if self.jdk is not None:  # on-demand imports of the JDK's packages, then java.lang (JLS 7.3)
            for package in (*here.on_demand, "java.lang"):
                if f"{package}.{name}" in self.jdk.supertypes:
                    return f"{package}.{name}", "external"
        elif name in _JAVA_LANG:
            return f"java.lang.{name}", "external"
        outside = [p for p in here.on_demand if p not in self.packages and p not in self.classes
                   and (self.jdk is None or not p.startswith(("java.", "javax.")))]
        if len(outside) == 1 and not _TYPE_VARIABLE.match(name):  # the one package it can come from
            return f"{outside[0]}.{name}", "external"
        return None

    def _member_type(self, klass: str, name: str) -> str | None:
        for ancestor in self.ancestors(klass):
            if f"{ancestor}.{name}" in self.classes:
                return f"{ancestor}.{name}"
        return None

    def _supertypes(self, klass: str) -> tuple[str, ...]:
        """The classes a class names as its bases, resolved where it is declared (the class itself
        excluded: JLS 8.1.4 resolves a superclass name in the scope around the class)."""
        found = self.classes.get(klass)
        if found is None and self.jdk is not None:  # a JDK class, an interface's bases and Object
            return self.jdk.supertypes.get(klass, ())
        if found is None or klass in self._busy:  # a cycle of bases (broken code) ends here
            return ()
        self._busy.add(klass)
        out = []
        try:
            for base in found.bases:
                resolved = self.resolve_type(base, found.outer, found.file_id)
                if resolved is not None and resolved[0] != klass:
                    out.append(resolved[0])
        finally:
            self._busy.discard(klass)
        if not out and found.kind == "enum":
            out.append("java.lang.Enum")
        return tuple(out)

    def _ancestors(self, klass: str) -> tuple[str, ...]:
        """The class, then its superclasses and interfaces, breadth first, each once."""
        out, queue, seen = [], [klass], {klass}
        while queue and len(out) < 256:
            current = queue.pop(0)
            out.append(current)
            for base in self.supertypes(current):
                if base not in seen:
                    seen.add(base)
                    queue.append(base)
        return tuple(out)

    # -- members -----------------------------------------------------------------------------
    def methods(self, klass: str, name: str) -> tuple[list[tuple], str | None]:
        """The methods named `name` a class has (its own first, then inherited), or, when the
        search leaves the repository, the outside class where it went on. The classes it extends
        come before the interfaces (JLS 8.4.8: a class's method hides an interface's of the same
        signature), the repository's interfaces before the library's (javac names those among
        abstract methods alike)."""
        found: list[tuple] = []
        outside = None
        for ancestor in sorted(self.ancestors(klass), key=self._lookup_rank):
            held = self.classes.get(ancestor)
            if held is None:  # the JDK class that declares it, or the first class nothing here knows
                known = self.jdk is not None and ancestor in self.jdk.supertypes
                if not known or name in self.jdk.methods.get(ancestor, ()):
                    outside = outside or ancestor
                continue
            own = {m[0][m[0].rfind("("):] for m in found}
            found += [m for m in held.members.get(name, ()) if m[1] in ("method", "staticmethod", "constructor")
                      and m[0][m[0].rfind("("):] not in own]  # an override hides what it overrides
        return found, outside

    def _lookup_rank(self, klass: str) -> int:
        held = self.classes.get(klass)
        if held is None or held.kind not in ("interface", "annotation"):
            return 0
        return 2 if held.file_id in self.library_files else 1

    def field(self, klass: str, name: str) -> tuple[str, str] | None:
        """(the field's qualname, its declared type) in the class or what it inherits."""
        for ancestor in self.ancestors(klass):
            held = self.classes.get(ancestor)
            for member in held.members.get(name, ()) if held is not None else ():
                if member[1] in ("class_attribute", "instance_attribute"):
                    return member[0], member[3]
        return None

    def _declaring(self, name: str, context: str | None, method: str | None) -> tuple[str, str | None] | None:
        """(the method or class that declares the type parameter named so where the code is, the
        class its bounds are written in): the method's, then its class's and those around it (JLS 6.3)."""
        if method is not None and name in self.type_parameters.get(method, ()):
            return method, self.members[method][0] if method in self.members else context
        klass = context
        while klass is not None:
            if name in self.type_parameters.get(klass, ()):
                return klass, klass
            held = self.classes.get(klass)
            if held is not None and held.method is not None and name in self.type_parameters.get(held.method, ()):
                return held.method, held.outer
            klass = held.outer if held is not None else None
        return None

    def _bound(self, name: str, context: str | None, method: str | None) -> tuple[str | None, str | None] | None:
        """(the first bound, the class it is written in) of a type parameter named so where the code is."""
        found = self._declaring(name, context, method)
        return (self.type_parameters[found[0]][name], found[1]) if found is not None else None

    def other_bounds(self, written: str | None, context: str | None, method: str | None) -> list[str]:
        """The classes of a type variable's bounds after its first (`T extends A & B`: B)."""
        bare = _bare(plain_type(written or ""))
        found = self._declaring(bare, context, method) if bare and "." not in bare else None
        if found is None:
            return []
        types = [self.type_string(b, found[1], method=method) for b in self.more_bounds.get(found[0], {}).get(bare, ())]
        return [t for t in types if t]

    def type_string(self, written: str | None, context: str | None, file_id: int | None = None,
                    method: str | None = None, _bounds: int = 0) -> str | None:
        """A declared type as the resolver compares types: a primitive (`int`), a class's
        qualname, each with its array brackets (`double[]`, `p.Foo[][]`); a type variable as its
        erasure (JLS 4.6: its first bound, else Object), read in `method` when it has its own;
        None when it cannot be told."""
        if not written:
            return None
        text = plain_type(written.partition("|")[0])
        dims = "[]" * (text.count("[]") + text.count("..."))
        bare = _bare(text)
        if not bare or bare == "var":
            return None
        if bare in _PRIMITIVES:
            return bare + dims
        bound = self._bound(bare, context, method) if "." not in bare and _bounds < 8 else None
        if bound is not None:  # a type variable shadows a class of its name
            erased = self.type_string(bound[0], bound[1], file_id, method, _bounds + 1) if bound[0] else _OBJECT
            return (erased or _OBJECT) + dims
        local = self.local_class(bare, method) if method is not None else None
        if local is not None:
            return local + dims
        found = self.resolve_type(bare, context, file_id)
        if found is not None:
            return found[0] + dims
        return _OBJECT + dims if _TYPE_VARIABLE.match(bare) else None

    def local_class(self, name: str, method: str | None) -> str | None:
        """The local class `name` declared in `method` or in a method around its class, if any."""
        while method is not None and "." not in name:
            found = self.local_classes.get(method, {}).get(name)
            if found is not None:
                return found
            around = self.classes.get(self.members[method][0]) if method in self.members else None
            method = around.method if around is not None else None
        return None

    def _parameter_types(self, method: str) -> list[str | None]:
        owner = self.members[method][0] if method in self.members else None
        return [self.type_string(p[2], owner, method=method) for p in self.parameters.get(method, ())]

    def is_subtype(self, sub: str, sup: str) -> bool:
        """JLS 4.10: a reference type of its supertypes, arrays covariantly; `null` of any reference."""
        if sub == sup:
            return True
        if sub in _PRIMITIVES or sup in _PRIMITIVES:
            return False
        if sub == "null":
            return True
        if sup == _OBJECT:
            return True
        if sub.endswith("[]") or sup.endswith("[]"):
            if sub.endswith("[]") and sup.endswith("[]"):
                inner, outer = sub[:-2], sup[:-2]
                return inner not in _PRIMITIVES and self.is_subtype(inner, outer)
            return sup in ("java.lang.Cloneable", "java.io.Serializable") and sub.endswith("[]")
        return sup in self.ancestors(sub) or sup in _JDK_SUPERTYPES.get(sub, ())

    def convertible(self, argument: str | None, parameter: str | None, phase: int) -> bool:
        """Can a method invocation pass a value of type `argument` for `parameter` (JLS 5.3): by
        identity, widening and subtyping in phase 1, with boxing and unboxing from phase 2 on.
        What the resolver cannot tell does not exclude a method."""
        if argument is None or parameter is None:
            return True
        if argument in _PRIMITIVES and parameter in _PRIMITIVES:
            return argument == parameter or parameter in _WIDER.get(argument, ())
        if argument in _PRIMITIVES:  # boxing, then a supertype of the box
            return phase > 1 and argument in _BOXES and self.is_subtype(_BOXES[argument], parameter)
        if parameter in _PRIMITIVES:  # unboxing, then widening
            unboxed = _UNBOXED.get(argument)
            return phase > 1 and unboxed is not None and (unboxed == parameter or parameter in _WIDER.get(unboxed, ()))
        if parameter in _FINAL:  # nothing but the class itself (or null) is one
            return argument in (parameter, "null")
        if argument not in self.classes and (parameter not in self.classes or self.in_library(parameter)) \
                and argument not in _JDK_SUPERTYPES and argument != "null" and not argument.endswith("[]") \
                and not parameter.endswith("[]") \
                and not (self.jdk is not None and argument in self.jdk.supertypes and parameter in self.jdk.supertypes):
            return True  # a class in no layer, and one outside the repository: how they relate is not known here
        return self.is_subtype(argument, parameter)

    def choose(self, candidates: list[tuple], arguments: list[str], types: list[str | None]) -> tuple | None:
        """The overload a call runs (JLS 15.12.2): the methods applicable by strict or loose
        invocation (phases 1 and 2) for the arguments' types, else by variable arity (phase 3);
        among them the most specific. Arguments of unknown type exclude nothing."""
        count = len(arguments)

        def fits(member: tuple, phase: int) -> bool:
            params = self.parameter_types(member[0])
            spread = bool(self.parameters.get(member[0])) and self.parameters[member[0]][-1][3] == "var-positional"
            if phase < 3 or not spread:
                return len(params) == count and all(self.convertible(t, p, phase) for t, p in zip(types, params))
            fixed, rest = params[:-1], params[-1]
            element = rest[:-2] if rest and rest.endswith("[]") else None
            return count >= len(fixed) and all(self.convertible(t, p, 2) for t, p in zip(types, fixed)) and \
                all(self.convertible(t, element, 2) for t in types[len(fixed):])

        for phase in (1, 2, 3):
            applicable = [m for m in candidates if fits(m, phase)]
            if applicable:
                return self._most_specific(applicable)
        return None

    def _most_specific(self, methods: list[tuple]) -> tuple:
        """JLS 15.12.2.5: the method whose parameter types each method's accept; the first declared
        when none is (javac would call the call ambiguous)."""
        if len(methods) == 1:
            return methods[0]
        def at_least(m1: tuple, m2: tuple) -> bool:
            p1, p2 = self.parameter_types(m1[0]), self.parameter_types(m2[0])
            return len(p1) == len(p2) and all(self.convertible(a, b, 1) for a, b in zip(p1, p2))
        best = [m for m in methods if all(at_least(m, other) for other in methods if other is not m)]
        return best[0] if best else methods[0]

    def _jdk_returns(self, called: str, node, caller: str, klass: str | None, line: int) -> str | None:
        """The type a JDK method a call runs returns: its overload chosen as a project method's is."""
        owner, _, name = called.rpartition(".")
        listed = self.jdk.methods.get(owner, {}).get(name) if self.jdk is not None else None
        if not listed:
            return None
        arguments = node.child_by_field_name("arguments")
        types = self._argument_types([a for a in arguments.named_children if "comment" not in a.type]
                                     if arguments is not None else [], caller, klass, line)
        fitting = [(params, returns) for params, returns in listed if len(params) == len(types)
                   and all(self.convertible(t, p, 2) for t, p in zip(types, params))]
        kinds = {returns for _, returns in fitting or listed}
        found = kinds.pop() if len(kinds) == 1 else None
        return None if found == _OBJECT else found  # `list.get(0)`: a type argument erased, not known

    def returns(self, method: str) -> str | None:
        """The type a method returns, resolved in its class."""
        held = self.members.get(method)
        if held is None or not held[3] or "->" not in held[3]:
            return None
        return self.type_string(held[3].rpartition("->")[2].strip(), held[0], method=method)

    def _returned(self, method: str) -> tuple[str, str | None, str] | None:
        """(the return type as written, its bare name, the declaring class) of a method."""
        held = self.members.get(method)
        if held is None or not held[3] or "->" not in held[3]:
            return None
        written = held[3].rpartition("->")[2].strip()
        return written, _bare(written), held[0]

    def _returns_variable(self, method: str) -> bool:
        """Does the method return a type variable of its own or of its class (`K getKey()`)?"""
        returned = self._returned(method)
        return returned is not None and (returned[1] in self.type_parameters.get(method, ())
                                         or returned[1] in self.type_parameters.get(returned[2], ()))

    def _returns_on(self, method: str, node, caller: str, klass: str | None, line: int) -> str | None:
        """A method that returns its class's type variable (`T get()` in `Box<T>`), called on a
        receiver whose class passes that class a type argument (`AppleBox extends Box<Apple>`):
        the argument (JLS 4.5, 8.4.8). None when the receiver passes none that is known."""
        returned = self._returned(method)
        if returned is None:
            return None
        written, variable, declaring = returned
        if not variable or variable not in self.type_parameters.get(declaring, ()) or \
                variable in self.type_parameters.get(method, ()):
            return None
        holder = node.child_by_field_name("object")
        receiver = self._type_of_node(holder, caller, klass, line) if holder is not None else klass
        if not receiver:
            return None
        bound = self._arguments_of(holder, receiver, caller, klass, line) if holder is not None else {}
        if receiver == declaring and not bound:
            return None
        found = self._passed(receiver, bound, declaring, variable, 0)
        return found + "[]" * written.count("[]") if found else None

    def _arguments_of(self, holder, receiver: str, caller: str, klass: str | None, line: int) -> dict[str, str | None]:
        """The type arguments a receiver named by a variable was declared with, by its class's
        type parameters (`Map.Entry<String, Item> e`: K String, V p.Item; JLS 4.5); a wildcard
        `? extends T` as T; empty for a raw type or another expression."""
        if holder.type != "identifier":
            return {}
        name = _text(holder)
        declared = self._local(name, caller, line)
        written, context = (declared[0], klass) if declared is not None else (None, None)
        if declared is None and klass is not None:
            held = self.field(klass, name)
            written, context = (held[1], self.members[held[0]][0]) if held is not None else (None, None)
        arguments = _type_arguments(written) if written and "<" in written else []
        parameters = list(self.type_parameters.get(receiver, ()))
        if not arguments or len(arguments) != len(parameters):
            return {}
        bound = {}
        for parameter, argument in zip(parameters, arguments):
            argument = argument.removeprefix("?").strip()
            argument = argument.removeprefix("extends").strip() if argument.startswith("extends") else \
                "" if argument.startswith("super") else argument
            bound[parameter] = self.type_string(argument, context, method=caller) if argument else None
        return bound

    def _passed(self, klass: str, bound: dict[str, str | None], declaring: str, variable: str,
                depth: int) -> str | None:
        """The type `klass` (its own type variables bound as `bound` says) passes up its bases
        for `declaring`'s type variable `variable`."""
        if klass == declaring:
            return bound.get(variable)
        held = self.classes.get(klass)
        if held is None or depth > 8:
            return None
        for written in held.bases:
            base = self.resolve_type(written, held.outer, held.file_id)  # where the class is declared, as _supertypes
            if base is None or base[0] == klass or base[0] not in self.classes:
                continue
            names = list(self.type_parameters.get(base[0], ()))
            passed = {}
            for name, argument in zip(names, _type_arguments(written)):
                bare = _bare(argument)
                passed[name] = bound.get(bare) if bare in bound else \
                    self.type_string(argument, klass) if bare not in self.type_parameters.get(klass, ()) else None
            found = self._passed(base[0], passed, declaring, variable, depth + 1)
            if found is not None:
                return found
        return None

    # -- expressions ---------------------------------------------------------------------------
    def type_of(self, text: str, caller: str, klass: str | None, line: int) -> str | None:
        """The type of an expression's value (type_string's form), where `caller` runs it."""
        node = _expression(text)
        return self._type_of_node(node, caller, klass, line) if node is not None else None

    def _type_of_node(self, node, caller: str, klass: str | None, line: int) -> str | None:
        if self._depth >= _MAX_DEPTH:  # `var a = b; var b = a;` (broken code) or a very long chain
            return None
        self._depth += 1
        try:
            return self._typed(node, caller, klass, line)
        finally:
            self._depth -= 1

    def _typed(self, node, caller: str, klass: str | None, line: int) -> str | None:
        kind = node.type
        if kind in _LITERALS:
            return _LITERALS[kind]
        if kind in ("decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal"):
            return "long" if _text(node)[-1:] in "lL" else "int"
        if kind in ("decimal_floating_point_literal", "hex_floating_point_literal"):
            return "float" if _text(node)[-1:] in "fF" else "double"
        if kind == "parenthesized_expression" and node.named_child_count:
            return self._type_of_node(node.named_children[0], caller, klass, line)
        if kind == "this":
            return klass
        if kind == "super":
            bases = self.supertypes(klass) if klass else ()
            return bases[0] if bases else _OBJECT
        if kind in ("cast_expression", "object_creation_expression"):
            return self.type_string(_text(node.child_by_field_name("type")), klass, method=caller)
        if kind == "array_creation_expression":
            element = self.type_string(_text(node.child_by_field_name("type")), klass)
            dims = sum(1 for c in node.children if c.type in ("dimensions_expr", "dimensions"))
            dims += sum(_text(c).count("[]") - 1 for c in node.children if c.type == "dimensions")
            return element + "[]" * max(dims, 1) if element else None
        if kind == "identifier":
            return self._name_type(_text(node), caller, klass, line)
        if kind == "field_access":
            target = node.child_by_field_name("field")
            holder = node.child_by_field_name("object")
            name = _text(target)
            if name == "this":  # Outer.this
                found = self.resolve_type(_text(holder), klass)
                return found[0] if found else None
            owner = self._type_of_node(holder, caller, klass, line) if holder is not None else None
            if owner is None and holder is not None:  # a class named: its static field
                named = self.resolve_type(_text(holder), klass)
                owner = named[0] if named else None
            if owner is not None and owner.endswith("[]"):
                return "int" if name == "length" else None
            held = self.field(owner, name) if owner else None
            if held is None and owner is not None and self.jdk is not None:  # System.out
                return next((self.jdk.fields[a][name] for a in self.ancestors(owner)
                             if name in self.jdk.fields.get(a, ())), None)
            return self.type_string(held[1], self.members[held[0]][0]) if held is not None else None
        if kind == "method_invocation":
            answer = self.resolve_invocation(node, caller, klass, line)
            if answer is not None and answer[1] == "external":
                return self._jdk_returns(answer[0], node, caller, klass, line)
            if answer is None:
                return None
            passed = self._returns_on(answer[0], node, caller, klass, line)
            if passed is not None:
                return passed
            if self.in_library(answer[0]) and self._returns_variable(answer[0]):
                return None  # `entry.getKey()` of a raw Map.Entry, `requireNonNull(x)`: not known, not Object
            return self.returns(answer[0])
        if kind == "array_access":
            array = self._type_of_node(node.child_by_field_name("array"), caller, klass, line)
            return array[:-2] if array and array.endswith("[]") else None
        if kind == "ternary_expression":
            return self._type_of_node(node.child_by_field_name("consequence"), caller, klass, line)
        if kind in ("unary_expression", "update_expression") and node.named_child_count:
            operand = self._type_of_node(node.named_children[-1], caller, klass, line)
            return "boolean" if _text(node).startswith("!") else operand
        if kind == "binary_expression":
            operator = _text(node.child_by_field_name("operator"))
            if operator in ("==", "!=", "<", ">", "<=", ">=", "&&", "||", "instanceof"):
                return "boolean"
            left = self._type_of_node(node.child_by_field_name("left"), caller, klass, line)
            right = self._type_of_node(node.child_by_field_name("right"), caller, klass, line)
            if operator == "+" and _STRING in (left, right):
                return _STRING
            return _promoted(_UNBOXED.get(left, left), _UNBOXED.get(right, right))
        if kind == "instanceof_expression":
            return "boolean"
        if kind == "lambda_expression" or kind == "method_reference":
            return None
        return None

    def _name_type(self, name: str, caller: str, klass: str | None, line: int) -> str | None:
        declared = self._local(name, caller, line)
        if declared is not None:
            annotation, value = declared
            if annotation in (None, "var") and value:
                return self.type_of(value, caller, klass, line)
            return self.type_string(annotation, klass, method=caller)
        scope = klass
        while scope is not None:  # a field of the class or of one around it
            held = self.field(scope, name)
            if held is not None:
                return self.type_string(held[1], self.members[held[0]][0])
            around = self.classes.get(scope)
            if around is not None and around.method is not None:  # a local the class's method captures
                captured = self._local(name, around.method, line)
                if captured is not None:
                    annotation, value = captured
                    if annotation in (None, "var") and value:
                        return self.type_of(value, around.method, around.outer, line)
                    return self.type_string(annotation, around.outer, method=around.method)
            scope = around.outer if around is not None else None
        return None

    def _local(self, name: str, caller: str, line: int) -> tuple[str | None, str | None] | None:
        """(declared type, value) of a local or parameter named so where the code at `line` reads it."""
        bound = [b for b in self.locals.get(caller, {}).get(name, ()) if b[0] <= line]
        if bound:
            _, annotation, value = max(bound, key=lambda b: b[0])
            return annotation, value
        for _, param, annotation, _ in self.parameters.get(caller, ()):
            if param == name:
                return annotation, None
        return None

    def _argument_types(self, arguments, caller: str, klass: str | None, line: int) -> list[str | None]:
        return [self._type_of_node(a, caller, klass, line) for a in arguments]

    def resolve_invocation(self, node, caller: str, klass: str | None, line: int) -> tuple[str, str] | None:
        name = _text(node.child_by_field_name("name"))
        holder = node.child_by_field_name("object")
        arguments = [a for a in node.child_by_field_name("arguments").named_children
                     if "comment" not in a.type] if node.child_by_field_name("arguments") else []
        types = self._argument_types(arguments, caller, klass, line)
        return self._call(holder, name, [_text(a) for a in arguments], types, caller, klass, line)

    def _call(self, holder, name: str, arguments: list[str], types: list[str | None], caller: str,
              klass: str | None, line: int) -> tuple[str, str] | None:
        if holder is None:  # m(): the class's and those around it, then static imports (JLS 15.12.1)
            scope, beyond = klass, None
            while scope is not None:
                candidates, outside = self.methods(scope, name)
                chosen = self.choose(candidates, arguments, types)
                if chosen is not None:
                    return chosen[0], "self"
                beyond = beyond or outside
                scope = self.classes[scope].outer if scope in self.classes else None
            here = self.file_of(klass) if klass else _File("")
            for owner in here.static_single.get(name, ()):
                chosen = self.choose(self.methods(owner, name)[0], arguments, types) if owner in self.classes else None
                return (chosen[0], "import") if chosen else (f"{owner}.{name}", "external")
            for owner in here.static_on_demand:
                if owner in self.classes:
                    chosen = self.choose(self.methods(owner, name)[0], arguments, types)
                    if chosen is not None:
                        return chosen[0], "import"
            # outside the repository: a class it inherits from (`getClass()`, a framework's method) or
            # a class imported on demand, when there is exactly one place it can come from
            places = [o for o in here.static_on_demand if o not in self.classes] + ([beyond] if beyond else [])
            return (f"{places[0]}.{name}", "external") if len(places) == 1 else None
        said = _text(holder)
        if holder.type == "super":
            owner, how = (self.supertypes(klass) or ("java.lang.Object",))[0] if klass else None, "super"
        else:
            owner, how = self._type_of_node(holder, caller, klass, line), "type"
            if owner is None and holder.type in ("identifier", "field_access", "scoped_identifier"):
                named = self.resolve_type(said, klass)  # Foo.bar(): a static method of a class named
                if named is not None and (holder.type != "identifier" or self._local(said, caller, line) is None):
                    owner = named[0]
            if holder.type == "this":
                how = "self"
        if owner is None or owner in _PRIMITIVES or owner.endswith("[]") or owner == "null":
            return None  # an array's clone() and the like are Object's
        candidates, outside = self.methods(owner, name)
        chosen = self.choose(candidates, arguments, types)
        if chosen is not None:
            return chosen[0], how
        declared = self._local(said, caller, line) if holder.type == "identifier" else None
        for bound in self.other_bounds(declared[0], klass, caller) if declared is not None else ():
            chosen = self.choose(self.methods(bound, name)[0], arguments, types)
            if chosen is not None:  # `T extends A & B`: a method of B
                return chosen[0], how
        if outside is not None:
            return f"{outside}.{name}", "external"
        return None

    def resolve_new(self, written: str, arguments: list[str], caller: str, klass: str | None,
                    line: int) -> tuple[str, str] | None:
        local = self.local_class(_bare(written) or "", caller)
        made = (local, "local") if local is not None else self.resolve_type(written, klass)
        if made is None:
            return None
        qualname, how = made
        if qualname not in self.classes:
            return f"{qualname}.<init>", "external"
        types = [self.type_of(a, caller, klass, line) for a in arguments]
        chosen = self.choose(self.classes[qualname].members.get("<init>", []), arguments, types)
        return (chosen[0], "type") if chosen is not None else (qualname, "type")

    def resolve_call_row(self, text: str, kind: str, arguments: list[str], caller: str, line: int
                         ) -> tuple[str, str] | None:
        klass = self._class_around(caller)
        if kind == "new":
            return self.resolve_new(text, arguments, caller, klass, line)
        if kind == "reference":
            holder, _, name = text.rpartition("::")
            owner = self.type_of(holder, caller, klass, line) if holder not in ("this", "super") else \
                (klass if holder == "this" else (self.supertypes(klass) or (None,))[0] if klass else None)
            if owner is None:
                named = self.resolve_type(holder, klass)
                owner = named[0] if named else None
            if owner is None or owner in _PRIMITIVES or owner.endswith("[]"):
                return None
            if owner not in self.classes:
                return f"{owner}.{'<init>' if name == 'new' else name}", "external"
            listed = self.classes[owner].members.get("<init>" if name == "new" else name, [])
            callables = [m for m in listed if m[1] in ("method", "staticmethod", "constructor")]
            if not callables:
                callables = self.methods(owner, name)[0]
            return (callables[0][0], "type") if callables else None
        if kind in ("call", "implicit") and (text in ("this", "super") or text.endswith((".this", ".super"))):
            target = klass if text.endswith("this") else (self.supertypes(klass) or (None,))[0] if klass else None
            if target is None:
                return None
            if target not in self.classes:
                return f"{target}.<init>", "external"
            types = [self.type_of(a, caller, klass, line) for a in arguments]
            chosen = self.choose(self.classes[target].members.get("<init>", []), arguments, types)
            how = "implicit" if kind == "implicit" else "self" if text == "this" else "super"
            return (chosen[0], how) if chosen else None
        node = _expression(f"{text}({', '.join(arguments)})") if not text.endswith("...") else None
        if node is None or node.type != "method_invocation":
            return None
        return self.resolve_invocation(node, caller, klass, line)


def _type_arguments(written: str) -> list[str]:
    """`Base<Widget, Map<K, V>>` -> ["Widget", "Map<K, V>"]: the top-level type arguments."""
    opening = written.find("<")
    if opening < 0:
        return []
    out, depth, start = [], 0, opening + 1
    for at in range(opening, len(written)):
        char = written[at]
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                out.append(written[start:at].strip())
                break
        elif char == "," and depth == 1:
            out.append(written[start:at].strip())
            start = at + 1
    return [a for a in out if a]


def _frozen(value):
    """A value of the resolver's state, comparable and hashable."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


_LOCAL_CLASS = re.compile(r"\$\d+([A-Za-z_$][\w$]*)$")


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


@functools.lru_cache(maxsize=1 << 15)
def _expression(text: str):
    """An expression as tree-sitter-java reads it (the node of `Object _ = <text>;`)."""
    tree = _PARSER.parse(f"class _{{Object _={text};}}".encode())
    found = tree.root_node
    for path in ("class_declaration", "class_body", "field_declaration", "variable_declarator"):
        found = next((c for c in found.named_children if c.type == path), None)
        if found is None:
            return None
    value = found.child_by_field_name("value")
    return value if value is not None and not value.has_error else None


def _layered(resolver: JavaResolver, answer: tuple[str, str] | None) -> tuple[str, str] | None:
    """An answer that ends in the library layer says so (resolution `library`, as Python's)."""
    if answer is None or answer[1] == "external" or not resolver.in_library(answer[0]):
        return answer
    return answer[0], "library"


def resolve_tables(resolver: JavaResolver, tables: dict[str, pa.Table], classes: pa.Table, parts: int = 1
                   ) -> tuple[dict[str, pa.Table], pa.Table]:
    """imports, calls, refs and inheritance with their resolution columns, the classes' resolved
    bases (id, base_qualnames), and the `reads` rows: the facts each file's answers read. With
    parts > 1 and FORK_AT calls or more, forked copies of this process answer parts of the calls
    (whole files each; forked.each): the answers and what they read are the same."""
    log = resolver.log
    reads: dict[int, set[tuple[str, object]]] = defaultdict(set)
    merged: dict[int, set[int]] = defaultdict(set)

    def reading(file_id: int) -> None:  # the answers made next are this file's
        log.into(reads[file_id], merged[file_id])

    def with_columns(table: pa.Table, names: tuple[str, ...], values: list[tuple]) -> pa.Table:
        for i, name in enumerate(names):
            kind = pa.bool_() if name == "alternative" else pa.string()
            table = table.append_column(name, pa.array([v[i] for v in values], kind))
        return table

    out = {}
    imports = tables["imports"]
    values = []
    for file_id, module, name, level, star in zip(*column_lists(
            imports, ("file_id", "imported_module", "name", "level", "is_star"))):
        reading(file_id)
        if star:
            known = module in resolver.packages or module in resolver.classes
            values.append((module if known else None, None, "module" if known else None))
        elif level:
            members = resolver.methods(module, name)[0] if module in resolver.classes else []
            held = members[0][0] if members else (resolver.field(module, name) or (None,))[0] \
                if module in resolver.classes else None
            values.append((module if module in resolver.classes else None, held, "definition" if held else None))
        else:
            target = f"{module}.{name}"
            values.append((module if module in resolver.packages else None, target if target in resolver.classes
                           else None, "definition" if target in resolver.classes else None))
    out["imports"] = with_columns(imports, RESOLVED_COLUMNS["imports"], values)
    calls = tables["calls"]
    rows = list(zip(*column_lists(calls, ("file_id", "callee_text", "kind", "arguments", "caller_qualname", "line"))))
    parts = parts if parts > 1 and len(rows) >= FORK_AT and forked.can_fork() else 1
    file_ids = [row[0] for row in rows]
    split = forked.positions(file_ids, forked.whole_files(Counter(file_ids), parts), parts)

    def answer(part: int) -> tuple[list[tuple], dict[int, set]]:
        """The answers of one part's calls, and what they read: the same in a forked copy."""
        values = []
        for at in split[part]:
            file_id, text, kind, arguments, caller, line = rows[at]
            reading(file_id)
            found = resolver.resolve_call_row(text, kind, list(arguments or ()), caller, line or 0)
            values.append((False, *(_layered(resolver, found) or (None, None))))
        log.into(None, set())
        return values, {file_id: reads[file_id] for file_id in {rows[at][0] for at in split[part]}}

    values: list[tuple | None] = [None] * len(rows)
    for part, (answered, read) in zip(split, forked.each(len(split), answer)):
        for at, value in zip(part, answered):
            values[at] = value
        for file_id, keys in read.items():
            reads[file_id] |= keys
    out["calls"] = with_columns(calls, RESOLVED_COLUMNS["calls"], values)
    out["refs"] = with_columns(tables["refs"], RESOLVED_COLUMNS["refs"], [(None, None)] * tables["refs"].num_rows)
    inheritance = tables["inheritance"]
    values = []
    for file_id, klass, base in zip(*column_lists(inheritance, ("file_id", "class_qualname", "base_text"))):
        reading(file_id)
        held = resolver.classes.get(klass)
        found = resolver.resolve_type(base, held.outer, held.file_id) if held else None
        values.append(_layered(resolver, found) or (None, None))
    out["inheritance"] = with_columns(inheritance, RESOLVED_COLUMNS["inheritance"], values)
    bases = []
    for file_id, qualname in zip(*column_lists(classes, ("file_id", "qualname"))):
        reading(file_id)
        bases.append(list(resolver.supertypes(qualname)))
    log.into(None, set())
    facts = {file_id: sorted({f"{prefix}{key}" for prefix, key in keys}) for file_id, keys in reads.items()}
    out["reads"] = pa.table({"file_id": pa.array([f for f, keys in facts.items() for _ in keys], pa.int64()),
                             "key": pa.array([k for keys in facts.values() for k in keys], pa.string())})
    return out, pa.table({"id": pa.array(classes.column("id").to_pylist(), pa.int64()),
                          "base_qualnames": pa.array(bases, pa.list_(pa.string()))})


# What the resolver's state is made of besides a file's own locals (bindings): read for every Java file.
_INTERFACE = ("classes", "members", "parameters", "imports")
# What JavaResolver._learn (and _Pending) read of the rows of `later`: an update reads only these
# columns of the other files and of the layer (their source and docstrings are most of the bytes:
# 6 MB of commons-lang3's classes and members)
LEARNED: dict[str, tuple[str, ...]] = {
    "classes": ("file_id", "qualname", "kind", "bases", "scope_qualname", "type_parameters"),
    "members": ("file_id", "class_qualname", "name", "qualname", "kind", "signature", "annotation", "type_parameters"),
    "parameters": ("file_id", "owner_qualname", "position", "name", "kind", "annotation"),
    "imports": ("file_id", "imported_module", "name", "level", "is_star", "bound_name"),
}
_STATE = (*_INTERFACE, "bindings")  # all of it (JavaResolver's tables)
_JAVA = "file_id IN (SELECT file_id FROM files WHERE language = 'java')"
# The Java files an update did not parse (_fresh), and of those the ones it does not resolve again
# (_dirty: those that read a changed fact)
_NOT_PARSED = f"{_JAVA} AND NOT {IN_FRESH}"
_OTHERS = f"{_NOT_PARSED} AND file_id NOT IN (SELECT file_id FROM _dirty)"
# Is a class of the files being resolved (_names) defined by another file too?
_SHARED_SQL = f"SELECT count(*) FROM classes WHERE qualname IN (SELECT v FROM _names) AND {_OTHERS}"
# The files not resolved again whose answers read a fact that changed (_keys).
_DIRTY_SQL = f"SELECT DISTINCT file_id FROM reads WHERE key IN (SELECT v FROM _keys) AND {_NOT_PARSED}"


def _files_of(classes: pa.Table) -> frozenset[int]:
    """The files a table of the library layer's classes comes from: JavaResolver's library_files."""
    return frozenset(classes.column("file_id").to_pylist())


class JavaResolution(Resolution):
    def full(self, project: dict[str, pa.Table], library: dict[str, pa.Table], modules: dict[int, str], jobs: int,
             emit: Emit, library_resolved: bool = False) -> Callable[[duckdb.DuckDBPyConnection], None]:
        """The library's rows (when not in the cache already) by a resolver of the library alone;
        the project's by one that knows both."""
        jdk = jdk_types()
        library_files = _files_of(library["classes"])
        written = []
        if not library_resolved and library_files:
            resolved, bases = resolve_tables(JavaResolver(library, jdk), library, library["classes"])
            for name, table in resolved.items():
                if name != "reads":  # the layer changes only with a rebuild
                    emit(f"{LIBRARY_SCHEMA}.{name}", table)
            written.append((f"{LIBRARY_SCHEMA}.classes", bases))
        state = {name: project[name] for name in _STATE}
        resolver = JavaResolver(state, jdk, library_files, later=[dict(library)])
        del state
        library.clear()
        # both cores unless told: a copy's own pages are what it caches (guava's build peaks at 0.45 GB either way)
        parts = jobs if jobs is not None else min(2, os.cpu_count() or 1)
        resolved, bases = resolve_tables(resolver, project, project["classes"], parts)
        for name, table in resolved.items():
            emit(name, table)
        project.clear()
        written.append(("classes", bases))

        def write_bases(con: duckdb.DuckDBPyConnection) -> None:
            for name, table in written:
                update_by_id(con, name, table)

        return write_bases

    def plan_update(self, con: duckdb.DuckDBPyConnection, fresh: dict[str, pa.Table]) -> list[str]:
        """The facts (JavaResolver.facts) the changed files' rows gave and give now that differ,
        read while their old rows are still in the database: an edit of a method's body changes
        none another file reads."""
        gone = f"WHERE {IN_GONE} AND {_JAVA}"
        jdk = jdk_types()
        before = JavaResolver({name: extracted(con, name, gone) for name in _STATE}, jdk).facts()
        after = JavaResolver(fresh, jdk).facts()
        return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))

    def apply_update(self, con: duckdb.DuckDBPyConnection, plan: list[str], fresh: dict[str, pa.Table],
                     modules: dict[int, str]) -> int:
        """Resolve the changed files and the files whose answers read a fact that changed (the
        `reads` table), against the state of every Java file; the number of those others."""
        register_values(con, "_keys", plan)
        dirty = [r[0] for r in con.execute(_DIRTY_SQL).fetchall()]
        keep_values(con, "_dirty", "file_id", dirty)
        others = f"WHERE {_OTHERS}"
        mine = "WHERE file_id IN (SELECT file_id FROM _dirty)"

        layer = f"WHERE file_id IN (SELECT file_id FROM {LIBRARY_SCHEMA}.files WHERE language = 'java')"
        library = {name: extracted(con, f"{LIBRARY_SCHEMA}.{name}", layer, LEARNED[name]) for name in _INTERFACE}
        state = {name: concat(name, [extracted(con, name, mine), fresh[name]]) for name in _STATE}
        register_values(con, "_names", state["classes"].column("qualname").to_pylist())
        if con.execute(_SHARED_SQL).fetchone()[0]:
            # a class of the files resolved is defined by another file too (two modules' copies): the
            # others learned first, as a full build learns them, in the order they were before
            state = {name: concat(name, [extracted(con, name, f"WHERE {_NOT_PARSED}"), fresh[name]])
                     if name != "bindings" else state[name] for name in _STATE}
            later = [library]
        else:
            later = [{name: extracted(con, name, others, LEARNED[name]) for name in _INTERFACE}, library]
        resolver = JavaResolver(state, jdk_types(), _files_of(library["classes"]), later=later)
        del library, later
        again = {name: concat(name, [extracted(con, name, mine + (" AND NOT coalesce(alternative, false)"
                                                                  if name == "calls" else "")), fresh[name]])
                 for name in RESOLVED_TABLES}
        classes = concat("classes", [extracted(con, "classes", mine), fresh["classes"]])
        for name in (*RESOLVED_TABLES, "reads"):
            con.execute(f'DELETE FROM "{name}" {mine}')
        resolved, bases = resolve_tables(resolver, again, classes)
        for name, table in resolved.items():
            insert_arrow(con, name, table)
        update_by_id(con, "classes", bases)
        return len(dirty)

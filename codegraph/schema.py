"""Every table of the graph, declared once: name, columns, types and meaning.

The DDL, the Arrow schemas, the row types (NamedTuples, so rows have names, not positions),
docs/schema.md and the schema version all come from here; views and macros are SQL in
`macros.sql`. A column's `stage` says who fills it: `extract` (the parser, one file at a time),
`resolve` (name resolution across the repository) or `index` (the indexer's bookkeeping).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any, NamedTuple, Sequence

_PY_TYPES = {"BIGINT": int, "INTEGER": int, "VARCHAR": str, "BOOLEAN": bool, "DOUBLE": float, "FLOAT": float,
             "VARCHAR[]": list, "TIMESTAMP": str}


_NO_DEFAULT = object()


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # a DuckDB type; FLOAT[{dim}] for the embedding vector
    meaning: str
    required: bool = False  # NOT NULL
    stage: str = "extract"
    default: Any = _NO_DEFAULT  # the row type's default (trailing columns only)

    def sql_type(self, dim: int | None = None) -> str:
        return self.type.format(dim=dim) if "{dim}" in self.type else self.type


@dataclass(frozen=True)
class Table:
    name: str
    meaning: str
    columns: tuple[Column, ...]
    optional: bool = False  # created only when asked for (the embeddings)

    def names(self, *stages: str) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if not stages or c.stage in stages)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    @cached_property
    def row(self) -> type:
        """The NamedTuple of what the parser (or the indexer) emits: every column but the resolved ones."""
        columns = [c for c in self.columns if c.stage != "resolve"]
        fields = [(c.name, Any if c.type.startswith("FLOAT[") else _PY_TYPES[c.type] | None) for c in columns]
        row = NamedTuple("".join(part.title() for part in self.name.split("_")) + "Row", fields)
        defaults = []
        for column in reversed(columns):
            if column.default is _NO_DEFAULT:
                break
            defaults.insert(0, column.default)
        row.__new__.__defaults__ = tuple(defaults) or None
        row._field_defaults = dict(zip([c.name for c in columns][len(columns) - len(defaults):], defaults))
        row.__doc__ = f"A row of `{self.name}`: {self.meaning}"
        row.__module__ = __name__
        globals()[row.__name__] = row  # importable by name, so rows pickle between worker processes
        return row

    def ddl(self, dim: int | None = None, if_not_exists: bool = False, schema: str | None = None) -> str:
        cols = ",\n".join(f'    "{c.name}" {c.sql_type(dim)}{" NOT NULL" if c.required else ""}' for c in self.columns)
        name = f"{schema}.{self.name}" if schema else self.name
        return f"CREATE TABLE {'IF NOT EXISTS ' if if_not_exists else ''}{name} (\n{cols}\n);"


def _c(name: str, type_: str, meaning: str, required: bool = False, stage: str = "extract") -> Column:
    return Column(name, type_, meaning, required, stage)


def _definition(**extra: Column) -> dict[str, Column]:
    """Columns every definition table shares, in a fixed order."""
    return {"id": _c("id", "BIGINT", "stable 63-bit hash of (path, kind, qualname): the same symbol keeps it across runs",
                     True),
            "file_id": _c("file_id", "BIGINT", "the file it is in (join `files`)", True), **extra}


_LAYER = Column("layer", "VARCHAR", "project (the repository's own code) | stdlib | site (a library the "
                "repository imports: `path` then starts with <stdlib>/ or <site>/) | jdk | jar (Java's library "
                "layer: stubs of the JDK's API and of the dependency jars' classes, declarations without code; "
                "`path` starts with <java>/)", True, "extract", "project")
# How extract.Extractor.value stores an expression.
_SHORTENED = ("shortened to 240 characters, except a list, tuple, set or dict literal with an element (a dict's "
              "value) that is a name, an attribute or a call: kept whole up to 64 KiB")
_TYPE_PARAMETERS = Column("type_parameters", "VARCHAR[]", "Java: its type parameters as written (`T`, "
                          "`B extends Builder<T, B>`); NULL when it has none", False, "extract", None)
_SOURCE = (_c("start_line", "INTEGER", "first line, decorators included (1-based)"),
           _c("end_line", "INTEGER", "last line"),
           _c("docstring", "VARCHAR", "the docstring, cleaned like inspect.cleandoc"),
           _c("source", "VARCHAR", "the source text of the definition"),
           _LAYER)

TABLES: tuple[Table, ...] = (
    Table("meta", "what the database was built from: schema version, tool version, repository root, embedding "
          "model and its settings", (
              _c("key", "VARCHAR", "schema_version, tool_version, repo_root, indexed_at, embedding_model, "
                 "whole_bytes (the file's size when last written whole: an update that grew it well past that "
                 "writes it whole again), ...", True, "index"),
              _c("value", "VARCHAR", "its value", stage="index"))),
    Table("files", "one row per indexed source file; updates key on the hash", (
        _c("file_id", "BIGINT", "stable hash of the path", True, "index"),
        _c("path", "VARCHAR", "relative to the repository root, forward slashes", True, "index"),
        _c("module", "VARCHAR", "the dotted name Python imports the file as (Java: package.FileName, from the "
           "path below its source root)", True, "index"),
        _c("sha256", "VARCHAR", "of the file's bytes", True, "index"),
        _c("size", "BIGINT", "bytes", stage="index"),
        _c("mtime_ns", "BIGINT", "modification time when indexed", stage="index"),
        _c("lines", "INTEGER", "line count", stage="index"),
        _c("parse_errors", "INTEGER", "tree-sitter ERROR/MISSING nodes; > 0 means partly recovered", stage="index"),
        _c("language", "VARCHAR", "the language that reads it (python | java)", True, "index"),
        _LAYER)),
    Table("skipped_files", "files discovered but not indexed, and why", (
        _c("path", "VARCHAR", "relative to the repository root", True, "index"),
        _c("reason", "VARCHAR", "binary | undecodable | undecodable-name | too-large | symlink | unreadable | ...",
           True, "index"),
        _c("detail", "VARCHAR", "what exactly", stage="index"),
        _c("size", "BIGINT", "with mtime_ns: an unchanged skipped file is not read again", stage="index"),
        _c("mtime_ns", "BIGINT", "modification time when skipped", stage="index"))),
    Table("modules", "one row per module (file)", tuple(_definition(
        name=_c("name", "VARCHAR", "last component of the dotted name", True),
        qualname=_c("qualname", "VARCHAR", "json.decoder", True),
        path=_c("path", "VARCHAR", "the file", True),
        is_package=_c("is_package", "BOOLEAN", "an __init__.py"),
        docstring=_c("docstring", "VARCHAR", "the module docstring"),
        all_names=_c("all_names", "VARCHAR[]", "__all__ when it is a literal list (NULL when absent)"),
        start_line=_c("start_line", "INTEGER", "1"),
        end_line=_c("end_line", "INTEGER", "the file's last line"),
        layer=_LAYER).values())),
    Table("classes", "one row per class definition, nested ones included", (
        *_definition().values(),
        _c("name", "VARCHAR", "the class name", True),
        _c("qualname", "VARCHAR", "json.decoder.JSONDecoder; nested in a function: mod.f.<locals>.C", True),
        _c("module", "VARCHAR", "the module it is defined in", True),
        _c("path", "VARCHAR", "the file", True),
        _c("scope_qualname", "VARCHAR", "the module, class or function it is defined in"),
        _c("start_line", "INTEGER", "first line, decorators included"),
        _c("end_line", "INTEGER", "last line"),
        _c("bases", "VARCHAR[]", "base classes as written"),
        _c("base_qualnames", "VARCHAR[]", "the bases resolved, NULL entries where unresolved", stage="resolve"),
        _c("metaclass", "VARCHAR", "the metaclass keyword as written (`class C(metaclass=M)`); NULL when the "
           "statement has none (a base's may still apply)"),
        _c("decorators", "VARCHAR[]", "as written, without @ (Java: its annotations)"),
        _c("docstring", "VARCHAR", "the docstring (Java: the javadoc comment)"),
        _c("source", "VARCHAR", "the class's source text"),
        _LAYER,
        Column("kind", "VARCHAR", "class | interface | enum | record | annotation (Java's kinds of class; "
               "Python's are all class)", True, "extract", "class"),
        _TYPE_PARAMETERS)),
    Table("members", "what a class defines: methods, properties, class attributes and the instance attributes "
          "its methods assign (self.x = ...)", (
              *_definition().values(),
              _c("class_id", "BIGINT", "the class (id in `classes`)", True),
              _c("class_qualname", "VARCHAR", "the class's qualified name", True),
              _c("name", "VARCHAR", "the member's name", True),
              _c("qualname", "VARCHAR", "class qualname + name", True),
              _c("module", "VARCHAR", "the module", True),
              _c("path", "VARCHAR", "the file", True),
              _c("kind", "VARCHAR", "method | classmethod | staticmethod | property | class_attribute | "
                 "instance_attribute | constructor (Java: `Class.<init>(int,String)`); Java's methods are "
                 "`Class.name(T1,T2)` (parameter types by simple name, generics erased: overloads are distinct), "
                 "its fields class_attribute when static and instance_attribute otherwise", True),
              _c("signature", "VARCHAR", "\"(self, s, idx=0)\" for callables"),
              _c("annotation", "VARCHAR", "attributes: the annotation as written"),
              _c("value", "VARCHAR", "attributes: the assigned expression (first assignment), " + _SHORTENED),
              _c("decorators", "VARCHAR[]", "as written, without @"),
              _c("is_async", "BOOLEAN", "an async def"),
              *_SOURCE, _TYPE_PARAMETERS)),
    Table("globals", "module-level functions and variables", (
        *_definition().values(),
        _c("name", "VARCHAR", "the name", True),
        _c("qualname", "VARCHAR", "module + name", True),
        _c("module", "VARCHAR", "the module", True),
        _c("path", "VARCHAR", "the file", True),
        _c("kind", "VARCHAR", "function | variable", True),
        _c("signature", "VARCHAR", "functions: \"(a, b=1) -> int\""),
        _c("annotation", "VARCHAR", "variables: the annotation as written"),
        _c("value", "VARCHAR", "variables: the assigned expression, " + _SHORTENED),
        _c("decorators", "VARCHAR[]", "as written, without @"),
        _c("is_async", "BOOLEAN", "an async def"),
        *_SOURCE)),
    Table("nested_functions", "functions defined inside functions", (
        *_definition().values(),
        _c("name", "VARCHAR", "the name", True),
        _c("qualname", "VARCHAR", "mod.outer.<locals>.inner", True),
        _c("module", "VARCHAR", "the module", True),
        _c("path", "VARCHAR", "the file", True),
        _c("scope_qualname", "VARCHAR", "the enclosing function", True),
        _c("signature", "VARCHAR", "\"(a, b=1) -> int\""),
        _c("decorators", "VARCHAR[]", "as written, without @"),
        _c("is_async", "BOOLEAN", "an async def"),
        *_SOURCE)),
    Table("parameters", "the parameters of every function and method, in order", (
        _c("file_id", "BIGINT", "the file", True),
        _c("owner_id", "BIGINT", "id in globals, members or nested_functions", True),
        _c("owner_qualname", "VARCHAR", "the function's qualified name", True),
        _c("position", "INTEGER", "0-based, self included", True),
        _c("name", "VARCHAR", "the parameter's name", True),
        _c("kind", "VARCHAR", "positional-only | positional | var-positional | keyword-only | var-keyword", True),
        _c("annotation", "VARCHAR", "as written"),
        _c("default_value", "VARCHAR", "as written"))),
    Table("bindings", "names bound inside functions: assignments, loop, with and except targets, walrus "
          "expressions, global and nonlocal declarations (parameters are in `parameters`). A bare name bound here "
          "means this binding, never a module-level definition of the same name; calls through it resolve by "
          "the assigned value or annotation", (
              _c("file_id", "BIGINT", "the file", True),
              _c("scope_qualname", "VARCHAR", "the function the name is bound in", True),
              _c("name", "VARCHAR", "the bound name", True),
              _c("kind", "VARCHAR", "assignment | loop | with (`with X as y`) | as (`except E as e`: the value is E, "
                 "e an instance of it; match patterns) | walrus | global | nonlocal | lambda (a lambda's "
                 "parameter, counted as its function's) | return (the name is `return`, the value what a return "
                 "statement gives back)", True),
              _c("line", "INTEGER", "where"),
              _c("value", "VARCHAR", "assignments of one name: the assigned expression; `a, b = x, y`: each "
                 "name's element; `a, b = f(...)`: `f(...)[0]`, `f(...)[1]`; a loop over one name: the "
                 "iterated expression; with: the context manager expression; as: the exception class caught; return: "
                 "the returned expression; "
                 + _SHORTENED),
              _c("annotation", "VARCHAR", "`x: T = ...` (or `x = ...  # type: T`): the annotation as written"))),
    Table("imports", "every import statement, one row per imported name", (
        _c("file_id", "BIGINT", "the file", True),
        _c("module", "VARCHAR", "the importing module", True),
        _c("path", "VARCHAR", "the file", True),
        _c("scope_qualname", "VARCHAR", "the module, or the function holding a local import", True),
        _c("line", "INTEGER", "where"),
        _c("imported_module", "VARCHAR", "absolute (relative imports resolved): \"json.decoder\""),
        _c("name", "VARCHAR", "from-imports: the imported name; '*' for star imports"),
        _c("alias", "VARCHAR", "the `as` name"),
        _c("level", "INTEGER", "leading dots of a relative import (Java: 1 for `import static a.b.C.m;`, whose "
           "imported_module is the class a.b.C; 0 for `import a.b.C;`, imported_module a.b)"),
        _c("is_star", "BOOLEAN", "from m import *"),
        _c("bound_name", "VARCHAR", "the local name the statement binds"),
        _c("target", "VARCHAR", "what that name stands for, as a dotted path"),
        _c("resolved_module", "VARCHAR", "imported_module when it is a module of this repository", stage="resolve"),
        _c("resolved_qualname", "VARCHAR", "the definition in this repository the name ends at", stage="resolve"),
        _c("resolution", "VARCHAR", "module | definition | NULL (outside the repository)", stage="resolve"))),
    Table("calls", "every call expression, with what it resolved to", (
        _c("file_id", "BIGINT", "join files for the path and module", True),
        _c("caller_id", "BIGINT", "the enclosing function, class or module"),
        _c("caller_qualname", "VARCHAR", "its qualified name", True),
        _c("line", "INTEGER", "of the callee expression"),
        _c("col", "INTEGER", "0-based, of the callee expression"),
        _c("end_line", "INTEGER", "end of the callee expression"),
        _c("end_col", "INTEGER", "end column"),
        _c("callee_text", "VARCHAR", "\"self.parse_object\", \"json.loads\", \"f(x).g\"", True),
        _c("callee_name", "VARCHAR", "last identifier: \"loads\""),
        _c("kind", "VARCHAR", "call (a call expression) | decorator (`@dec` applied to what follows) | implicit "
           "(what Python calls for you: `with x` -> __enter__ and __exit__, `for _ in x` -> __iter__ (or __getitem__; "
           "then the __next__ of what it returns; `iter(f, sentinel)` calls f), `raise C` -> C.__init__, a truth "
           "test of a name (`if x`, `while x`, `not x`, `x or y`, `a if x else b`) -> __bool__ (or __len__); in a "
           "method, operators on `self`: `self[k]` -> __getitem__, `self[k] = v` -> __setitem__, "
           "`del self[k]` -> __delitem__, `k in self` -> __contains__, `self == o` -> __eq__ (and !=, <, <=, >, >=); "
           "a class statement -> `type(C).__new__`: its metaclass's __new__, its nearest ancestor's "
           "__init_subclass__, the __set_name__ of each descriptor its body holds; with bases or keywords also "
           "`type(C).__init__`, its metaclass's __init__) "
           "| init (`C()` also runs C.__new__ and C.__init__, the project's: a row each added by resolution next to "
           "the call) | property (reading `obj.size` runs the property's getter, assigning it the setter, whether "
           "@property made it or `size = property(get, set)` or a function returning one; on a typed or guessed "
           "receiver a subclass's property of that name too, as an alternative row; and a descriptor's __get__ or "
           "__set__ when the class attribute holds an instance of the project's class defining them: rows added by "
           "resolution from `refs`) | new (Java: `new C(...)`, the callee text the class as written) | reference "
           "(Java: a method reference, `C::m`, `x::m`, `C::new`)", True),
        _c("arguments", "VARCHAR[]", "the arguments as written, shortened: `x`, `key=x`, `*xs`, `**kw`; a decorator's "
           "row holds the decorated name", True),
        _c("alternative", "BOOLEAN", "false for the first answer; true for the rows of the other definitions the "
           "same call may run (several values for one name, overrides in subclasses, ...)", stage="resolve"),
        _c("resolved_callee", "VARCHAR", "qualname of the definition; for external, the dotted import path",
           stage="resolve"),
        _c("resolution", "VARCHAR", "local | import | self | super | type (a method of the class a value, "
           "parameter or attribute holds, from its annotation or assigned value) | alias (a function or class "
           "assigned to a name) | return (what the called function returns: `make()()`) | container (an element of "
           "a literal list, tuple, set or dict: `HANDLERS[k]()`, `for f in (a, b): f()`) | flow (an argument the "
           "callers pass to the parameter called; a function handed to map, filter, sorted(key=), ...) | override "
           "(a subclass's method that replaces the one the receiver's class has) | wrapper (the function a decorator "
           "returns, which runs in place of the decorated one) | partial (the function a functools.partial "
           "object wraps) | getattr (a method or function named by the string given to getattr: a plain string, or "
           "every one whose name starts as the string does, `getattr(self, \"visit_\" + kind)`, in the object's "
           "class, its bases and, for self, its subclasses) | name (a guess for `x.m()` where nothing says what x "
           "holds: the one class family of the repository that defines m, when no builtin type and no class of the "
           "library layer has an m; filter it out for certain edges only) | lambda (a lambda called from another "
           "function than the one it is written in: a lambda has no node, its calls are that function's) | implicit "
           "(an implicit or init row that ends in the repository's code) — the repository's own code; decorated (the decorated function "
           "the code names, next to its wrapper row: not a call edge); library (the standard library or "
           "a package it imports) | builtin | external (outside the graph) | NULL", stage="resolve"))),
    Table("refs", "the uses of names that are not calls, imports or base classes (those have their own tables; "
          "`references_to(qn)` gives them all): dotted names read or written (`self.size`, `config.DEBUG = x`), "
          "names used as values (`run(handler)`, `x = CONSTANT`, `return helper`, `[a, b]`) and names in "
          "annotations. (REFERENCES is an SQL keyword, hence the short name.)", (
              _c("file_id", "BIGINT", "the file", True),
              _c("scope_qualname", "VARCHAR", "the enclosing function, class or module", True),
              _c("line", "INTEGER", "where"),
              _c("col", "INTEGER", "0-based"),
              _c("text", "VARCHAR", "the name as written: \"self.size\", \"handler\"", True),
              _c("kind", "VARCHAR", "read | write | annotation", True),
              _c("value", "VARCHAR", "for a write of the whole left side (`self.state = self.data_state`), the "
                 "value assigned as written (cut as other values are); NULL otherwise"),
              _c("resolved_qualname", "VARCHAR", "the definition of this repository (or of the library layer) "
                 "it names", stage="resolve"),
              _c("resolution", "VARCHAR", "how it resolved, as calls.resolution; NULL for a name bound in the "
                 "function or one defined elsewhere", stage="resolve"))),
    Table("inheritance", "one row per base class as written", (
        _c("file_id", "BIGINT", "the file", True),
        _c("class_id", "BIGINT", "the class (id in classes)", True),
        _c("class_qualname", "VARCHAR", "the class", True),
        _c("module", "VARCHAR", "its module", True),
        _c("path", "VARCHAR", "the file", True),
        _c("position", "INTEGER", "0-based among the bases", True),
        _c("base_text", "VARCHAR", "as written", True),
        _c("resolved_base", "VARCHAR", "class qualname, or builtins.X", stage="resolve"),
        _c("resolution", "VARCHAR", "how it resolved", stage="resolve"))),
    Table("reads", "what resolving each file's names read of the graph, one row per fact: a class (`class:p.Foo`), "
          "a class's members of a name (`member:p.Foo#bar`), a method's parameters (`params:...`), a file's "
          "imports (`file:ID`), a package (`package:p`), ...; an update resolves a file again when a fact it read "
          "changed, and no other file (Java's files; Python's updates reason over the tables instead)", (
              _c("file_id", "BIGINT", "the file whose answers read it", True, "resolve"),
              _c("key", "VARCHAR", "the fact, as `kind:name`", True, "resolve"))),
    Table("terms", "BM25's inverted index: the weighted terms of every definition (identifier parts and words of "
          "its name, docstring, signature and owner), behind `codegraph search` and the fallback retrieval", (
              _c("id", "BIGINT", "the symbol's id", True, "index"),
              _c("file_id", "BIGINT", "the file", True, "index"),
              _c("term", "VARCHAR", "a normalised term (lower case, identifiers split, plural stripped)", True,
                 "index"),
              _c("weight", "FLOAT", "its weighted count: 3 in the name, 1.5 in the docstring's first line, ...",
                 True, "index"),
              _c("length", "FLOAT", "the sum of the symbol's weights (BM25's document length)", True, "index"))),
    Table("words", "the bare names each file's code writes, one row a name: its calls' callee names, the last "
          "part of its references and bases, its imports' names and their modules' last parts; an update "
          "reads from it the few files a definition that came or went by a name may concern before it reads "
          "their calls and references (Python's)", (
              _c("file_id", "BIGINT", "the file", True, "index"),
              _c("word", "VARCHAR", "a name as written (`f` of `a.b.f()`)", True, "index"))),
    Table("getattr_strings", "Python: what each getattr with a string may name (`getattr(obj, 'on_' + kind)`, "
          "or the value of the local it names): the start of the names and whether they are upper-cased; an "
          "update reads it to find the files an added definition may be reached from by name", (
              _c("file_id", "BIGINT", "the file", True, "index"),
              _c("start", "VARCHAR", "what the names start with, in either case ('' when only their case is "
                 "known)", True, "index"),
              _c("capitals", "BOOLEAN", "only names in capitals (`kind.upper()`)", True, "index"))),
    Table("embeddings", "one vector per definition (modules, classes, members, globals, nested functions), keyed by "
          "the symbol's `id`; created by `codegraph index` unless `--no-embed`. `meta` records `embedding_model`, "
          "`embedding_dim` and the model's IDF weights; vectors of two models never mix", (
              _c("id", "BIGINT", "the symbol's id", True, "index"),
              _c("file_id", "BIGINT", "the file", True, "index"),
              _c("vector", "FLOAT[{dim}]", "L2-normalised: cosine similarity is a dot product", stage="index")),
          optional=True),
)

BY_NAME: dict[str, Table] = {t.name: t for t in TABLES}
for _table in TABLES:
    _table.row  # noqa: B018 - define every row type at import (see Table.row)
EXTRACTED: tuple[str, ...] = ("modules", "classes", "members", "globals", "nested_functions", "parameters", "bindings",
                              "imports", "calls", "refs", "inheritance")  # what the parser emits per file
DEFINITIONS: tuple[str, ...] = ("modules", "classes", "members", "globals", "nested_functions")
CALLABLES_AND_CLASSES: tuple[str, ...] = ("globals", "members", "nested_functions", "classes")
FUNCTIONS: tuple[str, ...] = ("members", "globals", "nested_functions")  # where a body's source is


@dataclass(frozen=True)
class Union:
    """Tables read as one. A column is each table's own column of that name unless `columns` maps
    it to an expression for that table; anything else asked for (a literal) is taken as written.
    Declared once here, generated into the views (macros.sql's @@name@@ markers), the update's
    and the resolver's SQL."""

    tables: tuple[str, ...]
    columns: dict[str, dict[str, str]]

    def sql(self, select: Sequence[str], *, where: str = "", tables: Sequence[str] | None = None,
            prefix: str = "", extra: dict[str, dict[str, str]] | None = None, union: str = "UNION ALL",
            indent: str = "    ") -> str:
        """SELECT `select` FROM each of `tables` (all by default, named prefix + table) [WHERE
        where], joined by `union`; `extra` adds or overrides expressions for this query."""
        columns = {**self.columns, **(extra or {})}
        parts = []
        for table in tables or self.tables:
            exprs = [columns.get(c, {}).get(table, c) for c in select]
            named = [e if e == c or not c.isidentifier() else f"{e} AS {c}" for e, c in zip(exprs, select)]
            parts.append(f"SELECT {', '.join(named)} FROM {prefix}{table}" + (f" WHERE {where}" if where else ""))
        return f"\n{indent}{union}\n{indent}".join(parts)


_SIGNATURE_OR_ANNOTATION = "coalesce(signature, CASE WHEN annotation IS NOT NULL THEN ': ' || annotation END)"
# Every definition as one row shape: what `symbols` shows and what updates and the resolver read.
DEFINITION = Union(DEFINITIONS, {
    "kind": {"modules": "'module'", "classes": "'class'", "nested_functions": "'nested_function'"},
    "module": {"modules": "qualname"},
    "class_qualname": {"modules": "NULL::VARCHAR", "classes": "NULL", "globals": "NULL", "nested_functions": "NULL"},
    "signature": {"modules": "NULL::VARCHAR", "classes": "'(' || array_to_string(bases, ', ') || ')'",
                  "members": _SIGNATURE_OR_ANNOTATION, "globals": _SIGNATURE_OR_ANNOTATION},
})
SYMBOL_COLUMNS = ("id", "kind", "name", "qualname", "module", "class_qualname", "path", "start_line", "end_line",
                  "signature", "docstring", "file_id")
RESOLVED: dict[str, tuple[str, ...]] = {t: BY_NAME[t].names("resolve") for t in EXTRACTED if BY_NAME[t].names("resolve")}
# How a call resolves when it ends at a definition of the repository's own code (calls.resolution).
PROJECT_RESOLUTIONS: tuple[str, ...] = ("local", "import", "self", "super", "type", "alias", "return", "container",
                                        "flow", "override", "wrapper", "partial", "lambda", "implicit",
                                        "getattr", "name")
# The words table's rows: per table, the expressions that give a name as written, of the rows the
# parser gave (WORD_ROWS: not the calls rows resolution adds, a constructor's `__init__` or
# `__new__`, a property read's and another answer's, whose names are dunders or written in the
# file's own rows: so a file's words follow its text alone). Each is what a rule of Python's
# updates compares with a bare name (its `_BY_NAME` parts), so a file whose words hold none of a
# set of names (none a dunder) has no row those rules select by them.
WORD_OF: dict[str, tuple[str, ...]] = {
    "calls": ("callee_name",), "refs": ("split_part(text, '.', -1)",),
    "imports": ("name", "split_part(imported_module, '.', -1)"), "inheritance": ("split_part(base_text, '.', -1)",)}
# A calls row as the parser gave it: the init, property and alternative rows come with resolution
PARSED_CALLS_SQL = "kind NOT IN ('init', 'property') AND NOT alternative"
WORD_ROWS = {"calls": PARSED_CALLS_SQL}


def words_sql(where: str) -> str:
    """SQL: insert the words of the files `where` selects (ordered, so a lookup of a few names
    reads few of the table's row groups)."""
    parts = " UNION ALL ".join(f"SELECT file_id, {expr} AS word FROM {table} WHERE {where}"
                               + (f" AND {WORD_ROWS[table]}" if table in WORD_ROWS else "")
                               for table, exprs in WORD_OF.items() for expr in exprs)
    return f"INSERT INTO words SELECT DISTINCT file_id, word FROM ({parts}) WHERE word IS NOT NULL ORDER BY word, file_id"


PROJECT_CALL_SQL = "resolution IN (" + ", ".join(f"'{r}'" for r in PROJECT_RESOLUTIONS) + ")"
GRAPH_TABLES: tuple[str, ...] = tuple(t.name for t in TABLES if t.name != "meta" and not t.optional)
# The tables whose rows are a file's (a file_id column): an update replaces a changed file's rows in each
FILE_TABLES: tuple[str, ...] = tuple(t.name for t in TABLES if "file_id" in t.names())


def macros_sql() -> str:
    """macros.sql with its @@name@@ markers filled from the unions declared here."""
    text = resources.files("codegraph").joinpath("macros.sql").read_text(encoding="utf-8")
    unions = {"symbols": DEFINITION.sql(SYMBOL_COLUMNS),
              "all_symbols": DEFINITION.sql((*SYMBOL_COLUMNS, "layer"), prefix="all_")}
    for name, sql in unions.items():
        text = text.replace(f"@@{name}@@", sql)
    return text


LIBRARY_SCHEMA = "library"
# The tables the library layer fills, in the `library` schema: the same columns as the
# repository's own (main) tables, which keep meaning "the repository" for every query written
# against them. `all_<table>` views join both layers.
LAYERED: tuple[str, ...] = ("files", *EXTRACTED)
# The extracted tables inserted only once their rows are resolved (classes get their resolved
# bases by an UPDATE after they are in): a language without a resolution inserts them as they are.
RESOLVED_TABLES: tuple[str, ...] = ("imports", "calls", "refs", "inheritance")


def ddl(embedding_dim: int | None = None) -> str:
    """Every table (the embeddings only with a dimension), the library layer's tables and the
    all_* views over both, then the views and macros."""
    tables = [t.ddl(embedding_dim) for t in TABLES if not t.optional or embedding_dim]
    tables.append(f"CREATE SCHEMA {LIBRARY_SCHEMA};")
    tables += [BY_NAME[name].ddl(schema=LIBRARY_SCHEMA) for name in LAYERED]
    tables += [f"CREATE VIEW all_{name} AS SELECT * FROM main.{name} UNION ALL SELECT * FROM {LIBRARY_SCHEMA}.{name};"
               for name in LAYERED]
    return "\n\n".join([*tables, macros_sql()])


# The code that decides what the rows hold: the languages (extraction and resolution) and the
# build stages around them. Its bytes are part of the version, so a database another resolver
# built is rebuilt by `codegraph index`, not kept and mixed with new rows by the next update.
ROW_MAKERS: tuple[str, ...] = ("languages", "build.py", "full_build.py", "update.py", "columns.py", "forked.py")
_SOURCE_SUFFIXES = (".py", ".scm", ".sql", ".toml")


def _sources(entry) -> list:
    if entry.is_file():
        return [entry] if entry.name.endswith(_SOURCE_SUFFIXES) else []
    return [f for child in sorted(entry.iterdir(), key=lambda e: e.name) if child.name != "__pycache__"
            for f in _sources(child)]


def _row_makers_digest() -> bytes:
    digest = hashlib.sha256()
    package = resources.files("codegraph")
    for name in ROW_MAKERS:
        for source in _sources(package.joinpath(name)):
            digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.digest()


def _version() -> str:
    shape = [[t.name, [[c.name, c.type, c.required] for c in t.columns]] for t in TABLES] + [LIBRARY_SCHEMA, LAYERED]
    digest = hashlib.sha256(json.dumps(shape).encode() + macros_sql().encode() + _row_makers_digest()).hexdigest()
    return digest[:12]


SCHEMA_VERSION = _version()
# The kinds of definition that are called (members.kind, globals.kind, nested functions): shown
# with their signature, ranked as code to call.
CALLABLE_KINDS = frozenset({"function", "method", "classmethod", "staticmethod", "property", "nested_function",
                            "constructor"})

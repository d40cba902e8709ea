"""From extracted rows to the resolver, and back to resolved tables: what a full build and an
update (incremental.py) share. The resolver (resolve.py) reads plain rows; this module turns Arrow
tables and database rows into them and its answers into the resolution columns."""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Callable, Iterable, NamedTuple, Sequence

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ... import forked
from ...columns import IN_GONE, column_lists, concat, register_values, update_by_id
from ...schema import BY_NAME, DEFINITION, DEFINITIONS, LIBRARY_SCHEMA, PROJECT_RESOLUTIONS, RESOLVED_TABLES
from ..base import Emit
from .expressions import CASED_NAME, KEEPING
from .resolve import ALL_ONLY_RESOLUTIONS, ASSIGNED_RESOLUTIONS, Resolver

SCOPE_TABLES = ("bindings", "parameters")  # what a function's own names mean, for resolving its calls
RESOLVED_COLUMNS = {name: BY_NAME[name].names("resolve") for name in RESOLVED_TABLES}


def definition_rows(tables: dict[str, pa.Table]) -> list[tuple]:
    """(qualname, kind, layer, module, evidence, decorators, line) of every definition in extracted
    tables; the evidence says what it holds or returns (Resolver.type_of): an attribute's or
    variable's annotation or value, a function's signature; for a class, its metaclass keyword;
    a function's decorators as written."""
    out: list[tuple] = []
    fixed = {"modules": "module", "classes": "class", "nested_functions": "nested_function"}
    for name in DEFINITIONS:
        table = tables[name]
        if not table.num_rows:
            continue
        qualnames = table.column("qualname").to_pylist()
        kinds = [fixed[name]] * len(qualnames) if name in fixed else table.column("kind").to_pylist()
        modules = table.column("qualname" if name == "modules" else "module").to_pylist()
        nothing = [None] * len(qualnames)
        if name in EVIDENCE:
            evidence = [next((v for v in _with_literal(said) if v is not None), None)
                        for said in zip(*column_lists(table, EVIDENCE[name]))]
        elif name == "classes":
            evidence = table.column("metaclass").to_pylist()
        else:
            evidence = nothing
        decorators = table.column("decorators").to_pylist() if name in EVIDENCE else nothing
        out.extend(zip(qualnames, kinds, table.column("layer").to_pylist(), modules, evidence, decorators,
                       table.column("start_line").to_pylist()))
    return out


# What a function or variable says it holds or returns (Resolver.type_of): the first of these
# columns that is set, except that a list or dict literal given as the value comes before an
# annotation (`SHELLS: Dict[str, Type[Shell]] = {"bash": Bash}`: what it holds, Resolver._elements).
# The tables that have them also have decorators.
_SIGNATURE_ANNOTATION_VALUE = ("signature", "annotation", "value")
EVIDENCE: dict[str, tuple[str, ...]] = {"members": _SIGNATURE_ANNOTATION_VALUE, "globals": _SIGNATURE_ANNOTATION_VALUE,
                                        "nested_functions": ("signature",)}
_LITERAL_SQL = "CASE WHEN length(value) > 2 AND left(value, 1) IN ('[', '{') THEN value END"


def _with_literal(said: tuple) -> tuple:
    """A row's EVIDENCE columns, with the value moved first when it is a literal (as _LITERAL_SQL)."""
    if len(said) != len(_SIGNATURE_ANNOTATION_VALUE):
        return said
    signature, annotation, value = said
    literal = value is not None and len(value) > 2 and value[0] in "[{"
    return (signature, value, annotation) if literal else said


def evidence_sql(table: str) -> str:
    columns = EVIDENCE[table]
    if columns == _SIGNATURE_ANNOTATION_VALUE:
        columns = ("signature", _LITERAL_SQL, "annotation", "value")
    return f"coalesce({', '.join(columns)})"


# definition_rows' columns, read from a database: the evidence is what definition_rows reads
DEFINITION_COLUMNS = ("qualname", "kind", "layer", "module", "evidence", "decorators", "start_line")


def definitions_sql(where: str = "", before: tuple[str, ...] = ()) -> str:
    """The definition rows of the database (both layers), with the columns `before` first."""
    return DEFINITION.sql(
        (*before, *DEFINITION_COLUMNS), prefix="all_", where=where,
        extra={"evidence": {"modules": "NULL", "classes": "metaclass", **{t: evidence_sql(t) for t in EVIDENCE}},
               "decorators": {"modules": "NULL", "classes": "NULL"}})


def scope_keys(tables: dict[str, pa.Table]) -> tuple[Iterable, Iterable]:
    """Resolver.learn_scopes' arguments from bindings and parameters tables."""
    return (zip(*column_lists(tables["bindings"], BINDING_KEY)), zip(*column_lists(tables["parameters"], PARAMETER_KEY)))


BINDING_KEY = ("scope_qualname", "name", "kind", "value", "annotation")
PARAMETER_KEY = ("owner_qualname", "position", "name", "annotation", "kind", "default_value")


def returns_of(rows: Iterable[tuple]) -> dict[str, tuple[str, ...]]:
    """function -> the expressions its return statements give, in line order, from bindings rows
    (scope_qualname, line, value) of kind 'return'."""
    out: dict[str, list[str]] = defaultdict(list)
    for scope, _line, value in sorted(r for r in rows if r[2] is not None):
        if value not in out[scope]:
            out[scope].append(value)
    return {scope: tuple(values) for scope, values in out.items()}


def returns_of_tables(*tables: pa.Table) -> dict[str, tuple[str, ...]]:
    rows = []
    for table in tables:
        rows += [(s, line, v) for s, k, line, v in zip(*column_lists(table, ("scope_qualname", "kind", "line", "value")))
                 if k == "return"]
    return returns_of(rows)


_VALUE_KINDS = frozenset({"variable", "class_attribute", "instance_attribute"})


def _later_wins(qualname: str, value: str | None, value_line: int | None, def_line: int | None) -> bool:
    """Of a name both defined (def, class) and assigned, the resolver keeps the one written later,
    as straight-line code and the usual `except ImportError: f = g` / `else: def f(...)` have it
    (`f = lru_cache()(f)` after the def is f), except an assignment of the same name from another
    module (`Future = _asyncio.Future` after `class Future`: an accelerator, whose source is the
    def). True when the assignment is what the name is."""
    if (value_line or 0) <= (def_line or 0):
        return False
    name = qualname.rpartition(".")[2]
    return not (value and value.endswith("." + name) and _DOTTED_NAME.fullmatch(value))


_DOTTED_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)+")


class DefinitionMaps(NamedTuple):
    """What definition rows tell the resolver (Resolver's arguments of those names)."""
    defs: dict[str, str]
    libraries: set[str]
    evidence: dict[str, tuple[str, str]]
    decorators: dict[str, tuple[str, ...]]
    metaclasses: dict[str, tuple[str, str]]


def definition_maps(defs: Iterable[tuple]) -> DefinitionMaps:
    """definition_rows' tuples as the resolver's maps. A qualname's rows decide it together, in
    their order: the first kind wins, except that of a def and an assignment the later counts
    (_later_wins)."""
    definitions: dict[str, str] = {}
    libraries: set[str] = set()
    evidence: dict[str, tuple[str, str]] = {}
    decorated: dict[str, tuple[str, ...]] = {}
    metaclasses: dict[str, tuple[str, str]] = {}
    lines: dict[str, int] = {}
    for qualname, kind, layer, module, said, decorators, line in defs:
        known = definitions.get(qualname)
        if known is None:
            lines[qualname] = line or 0
        elif (known in _VALUE_KINDS) != (kind in _VALUE_KINDS) and (
                _later_wins(qualname, said, line, lines[qualname]) if kind in _VALUE_KINDS  # an assignment after a def
                else not _later_wins(qualname, evidence.get(qualname, (None, None))[1], lines[qualname], line)):
            del definitions[qualname]
            evidence.pop(qualname, None)
            metaclasses.pop(qualname, None)
            decorated.pop(qualname, None)
            lines[qualname] = line or 0
        if definitions.setdefault(qualname, kind) != kind:
            continue  # what the name is not: nothing it says counts
        if layer != "project":
            libraries.add(qualname)
        if said is not None and kind == "class":
            metaclasses.setdefault(qualname, (module, said))
        elif said is not None:
            evidence.setdefault(qualname, (module, said))
        if decorators:
            decorated.setdefault(qualname, tuple(decorators))
    return DefinitionMaps(definitions, libraries, evidence, decorated, metaclasses)


IMPORT_KEY = ("module", "scope_qualname", "bound_name", "target", "is_star", "imported_module")
BASE_KEY = ("class_qualname", "module", "position", "base_text")


def build_resolver(defs: Iterable[tuple], imports: pa.Table, inheritance: pa.Table,
                    returns: dict[str, tuple[str, ...]] | None = None) -> Resolver:
    maps = definition_maps(defs)
    return Resolver(maps.defs, zip(*column_lists(imports, IMPORT_KEY)), zip(*column_lists(inheritance, BASE_KEY)),
                    maps.libraries, maps.evidence, returns, maps.decorators, maps.metaclasses)


# Below this many calls a build resolves in one process: forking and the pipes cost more than
# a second process saves.
FORK_AT = 20_000
# What resolving a ref costs against a call, for splitting the work evenly (stdlib: 17 against 55 µs).
_REF_WEIGHT = 0.3
# Calls answered between two hand-overs to `emit` (resolve_tables).
_SLICE = 32_768

_TYPE_TESTS = frozenset({"isinstance", "hasattr", "type", "issubclass", "callable"})
Uses = tuple[frozenset[str], frozenset[str]]


def receivers_used(calls: pa.Table, refs: pa.Table) -> dict[tuple[str, str], Uses]:
    """(caller, receiver) -> (the members the caller calls of that receiver, those it reads and
    does not call), where it uses two or more (not of self or cls, no dunders; `a.b.c()` calls c
    of a.b and reads b of a) and does not test its type (`isinstance(node, A)`: what it uses is
    no one class's): what a value nothing describes must have (Resolver.by_name). A caller's uses
    are all in its own file: read a file at a time (Arrow's grouping over the whole stdlib kept
    150 MB), and nothing of the tables is kept (the refs' columns go once their answers are found)."""
    tables = (calls.select(["file_id", "callee_text", "caller_qualname", "arguments"]),
              refs.select(["file_id", "text", "scope_qualname"]))
    rows: dict[int, list[tuple[int, int, int]]] = defaultdict(list)  # file -> (table, start, stop)
    for k, table in enumerate(tables):
        if table.num_rows:
            runs = pc.run_end_encode(table.column("file_id").combine_chunks())
            start = 0
            for file_id, end in zip(runs.values.to_pylist(), runs.run_ends.to_pylist()):
                rows[file_id].append((k, start, end))
                start = end
    out: dict[tuple[str, str], Uses] = {}
    same: dict[Uses, Uses] = {}  # one object for each distinct pair of sets: most repeat
    for parts in rows.values():
        for key, uses in _file_uses(tables, parts).items():
            out[key] = same.setdefault(uses, uses)
    return out


def _file_uses(tables: tuple[pa.Table, pa.Table], parts: list[tuple[int, int, int]]) -> dict[tuple[str, str], Uses]:
    """receivers_used for one file's rows (parts: table 0 calls or 1 refs, start, stop)."""
    used: dict[tuple[str, str], tuple[set[str], set[str]]] = defaultdict(lambda: (set(), set()))
    tested: set[tuple[str, str]] = set()
    for k, start, stop in parts:
        part = tables[k].slice(start, stop - start)
        texts, callers = part.column(1).to_pylist(), part.column(2).to_pylist()
        arguments = part.column(3).to_pylist() if k == 0 else ()
        for i, (text, caller) in enumerate(zip(texts, callers)):
            if k == 0 and text in _TYPE_TESTS and arguments[i]:
                tested.add((caller, arguments[i][0]))
            if "." not in text or not _DOTTED_NAME.fullmatch(text):  # `a.b.c`: a name and its attributes
                continue
            receiver, _, name = text.rpartition(".")
            if receiver not in ("self", "cls") and not name.startswith("__"):
                used[caller, receiver][k].add(name)  # k 0: called, 1: read
            head, _, rest = text.partition(".")
            first, dot, _ = rest.partition(".")
            if dot and head not in ("self", "cls") and not first.startswith("__"):
                used[caller, head][1].add(first)
    out = {}
    for key, (called, read) in used.items():
        read -= called
        if len(called) + len(read) > 1 and key not in tested:
            out[key] = (frozenset(called), frozenset(read))
    return out


# A method that keeps a value in its instance: `self._data[name] = item`, `self._items.append(item)`
KEEPS_IN_SELF = r"^self\.[A-Za-z_][A-Za-z_0-9]*\.(__setitem__|append|add|appendleft|insert|setdefault)$"
WRITTEN_TEXT = r"^self\.[A-Za-z_][A-Za-z_0-9]*$"  # a write written_values reads
# getattr with a string (Resolver._getattr_targets) in the files `where` selects (a condition on
# {file_id}): the start of the names its string, as written or the value of the local it names,
# may give, and whether it is upper-cased (only names in capitals: `node.__name__.upper()`); only
# those that may give a name. The getattr calls read once (a scan of every call costs 10 ms on the
# stdlib's graph); of `few` files (an update's), those files' calls first: a scan tests a
# comparison with a constant before other filters, and `callee_text = 'getattr'` would read every
# call's text (9 ms against 1.7 ms).
def getattr_strings_sql(where: str, few: bool = False) -> str:
    getattrs = "callee_text = 'getattr' AND len(arguments) >= 2"
    if few:
        calls = f"""mine AS MATERIALIZED (SELECT file_id, caller_qualname, callee_text, arguments FROM calls
                                       WHERE {where.format(file_id='file_id')}),
        g AS MATERIALIZED (SELECT file_id, caller_qualname, arguments[2] AS said FROM mine WHERE {getattrs})"""
    else:
        calls = f"""g AS MATERIALIZED (SELECT file_id, caller_qualname, arguments[2] AS said FROM calls
                                WHERE {getattrs} AND {where.format(file_id='file_id')})"""
    return f"""
    WITH {calls}
    SELECT DISTINCT file_id, start, capitals FROM (
        SELECT file_id, regexp_extract(said, '^[rRbBfFuU]*["'']([A-Za-z_][A-Za-z_0-9]*)', 1) AS start,
               ends_with(said, '.upper()') AS capitals
        FROM (SELECT file_id, said FROM g
              UNION ALL SELECT g.file_id, b.value FROM g JOIN bindings b
              ON b.file_id = g.file_id AND b.scope_qualname = g.caller_qualname
                 AND b.name = regexp_extract(g.said, '^{CASED_NAME}$', 1) AND {where.format(file_id='b.file_id')}))
    WHERE start <> '' OR capitals"""


# Where a row is in its file, an enclosing call before those inside it (in_source_order)
SOURCE_ORDER = {"calls": [("line", "ascending"), ("col", "ascending"), ("end_line", "descending"),
                          ("end_col", "descending"), ("kind", "ascending"), ("callee_text", "ascending")],
                "refs": [("line", "ascending"), ("col", "ascending"), ("kind", "ascending"), ("text", "ascending")]}


# An update's writes of every file but the changed ones (_gone), for written_values
WRITTEN_ROWS_SQL = f"""SELECT file_id, scope_qualname, text, kind, value FROM refs
    WHERE NOT {IN_GONE} AND kind = 'write' AND value IS NOT NULL
      AND regexp_matches(text, '{WRITTEN_TEXT}')"""
_KEEPING_COLUMNS = ("file_id", "callee_text", "caller_qualname", "kind", "arguments")
# The names of methods that may keep a value (keeping_sites): KEEPING's, and those of the
# project's container classes (with __iter__ or __getitem__)
MAY_KEEP_SQL = """
    SELECT unnest($keeping::VARCHAR[]) UNION ALL SELECT m.name FROM members m WHERE m.kind = 'method'
        AND EXISTS (SELECT 1 FROM members d WHERE d.class_qualname = m.class_qualname
                    AND d.name IN ('__iter__', '__getitem__'))
"""
# Calls rows for keeping_sites: more than it keeps (it reads which methods do keep), never less.
_MAY_KEEP_ROWS = f"""NOT alternative AND (regexp_matches(callee_text, '{KEEPS_IN_SELF}')
           OR kind = 'call' AND len(arguments) > 0 AND contains(callee_text, '.')
              AND split_part(callee_text, '.', -1) IN ({MAY_KEEP_SQL}))"""
# An update's rows of every file but the changed ones (_gone); the changed ones' as they were, all.
KEEPING_ROWS_SQL = f"""SELECT {', '.join(_KEEPING_COLUMNS)}, {', '.join(name for name, _ in SOURCE_ORDER['calls'][:4])}
    FROM calls WHERE NOT {IN_GONE} AND {_MAY_KEEP_ROWS}"""
KEPT_BEFORE_SQL = f"""SELECT {', '.join(_KEEPING_COLUMNS)} FROM calls
    WHERE {IN_GONE} AND NOT alternative"""


def storing_methods(calls: pa.Table) -> set[str]:
    """The functions with a call that keeps a value in their instance (KEEPS_IN_SELF): keeping_sites
    reads which of them are methods of a container class."""
    stores = calls.filter(pc.match_substring_regex(calls.column("callee_text"), KEEPS_IN_SELF))
    return set(stores.column("caller_qualname").to_pylist())


def keeping_sites(calls: pa.Table, modules: dict[int, str], defs: dict[str, str]) -> dict[str, list[tuple]]:
    """The last name of a container (an attribute or a local) -> (container, method, arguments,
    module, caller) of every call that keeps a value in it: a list's, set's or dict's (KEEPING;
    `stack.stmtprocess.append(Filter())`), or a method of a project container class (one with
    __iter__ or __getitem__) that keeps a value in its instance (`registry.register(Proc(),
    "p", 20)`, a Registry whose register does `self._data[name] = item`): what Containers._elements
    finds in the container besides the values it is given where it is made."""
    if not calls.num_rows:
        return {}
    calls = calls.select(list(_KEEPING_COLUMNS))
    keeping = dict(KEEPING)
    for method in storing_methods(calls):
        klass, _, name = method.rpartition(".")
        if defs.get(method) == "method" and defs.get(klass) == "class" and name not in keeping and \
                (f"{klass}.__iter__" in defs or f"{klass}.__getitem__" in defs):
            keeping[name] = None  # every positional argument
    named = "|".join(re.escape(name) for name in sorted(keeping))
    calls = calls.filter(pc.and_(pc.equal(calls.column("kind"), "call"), pc.match_substring_regex(
        calls.column("callee_text"), rf"^[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*\.({named})$")))
    out: dict[str, list[tuple]] = defaultdict(list)
    same: dict[str, str] = {}
    for file_id, text, caller, arguments in zip(*column_lists(calls, ("file_id", "callee_text", "caller_qualname",
                                                                       "arguments"))):
        container, _, method = text.rpartition(".")
        if arguments:
            out[container.rpartition(".")[2]].append((container, method, tuple(arguments), modules[file_id],
                                                      same.setdefault(caller, caller)))
    return dict(out)


def written_values(refs: pa.Table, modules: dict[int, str]) -> dict[str, list[tuple[str, str, str]]]:
    """An attribute's name -> (value, module, scope) of every `self.<name> = value` in a function
    (the attribute's values besides the first, which its member row keeps: `self.state =
    self.tag_state` in one method, `self.data_state` in another; Values._written), in the
    order of their text, so that a full build and an update read them alike."""
    if not refs.num_rows:
        return {}
    refs = refs.select(["file_id", "scope_qualname", "text", "kind", "value"])
    refs = refs.filter(pc.and_(pc.equal(refs.column("kind"), "write"),
                               pc.and_(pc.is_valid(refs.column("value")),
                                       pc.match_substring_regex(refs.column("text"), WRITTEN_TEXT))))
    out: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for file_id, scope, text, value in zip(*column_lists(refs, ("file_id", "scope_qualname", "text", "value"))):
        out[text[5:]].append((value, modules[file_id], scope))
    return {name: sorted(set(values)) for name, values in out.items()}


def with_answers(table: pa.Table, name: str, values: list[tuple]) -> pa.Table:
    """A table's rows with their resolution columns (RESOLVED_COLUMNS[name]), one answer per row."""
    for i, column in enumerate(RESOLVED_COLUMNS[name]):
        table = table.append_column(column, pa.array([v[i] for v in values], pa.string()))
    return table


def in_source_order(rows: pa.Table, modules: dict[int, str], table: str = "calls") -> pa.Table:
    """A table's rows by module, then where they are in it: the order the resolver asks them in,
    and learns what calls keep and writes store, the same whether a file's rows come from its
    parse or from the database, where an update's kept functions (carry.py) leave them in another
    order (answers worked out while another is half made depend on which comes first: the
    `naive.replace` of a python-dateutil file edited twice differed from its rebuild)."""
    if rows.num_rows < 2:
        return rows
    files = pc.unique(rows.column("file_id")).to_pylist()
    rank = {f: at for at, f in enumerate(sorted(files, key=lambda f: (modules.get(f, ""), f)))}
    ranks = pa.array([rank[f] for f in files], pa.int64())
    keys = SOURCE_ORDER[table]
    keyed = rows.select([name for name, _ in keys]).append_column(
        "_file", pc.take(ranks, pc.index_in(rows.column("file_id"), value_set=pa.array(files, pa.int64()))))
    return rows.take(pc.sort_indices(keyed, sort_keys=[("_file", "ascending"), *keys]))


def resolve_tables(resolver: Resolver, tables: dict[str, pa.Table], modules: dict[int, str],
                    flow_sites: Iterable[tuple] = (), jobs: int = 1, emit: Emit | None = None) -> dict[str, pa.Table]:
    """Add the resolution columns to imports, calls and inheritance. A call that may run several
    definitions gets a row for each (`alternative` true after the first); `C()` gets a row for the
    C.__init__ it runs. flow_sites: resolved calls of files not resolved here that pass
    arguments to functions that are (Resolver.learn_flows). With jobs > 1 and enough calls,
    forked copies of this process answer parts of the refs and calls (forked.two_steps); the
    answers are the same. With emit, each resolved table goes to emit(name, table) as soon as it
    is whole, the refs before the calls are answered and the calls a slice at a time, in the
    order of the table one piece would have (a writer on another thread inserts them while the
    rest is resolved); the returned dict holds the tables not emitted."""
    if "bindings" in tables:  # what the callers' own names mean
        resolver.learn_scopes(*scope_keys(tables))
    resolver.class_tree()
    imports = tables["imports"]
    values = [resolver.resolve_import(key) for key in zip(*column_lists(imports, IMPORT_KEY))]
    out = {"imports": with_answers(imports, "imports", values)}
    for name in SOURCE_ORDER:  # in place: the rows as they came go
        tables[name] = in_source_order(tables[name], modules, name)
    refs, calls = tables["refs"], tables["calls"]
    resolver.receivers = receivers_used(calls, refs)
    if resolver.kept is None:  # an update gives every file's (incremental.py)
        resolver.kept = keeping_sites(calls, modules, resolver.defs)
    if resolver.written is None:
        resolver.written = written_values(refs, modules)
    parts = jobs if jobs > 1 and calls.num_rows >= FORK_AT and forked.can_fork() else 1
    work = _Answers(resolver, refs, calls, modules, flow_sites, emit)
    if emit is not None:
        emit("imports", out.pop("imports"))
    work.split(parts)
    firsts, seconds = forked.two_steps(parts, work.first, work.combine, work.adopt, work.second)  # 1: no fork
    if work.emit is None:
        ref_values, call_answers = work.gather([f[0] for f in firsts], seconds)
        out["refs"], properties = _refs_table(resolver, refs, ref_values)
        answered, inits = _calls_tables(resolver, calls, call_answers)
        out["calls"] = pa.concat_tables([t for t in (answered, inits, _as_calls(properties, answered)) if t is not None])
    else:  # the refs and part 0's answers went by emit; the other parts', what a call makes, what a property read runs
        for k in range(1, parts):
            work.hand_over(k, seconds[k])
        for table in (*work.inits, _as_calls(work.properties, work.inits[0] if work.inits else None)):
            if table is not None:
                emit("calls", table)
    inheritance = tables["inheritance"]
    values = []
    for qualname, position in zip(*column_lists(inheritance, ("class_qualname", "position"))):
        resolved = resolver.resolved_bases(qualname)
        values.append(resolved[position] if position < len(resolved) else (None, None))
    out["inheritance"] = with_answers(inheritance, "inheritance", values)
    if emit is not None:
        emit("inheritance", out.pop("inheritance"))
    return out


def _as_calls(properties: pa.Table | None, calls: pa.Table | None) -> pa.Table | None:
    """The calls rows of property reads, as the calls table has its columns."""
    if properties is None or calls is None:
        return properties
    return properties.select(calls.column_names).cast(calls.schema)


class _Answers:
    """What a build asks the resolver of its refs and calls, for any part of their rows, in the
    order a single process asks it: the refs and the first answer of every call, then what
    the calls pass (learn_flows, from all parts), then every answer of every call. The refs'
    columns live only while their answers are sought, as the calls' are not yet needed."""

    def __init__(self, resolver: Resolver, refs: pa.Table, calls: pa.Table, modules: dict[int, str],
                 flow_sites: Iterable[tuple], emit: Emit | None = None) -> None:
        self.resolver = resolver
        self.refs = refs
        self.calls = calls
        self.emit = emit  # the refs once all parts answered them, the calls a slice at a time (hand_over)
        self.inits: list[pa.Table] = []  # with emit: the init rows of each slice, handed over after every answer
        self.properties: pa.Table | None = None  # with emit: the calls rows of property reads
        self.texts, self.call_files, self.callers, self.kinds, self.arguments = column_lists(
            calls, ("callee_text", "file_id", "caller_qualname", "kind", "arguments"))
        self.modules = modules
        self.where = [modules[f] for f in self.call_files]
        self.flow_sites = list(flow_sites)
        self.ref_parts: list[Sequence[int]] = []
        self.call_parts: list[Sequence[int]] = []
        self.firsts: dict[int, list[tuple]] = {}  # part -> resolve_call's answers, before learn_flows

    def split(self, parts: int) -> None:
        """Whole files to each part (what a file's rows ask, its other rows ask again), about
        equal work each."""
        if parts == 1:
            self.ref_parts, self.call_parts = [range(self.refs.num_rows)], [range(len(self.texts))]
            return
        ref_files = self.refs.column("file_id").to_pylist()
        weight: dict[int, float] = defaultdict(float)
        for f in self.call_files:
            weight[f] += 1
        for f in ref_files:
            weight[f] += _REF_WEIGHT
        part_of = forked.whole_files(weight, parts)
        self.ref_parts = forked.positions(ref_files, part_of, parts)
        self.call_parts = forked.positions(self.call_files, part_of, parts)

    def first(self, k: int) -> list:
        resolver = self.resolver
        rows = self.ref_parts[k]
        refs = self.refs if isinstance(rows, range) else self.refs.take(pa.array(rows, pa.int64()))
        ref_values = _ref_answers(resolver, refs, self.modules)
        del refs
        rows = self.call_parts[k]
        firsts = self.firsts[k] = [resolver.resolve_call(self.texts[i], self.where[i], self.callers[i]) for i in rows]
        given, more = _sites(resolver, rows, self.texts, self.where, self.callers, self.kinds, self.arguments, firsts)
        return [ref_values, firsts, given, more]

    def combine(self, firsts: Sequence[list]) -> list[tuple]:
        """Every part's sites in row order, as one process lists them (and let go of)."""
        self.firsts = {k: part[1] for k, part in enumerate(firsts)}
        if self.emit is not None:
            ref_values = self._in_row_order([part[0] for part in firsts], self.ref_parts, self.refs.num_rows)
            for part in firsts:
                part[0] = None
            table, self.properties = _refs_table(self.resolver, self.refs, ref_values)
            self.emit("refs", table)
        given = sorted((site for part in firsts for site in part[2]), key=lambda tagged: tagged[0])
        more = sorted((site for part in firsts for site in part[3]), key=lambda tagged: tagged[0])
        for part in firsts:
            part[2] = part[3] = None
        return [site for _, site in given] + [site for _, site in more] + self.flow_sites

    def adopt(self, sites: list[tuple]) -> None:
        self.resolver.learn_flows(sites)

    def second(self, k: int) -> list[list[tuple]] | None:
        """Every answer of the calls of part k; with emit, part 0's (this process's: a forked copy
        cannot reach the writer) handed over a slice at a time as they come (None)."""
        rows, firsts = self.call_parts[k], self.firsts[k]
        if self.emit is None or k:
            return self._answers(rows, firsts)
        for start in range(0, len(rows), _SLICE):
            stop = min(start + _SLICE, len(rows))
            self._hand_over_slice(rows, start, stop, self._answers(rows[start:stop], firsts[start:stop]))
        return None

    def hand_over(self, k: int, answers: list[list[tuple]]) -> None:
        """Part k's answers, from the copy that found them, to emit a slice at a time."""
        rows = self.call_parts[k]
        for start in range(0, len(rows), _SLICE):
            stop = min(start + _SLICE, len(rows))
            self._hand_over_slice(rows, start, stop, answers[start:stop])

    def _hand_over_slice(self, rows: Sequence[int], start: int, stop: int, answers: list[list[tuple]]) -> None:
        picked = self.calls.slice(start, stop - start) if isinstance(rows, range) else \
            self.calls.take(pa.array(rows[start:stop], pa.int64()))
        answered, inits = _calls_tables(self.resolver, picked, answers)
        self.emit("calls", answered)
        if inits is not None:
            self.inits.append(inits)

    def _answers(self, rows: Sequence[int], firsts: Sequence[tuple]) -> list[list[tuple]]:
        resolver = self.resolver
        out = []
        for i, first in zip(rows, firsts):
            if self.kinds[i] == "implicit":  # counts where it ends in the repository's own code (`with open()` is not news)
                out.append(resolver.resolve_implicit(self.texts[i], self.where[i], self.callers[i]) or [(None, None)])
            else:
                out.append(resolver.resolve_call_all(self.texts[i], self.where[i], self.callers[i], self.arguments[i],
                                                    first))
        return out

    def gather(self, refs: list[list], seconds: list[list]) -> tuple[list, list]:
        """Every part's answers back in row order: refs' values, calls' answers."""
        return (self._in_row_order(refs, self.ref_parts, self.refs.num_rows),
                self._in_row_order(seconds, self.call_parts, len(self.texts)))

    @staticmethod
    def _in_row_order(values: list[list], parts: list[Sequence[int]], rows: int) -> list:
        """Each part's values (one per row of the part) back in the rows' order."""
        if len(values) == 1:
            return values[0]
        out: list = [None] * rows
        for k, part in enumerate(parts):
            for i, value in zip(part, values[k]):
                out[i] = value
        return out


def _ref_answers(resolver: Resolver, refs: pa.Table, modules: dict[int, str]) -> list[tuple[str | None, str | None]]:
    seen: dict[tuple[str, str], tuple[str | None, str | None]] = {}
    values = []
    for text, fid, scope in zip(*column_lists(refs, ("text", "file_id", "scope_qualname"))):
        key = (text, scope)
        value = seen.get(key)
        if value is None:
            module = modules[fid]
            # a bare local name is a use of that local, whatever it holds (`h = helper` is the use of helper)
            local = "." not in text and resolver.lookup(text, module, scope)[1] == "bound"
            target, how = (None, None) if local else resolver.resolve_expression(text, module, scope)
            if target is None and "." in text and not local:  # `node.start_pos`, nothing says what node is
                target, how = next(((t, h) for t, h in resolver.by_name(text, module, scope)[:1]
                                    if resolver.defs.get(t) == "property"), (None, None))
            if target is None or target not in resolver.defs or how == "builtin":
                value = (None, None)
            else:
                value = (target, "library" if target in resolver.libraries else how)
            seen[key] = value
        values.append(value)
    return values


def _refs_table(resolver: Resolver, refs: pa.Table, values: list[tuple]) -> tuple[pa.Table, pa.Table | None]:
    """refs with their resolution, and a calls row (kind property) for every read or write of a
    property or a descriptor: `obj.size` runs the getter, `obj.size = 3` the setter
    (Resolver.accessor); `alias = size` in the class body reads the descriptor itself."""
    texts, kinds = column_lists(refs, ("text", "kind"))
    resolved = refs.append_column("resolved_qualname", pa.array([v[0] for v in values], pa.string()))
    resolved = resolved.append_column("resolution", pa.array([v[1] for v in values], pa.string()))
    accessors = [(i, run, "implicit") for i, ((target, how), kind) in enumerate(zip(values, kinds))
                 if kind in ("read", "write") and how in PROJECT_RESOLUTIONS and "." in texts[i]
                 and (run := resolver.accessor(target, kind)) is not None]  # a bare name in a class body: itself
    if not accessors:
        return resolved, None
    # `x.width` where x is a Pattern: a subclass's property of that name may run instead, as a method call's override
    scopes = column_lists(refs, ("scope_qualname",))[0]
    accessors = [row for i, run, label in accessors for row in (
        (i, run, label),
        *((i, other, "override") for other in resolver.property_overrides(run, values[i][1], texts[i], scopes[i])))]
    getters = [i for i, _, _ in accessors]
    picked = refs.take(getters)
    n = len(getters)
    line = picked.column("line")
    ends = pa.array([c + len(t) for c, t in zip(picked.column("col").to_pylist(), picked.column("text").to_pylist())],
                    pa.int32())
    columns = {"file_id": picked.column("file_id"), "caller_id": pa.nulls(n, pa.int64()),
               "caller_qualname": picked.column("scope_qualname"), "line": line, "col": picked.column("col"),
               "end_line": line, "end_col": ends, "callee_text": picked.column("text"),
               "callee_name": pa.array([texts[i].rpartition(".")[2] for i in getters], pa.string()),
               "kind": pa.array(["property"] * n, pa.string()), "arguments": pa.array([[]] * n, pa.list_(pa.string())),
               "alternative": pa.array([label == "override" for _, _, label in accessors], pa.bool_()),
               "resolved_callee": pa.array([run for _, run, _ in accessors], pa.string()),
               "resolution": pa.array([label for _, _, label in accessors], pa.string())}
    return resolved, pa.table(columns)


# The first answers of a call that other answers of Resolver.assigned_callees may follow: values of
# names, elements of containers (a call answered by its own class, an import or a builtin has none).
_MAY_HOLD_SEVERAL = frozenset({"alias", "partial", "return", "container", "type", "lambda"})


def call_sites(resolver: Resolver, texts: Sequence[str], modules: Sequence[str], callers: Sequence[str],
               kinds: Sequence[str], arguments: Sequence[list], firsts: Sequence[tuple] | None = None) -> list[tuple]:
    """The calls that pass arguments, as Resolver.learn_flows reads them: one site per function
    the call runs by resolve_call's answer or by what the code assigns (a name bound to two
    functions gives both the arguments). The rows a database holds for them: SITE_ROWS_SQL."""
    given, more = _sites(resolver, range(len(texts)), texts, modules, callers, kinds, arguments, firsts)
    return [site for _, site in given] + [site for _, site in more]


def _sites(resolver: Resolver, rows: Sequence[int], texts: Sequence[str], modules: Sequence[str],
           callers: Sequence[str], kinds: Sequence[str], arguments: Sequence[list],
           firsts: Sequence[tuple] | None) -> tuple[list[tuple], list[tuple]]:
    """call_sites' sites of some rows (firsts: their first answers, in the same order), each
    with its row: those of the first answers, and those of what the code assigns."""
    given = [(i, firsts[at] if firsts is not None else resolver.resolve_call(texts[i], modules[i], callers[i]))
             for at, i in enumerate(rows) if arguments[i] and kinds[i] != "implicit"]
    sites = [(i, (*first, kinds[i], arguments[i], modules[i], callers[i])) for i, first in given]
    more = [(i, (target, how, kinds[i], arguments[i], modules[i], callers[i])) for i, first in given
            if first[1] in _MAY_HOLD_SEVERAL
            for target, how in resolver.assigned_callees(texts[i], modules[i], callers[i], first)]
    return sites, more


# The rows of stored calls that call_sites gives: first answers resolve_call gave, and what the code assigns.
SITE_ROWS_SQL = (f"(NOT alternative AND coalesce(resolution, '') NOT IN ({', '.join(repr(r) for r in ALL_ONLY_RESOLUTIONS)}) "
                 f"OR resolution IN ({', '.join(repr(r) for r in ASSIGNED_RESOLUTIONS)}))")


_CONSTRUCTORS = ("__new__", "__init__")  # what calling a class runs of its own


def _calls_tables(resolver: Resolver, calls: pa.Table, answers_of: list[list[tuple]]
                  ) -> tuple[pa.Table, pa.Table | None]:
    """The rows of calls with their answers, a row for each, and apart the init rows of the calls
    that make an instance (slices of calls, each giving both, keep the order of one table: every
    answer, then every init)."""
    texts = column_lists(calls, ("callee_text",))[0]
    rows: list[int] = []
    values: list[tuple[str | None, str | None]] = []
    alternative: list[bool] = []
    for i, answers in enumerate(answers_of):
        for j, answer in enumerate(answers):
            rows.append(i)
            values.append(answer)
            alternative.append(j > 0)
    # `C()` also runs C.__new__ and C.__init__: one more row each, of kind init, where the repository defines it
    inits: list[tuple[int, str]] = []
    seen: set[tuple[int, str]] = set()  # once per call: `type(self)()` may make subclasses sharing one __init__
    for k, (target, how) in enumerate(values):
        if how in PROJECT_RESOLUTIONS and resolver.defs.get(target) == "class":
            for method in _CONSTRUCTORS:
                made = resolver.member(target, method)
                if made is not None and made not in resolver.libraries and (rows[k], made) not in seen:
                    seen.add((rows[k], made))
                    inits.append((k, made))
    answered = _with_answers(calls.take(rows) if len(rows) != calls.num_rows else calls, alternative, values)
    if not inits:
        return answered, None
    extra = calls.take([rows[k] for k, _ in inits])
    methods = [init.rpartition(".")[2] for _, init in inits]
    for name, column in (("callee_text", [f"{texts[rows[k]]}.{m}" for (k, _), m in zip(inits, methods)]),
                         ("callee_name", methods), ("kind", ["init"] * len(inits))):
        extra = extra.set_column(extra.schema.get_field_index(name), name, pa.array(column, pa.string()))
    return answered, _with_answers(extra, [alternative[k] for k, _ in inits], [(init, "implicit") for _, init in inits])


def _with_answers(table: pa.Table, alternative: list[bool], values: list[tuple]) -> pa.Table:
    table = table.append_column("alternative", pa.array(alternative, pa.bool_()))
    table = table.append_column("resolved_callee", pa.array([v[0] for v in values], pa.string()))
    return table.append_column("resolution", pa.array([v[1] for v in values], pa.string()))


def class_bases(resolver: Resolver, classes: pa.Table) -> pa.Table:
    """(id, base_qualnames) of classes: their bases as resolved."""
    ids, qualnames = column_lists(classes, ("id", "qualname"))
    return pa.table({"id": pa.array(ids, pa.int64()), "base_qualnames": pa.array(
        [[b for b, _ in resolver.resolved_bases(q)] for q in qualnames], pa.list_(pa.string()))})


def for_resolution(resolver: Resolver, tables: dict[str, pa.Table]) -> dict[str, pa.Table]:
    """The extracted tables resolution still reads once the resolver knows every definition and
    the local names of every function (learned here, so that their tables can go as soon as the
    writer has them)."""
    resolver.learn_scopes(*scope_keys(tables))
    return {name: tables[name] for name in RESOLVED_TABLES}


def resolve_full(project: dict[str, pa.Table], library: dict[str, pa.Table], modules: dict[int, str], jobs: int,
                 emit: Emit, library_resolved: bool = False) -> Callable[[duckdb.DuckDBPyConnection], None]:
    """A full build's resolution (the Resolution protocol's `full`). The library's rows are
    resolved by a resolver of the library alone: what library code calls is what the environment
    holds, the same for every project that uses it (so the library cache can keep it; a resolver
    that also knew the project guessed by name at project methods for library code, as
    `configparser`'s `self._KEYCRE.sub()` at a project's `sub`). With library_resolved those rows
    are already in (from the cache) and the library's tables only say what the project's names
    mean. Then one resolver learns every definition of the project and the library, and the local
    names of every function of both, before any project call is answered (a project call may read
    what a library function returns, `a, b = socket.socketpair()`, as an update does through its
    scope loader); the tables go as soon as they are read. Returns the writing of the classes'
    resolved bases and of the files' getattr_strings."""
    lib_defs, lib_returns = definition_rows(library), returns_of_tables(library["bindings"])
    lib_read = {name: library[name] for name in ("imports", "inheritance", *SCOPE_TABLES)}
    classes = [t["classes"].select(["id", "qualname"]) for t in (project, library)]
    python_files = pc.unique(project["modules"].column("file_id")).to_pylist()
    bases = []
    if not library_resolved:
        alone = build_resolver(lib_defs, library["imports"], library["inheritance"], lib_returns)
        theirs = for_resolution(alone, library)
        library.clear()
        resolve_tables(alone, theirs, modules, jobs=jobs, emit=lambda name, table: emit(f"{LIBRARY_SCHEMA}.{name}", table))
        del theirs
        bases.append((class_bases(alone, classes[1]), f"{LIBRARY_SCHEMA}.classes"))
        del alone
    library.clear()
    # the library's functions and the project's are disjoint: their returns are two dicts made one
    resolver = build_resolver(
        [*definition_rows(project), *lib_defs],
        concat("imports", [project["imports"], lib_read["imports"]]),
        concat("inheritance", [project["inheritance"], lib_read["inheritance"]]),
        {**returns_of_tables(project["bindings"]), **lib_returns})
    del lib_defs, lib_returns
    resolver.learn_scopes(*scope_keys(lib_read))
    del lib_read
    ours = for_resolution(resolver, project)
    project.clear()
    resolve_tables(resolver, ours, modules, jobs=jobs, emit=emit)
    del ours
    bases.append((class_bases(resolver, classes[0]), "classes"))

    def write_last(con: duckdb.DuckDBPyConnection) -> None:
        for table, name in bases:
            update_by_id(con, name, table)
        register_values(con, "_python_files", python_files, pa.int64())
        con.execute(f"INSERT INTO getattr_strings {getattr_strings_sql('{file_id} IN (SELECT v FROM _python_files)')}")

    return write_last

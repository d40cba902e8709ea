"""A changed file's functions that did not change, kept as they were resolved.

An update used to resolve a changed file again whole: an edit of one method of unittest/case.py
learned again what every test of the stdlib passes to its other methods (3.4 s for a newline
appended). A function whose rows are all the same but for their lines (its definition, its
parameters, local names, calls and references: the same text, moved) answers what it answered,
unless the change reaches it the way it reaches another file. So for the plan it is another
file: its rows move to a file of their own, the carrier, with their lines moved to where the
function is now, and leave the changed file's new rows (`fresh`); the plan's rules then decide
about the carrier as about any file (resolve it again, or keep its answers), and apply_update
gives its rows back to their file (`give_back`). A function that shares its name with another
definition is resolved again with its file. The imports of such a file name what they named
unless a rule reaches the file, as those of any other file: their stored answers are kept
(`answered_imports`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ...columns import IN_FRESH, among, column_lists, insert_arrow, register_values
from ...schema import BY_NAME, PARSED_CALLS_SQL
from ..base import stable_id
from .expressions import _LOCALS
from .resolution import IMPORT_KEY, RESOLVED_COLUMNS, with_answers

# The tables holding a function's own rows, and the column saying which function (or scope in
# it) a row is of; the kinds of definition that are a function of their own (not nested in one).
UNIT_TABLES: dict[str, str] = {
    "members": "qualname", "globals": "qualname", "nested_functions": "qualname", "classes": "qualname",
    "parameters": "owner_qualname", "bindings": "scope_qualname", "imports": "scope_qualname",
    "inheritance": "class_qualname", "calls": "caller_qualname", "refs": "scope_qualname",
}
_FUNCTIONS = {"members": ("method", "classmethod", "staticmethod", "property"), "globals": ("function",)}
_MARK = " (its unchanged functions)"  # a carrier's path: never a path of the repository's
# Text of a function's rows that no answer reads, and no rule: a definition's source and docstring
# (a comment or a docstring edited in a function), a number as a local name's value (it names
# nothing, and the resolver reads no type, target or element of it: `places = 7` made `6`). A
# function whose rows differ only there is carried, and those rows are then the new ones (`renewed`).
_UNREAD: dict[str, frozenset[str]] = {name: frozenset({"source", "docstring"})
                                      for name in ("members", "globals", "nested_functions")}
_NUMBER = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)\Z")
_A_NUMBER = ("a number",)
_UNSAID = ("text no answer reads",)


def _unit_of(scope: str) -> str:
    """The outermost function a scope is in, or the scope itself (`m.C.f.<locals>.g` -> `m.C.f`)."""
    return scope.partition(_LOCALS)[0]


def _lines(table: str) -> tuple[str, ...]:
    return tuple(c for c in BY_NAME[table].names("extract") if c == "line" or c.endswith("_line"))


def _compared(table: str) -> tuple[str, ...]:
    return tuple(c for c in BY_NAME[table].names("extract") if c != "file_id")


def _rows(table: pa.Table, name: str) -> Iterable[tuple]:
    return zip(*column_lists(table, _compared(name)))


class _Side:
    """One side (the database's or the parser's) of a changed file's functions: where each starts,
    and its rows, lines counted from that start."""

    def __init__(self, tables: dict[str, pa.Table]) -> None:
        self.starts: dict[str, int] = {}
        self.named: Counter[str] = Counter()  # how many definitions have each qualname
        for name, kinds in _FUNCTIONS.items():
            for qualname, kind, start in zip(*column_lists(tables[name], ("qualname", "kind", "start_line"))):
                self.named[qualname] += 1
                if kind in kinds and _LOCALS not in qualname:
                    self.starts[qualname] = start or 0
        for name in ("nested_functions", "classes"):
            self.named.update(column_lists(tables[name], ("qualname",))[0])
        self.rows: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
        self.texts: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))  # _UNREAD, as written
        for name, column in UNIT_TABLES.items():
            at = _compared(name).index(column)
            moved = [i for i, c in enumerate(_compared(name)) if c in _lines(name)]
            unread = [i for i, c in enumerate(_compared(name)) if c in _UNREAD.get(name, ())]
            value = _compared(name).index("value") if name == "bindings" else None
            for row in _rows(tables[name], name):
                unit = _unit_of(row[at])
                start = self.starts.get(unit)
                if start is None:
                    continue
                row = tuple((v - start if v is not None else None) if i in moved else
                            tuple(v) if isinstance(v, list) else v for i, v in enumerate(row))
                said = tuple(row[i] for i in unread)
                if value is not None and row[value] and _NUMBER.match(row[value]):
                    said = (row[value],)
                    row = (*row[:value], _A_NUMBER, *row[value + 1:])
                if said:
                    self.texts[unit][name][said] += 1
                    row = tuple(_UNSAID if i in unread else v for i, v in enumerate(row))
                self.rows[unit][name][row] += 1

    def unchanged(self, other: "_Side") -> list[str]:
        """The functions of both sides whose rows are the same, moved or not, but for _UNREAD."""
        return sorted(q for q in self.starts.keys() & other.starts.keys()
                      if self.named[q] == other.named[q] == 1 and self.rows[q] == other.rows[q])

    def renewed(self, other: "_Side", unit: str) -> list[str]:
        """The tables of an unchanged function whose rows differ in _UNREAD."""
        mine, theirs = self.texts.get(unit, {}), other.texts.get(unit, {})
        return sorted(name for name in mine.keys() | theirs.keys() if mine.get(name) != theirs.get(name))


def _file_tables(con: duckdb.DuckDBPyConnection, file_id: int) -> dict[str, pa.Table]:
    out = {}
    for name in UNIT_TABLES:
        where = "WHERE file_id = $f" + (f" AND {PARSED_CALLS_SQL}" if name == "calls" else "")
        out[name] = con.execute(f'SELECT {", ".join(BY_NAME[name].names("extract"))} FROM "{name}" {where}',
                                {"f": file_id}).to_arrow_table()
    return out


def _of_file(tables: dict[str, pa.Table], file_id: int) -> dict[str, pa.Table]:
    return {name: table.filter(pc.equal(table.column("file_id"), file_id)) for name, table in tables.items()}


@dataclass
class Carried:
    """What carry moved: each carrier's file id -> its file's, and the tables holding their rows."""

    of: dict[int, int] = field(default_factory=dict)
    tables: set[str] = field(default_factory=set)
    # a changed file whose imports are what they were -> each import's stored answer by its key
    # (resolve_import's question): kept unless a rule reaches the file (plan_update drops those)
    answers: dict[int, dict[tuple, tuple]] = field(default_factory=dict)
    # a table -> the carriers whose rows of it differ in _UNREAD, and those rows as parsed now
    renewed: dict[str, tuple[list[int], list[pa.Table]]] = field(default_factory=dict)


def carry(con: duckdb.DuckDBPyConnection, fresh: dict[str, pa.Table]) -> Carried:
    """Move each unchanged function of the files parsed again (in _gone and _fresh) to a carrier
    of its own, its lines where it is now, and take its rows out of `fresh` (in place); the temp
    table _carriers (file_id, carrier) says whose they are. Only files whose imports are what
    they were: a function reads its module's imports by their bare names, as no other file does,
    and no rule follows that."""
    again = sorted({r[0] for r in con.execute(
        f"SELECT file_id FROM _gone WHERE {IN_FRESH}").fetchall()})
    carried = Carried()
    moved: list[tuple[int, int, str, int]] = []  # (file, carrier, function, lines moved by)
    for file_id in again:
        tables = _file_tables(con, file_id)
        now = _of_file(fresh, file_id)
        if _imports(tables["imports"]) != _imports(now["imports"]):
            continue
        carried.answers[file_id] = _import_answers(con, file_id)
        old, new = _Side(tables), _Side(now)
        for unit in old.unchanged(new):
            carrier = stable_id("carried", str(file_id), unit)
            carried.of[carrier] = file_id
            carried.tables |= old.rows[unit].keys()
            moved.append((file_id, carrier, unit, new.starts[unit] - old.starts[unit]))
            for name in old.renewed(new, unit):
                table = now[name]
                mine = pc.equal(pc.list_element(pc.split_pattern(table.column(UNIT_TABLES[name]), _LOCALS), 0), unit)
                carriers, rows = carried.renewed.setdefault(name, ([], []))
                carriers.append(carrier)
                rows.append(table.filter(mine))
    if "refs" in carried.tables:  # a property read's calls row
        carried.tables.add("calls")
    con.register("_carriers", pa.table({"file_id": pa.array(list(carried.of.values()), pa.int64()),
                                        "carrier": pa.array(list(carried.of), pa.int64())}))
    if not moved:
        return carried
    con.register("_carrying", pa.table({name: pa.array(values, kind) for name, values, kind in zip(
        ("file_id", "carrier", "unit", "delta"), zip(*moved), (pa.int64(), pa.int64(), pa.string(), pa.int32()))}))
    for name, column in UNIT_TABLES.items():
        if name in carried.tables:
            shifts = "".join(f', "{c}" = t."{c}" + c.delta' for c in _lines(name))
            con.execute(f"""UPDATE "{name}" t SET file_id = c.carrier{shifts} FROM _carrying c
                            WHERE {among("t.file_id", "_gone")} AND t.file_id = c.file_id
                              AND split_part(t."{column}", '{_LOCALS}', 1) = c.unit""")
    con.execute(f"""INSERT INTO files BY NAME SELECT f.* REPLACE (c.carrier AS file_id, f.path || '{_MARK}' AS path)
                    FROM files f JOIN _carriers c ON c.file_id = f.file_id""")
    con.unregister("_carrying")
    units = defaultdict(set)
    for file_id, _carrier, unit, _delta in moved:
        units[file_id].add(unit)
    for name, column in UNIT_TABLES.items():
        table = fresh[name]
        if name in carried.tables and table.num_rows:
            keep = [not (f in units and _unit_of(scope) in units[f])
                    for f, scope in zip(*column_lists(table, ("file_id", column)))]
            fresh[name] = table.filter(pa.array(keep, pa.bool_()))
    return carried


def reached_as_modules(carried: Carried, files: Iterable[int]) -> set[int]:
    """The changed files among `files` are reached by a rule as modules: their imports are resolved
    again (their stored answers dropped); the carriers of them all, resolved again too."""
    files = set(files)
    for file_id in files & carried.answers.keys():
        del carried.answers[file_id]
    return carriers_of(carried, files)


def carriers_of(carried: Carried, files: Iterable[int]) -> set[int]:
    """The carriers of these files: a rule that reaches a changed file may reach it through what
    its functions read of their module (the module's imports, its definitions by bare name, its
    classes' methods), which the file holds and the carriers do not."""
    files = set(files)
    return {carrier for carrier, file_id in carried.of.items() if file_id in files}


def _imports(table: pa.Table) -> Counter:
    """A file's imports, wherever in it they stand."""
    columns = [c for c in _compared("imports") if c not in _lines("imports")]
    return Counter(zip(*column_lists(table, columns)))


def _import_answers(con: duckdb.DuckDBPyConnection, file_id: int) -> dict[tuple, tuple]:
    key, answer = ", ".join(IMPORT_KEY), ", ".join(RESOLVED_COLUMNS["imports"])
    return {tuple(row[:len(IMPORT_KEY)]): tuple(row[len(IMPORT_KEY):]) for row in con.execute(
        f"SELECT DISTINCT {key}, {answer} FROM imports WHERE file_id = $f", {"f": file_id}).fetchall()}


def answered_imports(carried: Carried, imports: pa.Table) -> tuple[pa.Table, pa.Table | None]:
    """The changed files' imports rows to resolve, and those whose stored answers stand (their
    file's imports are what they were and no rule reached it), with resolve_tables' columns."""
    if not carried.answers or not imports.num_rows:
        return imports, None
    answers = [carried.answers.get(k[0], {}).get(k[1:])
               for k in zip(*column_lists(imports, ("file_id", *IMPORT_KEY)))]
    found = [a for a in answers if a is not None]
    if not found:
        return imports, None
    kept = pa.array([a is not None for a in answers], pa.bool_())
    return imports.filter(pc.invert(kept)), with_answers(imports.filter(kept), "imports", found)


def give_back(con: duckdb.DuckDBPyConnection, carried: Carried) -> None:
    """The carriers' rows back to their files (resolved again or kept as they were), the carriers gone."""
    con.unregister("_carriers")
    if not carried.of:
        return
    for name, (carriers, rows) in carried.renewed.items():  # these rows as the file says them now
        register_values(con, "_gone_carriers", carriers, pa.int64())
        con.execute(f'DELETE FROM "{name}" WHERE file_id IN (SELECT v FROM _gone_carriers)')
        insert_arrow(con, name, pa.concat_tables(rows))
    register_values(con, "_gone_carriers", list(carried.of), pa.int64())
    con.register("_carried_to", pa.table({"carrier": pa.array(list(carried.of), pa.int64()),
                                          "file_id": pa.array(list(carried.of.values()), pa.int64())}))
    for name in UNIT_TABLES:
        if name in carried.tables:
            con.execute(f"""UPDATE "{name}" t SET file_id = c.file_id FROM _carried_to c WHERE t.file_id = c.carrier""")
    con.execute("DELETE FROM files WHERE file_id IN (SELECT v FROM _gone_carriers)")
    con.unregister("_carried_to")

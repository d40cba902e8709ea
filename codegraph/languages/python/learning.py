"""An update's resolver learns the repository a module at a time, when a lookup first asks about
a name there, instead of every definition, import and base of the repository and the library
layer before its first answer (0.3 s of a one-file update of the stdlib's graph, which reads a
few modules). Its answers are a full build's: a qualname's rows all come from the modules its
dotted prefixes name, and those are learned together (with the modules any of their names
lead into: `a/__init__.py` assigning `a.b` is learned with module `a.b`), in the order a full
build reads them. What reads every fact of a kind asks hooks that learn what it needs: the class
tree from the stored bases of the files not resolved again, the definitions of a name or in a
class. An update that resolves many files learns everything at once (`everything`)."""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable, Iterator

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ...columns import among, column_lists, register_values
from ...schema import DEFINITION, LIBRARY_SCHEMA
from .resolution import BASE_KEY, DEFINITION_COLUMNS, IMPORT_KEY, definition_maps, definitions_sql, returns_of
from .resolve import Resolver

_OF_FILES = among("file_id", "_learning")
_RETURN_COLUMNS = ("scope_qualname", "line", "value")
# A class's bases as resolved (all of them: two classes of one name share one list) and how each
# of its rows' resolved
_ANSWERED_BASES = ("class_qualname", "base_qualnames", "position", "resolution")
_ANSWERED_BASES_SQL = """SELECT * FROM (SELECT c.file_id, c.qualname AS class_qualname, c.base_qualnames, i.position,
                                               i.resolution
                                        FROM main.classes c JOIN main.inheritance i ON i.class_id = c.id)"""
# What a module's learning reads: each kind's query of the files a condition chooses (None: all),
# file_id then its key columns, in a full build's order (the project's rows, then the library
# layer's; the changed files' imports and bases come last, from `fresh`).
def _union_of(name: str, key: tuple[str, ...]) -> Callable[[str | None], str]:
    return lambda where: " UNION ALL ".join(f"SELECT file_id, {', '.join(key)} FROM {schema}.{name}"
                                            + (f" WHERE {where}" if where else "")
                                            for schema in ("main", LIBRARY_SCHEMA))


_SOURCES: dict[str, tuple[Callable[[str | None], str], tuple[str, ...]]] = {
    "definitions": (lambda where: definitions_sql(where or "", ("file_id",)), DEFINITION_COLUMNS),
    "returns": (lambda where: f"SELECT file_id, {', '.join(_RETURN_COLUMNS)} FROM all_bindings "
                              "WHERE kind = 'return' AND value IS NOT NULL" + (f" AND {where}" if where else ""),
                _RETURN_COLUMNS),
    "imports": (_union_of("imports", IMPORT_KEY), IMPORT_KEY),
    "inheritance": (_union_of("inheritance", BASE_KEY), BASE_KEY),
    # the project's bases as resolved (the library layer's are answered afresh, as a full build does)
    "answered_bases": (lambda where: _ANSWERED_BASES_SQL + (f" WHERE {where}" if where else ""), _ANSWERED_BASES),
}
# Modules learned by a query each before all rows are read at once and sliced (each query scans
# its tables: file ids are hashes, no zone map skips): a one-file update of a leaf module asks
# about two or three, one of click's core about a dozen.
_QUERIED_BATCHES = 3
# Past this many batches, or a quarter of the modules, every module is learned at once (what a
# question about a widely used class or name leads to: a changed return in unittest's TestCase
# learned 668 modules a batch at a time).
BATCHES_AT_MOST = 40


class Learned(dict):
    """A dict of the resolver's state: a key it does not hold is first learned (`learn`); what
    reads all of it learns every module first (`complete`: the resolver's reads of every
    definition go through hooks that learn what they need instead, this is the safety net)."""

    __slots__ = ("learn", "complete")

    def __init__(self, learn: Callable[[object], None], complete: Callable[[], None]) -> None:
        super().__init__()
        self.learn, self.complete = learn, complete

    def __iter__(self):
        self.complete()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self.complete()
        return dict.__len__(self)

    def keys(self):
        self.complete()
        return dict.keys(self)

    def items(self):
        self.complete()
        return dict.items(self)

    def values(self):
        self.complete()
        return dict.values(self)

    def get(self, key, default=None):
        if not dict.__contains__(self, key):
            self.learn(key)
        return dict.get(self, key, default)

    def __getitem__(self, key):
        if not dict.__contains__(self, key):
            self.learn(key)
        return dict.__getitem__(self, key)

    def __contains__(self, key) -> bool:
        if dict.__contains__(self, key):
            return True
        self.learn(key)
        return dict.__contains__(self, key)


class LearnedSet(set):
    """A set of the resolver's state: a name it does not hold is first learned (`learn`)."""

    __slots__ = ("learn",)

    def __init__(self, learn: Callable[[object], None]) -> None:
        super().__init__()
        self.learn = learn

    def __contains__(self, key) -> bool:
        if set.__contains__(self, key):
            return True
        self.learn(key)
        return set.__contains__(self, key)


class OnFirstRead:
    """A name -> rows map made when it is first read (`get`): the containers' keeping calls and the
    attributes' written values of every file, which most updates never ask about."""

    def __init__(self, make: Callable[[], dict]) -> None:
        self._make, self._made = make, None

    def get(self, key, default=None):
        if self._made is None:
            self._made = self._make()
        return self._made.get(key, default)


_MAPS = ("defs", "evidence", "decorators", "metaclasses", "returns", "module_bindings", "scope_bindings",
         "star_sources", "base_texts", "class_module")


class _Rows:
    """The rows of _SOURCES of chosen files: by a query each at first, then from every row read
    once, filtered (_QUERIED_BATCHES)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, fresh: dict[str, pa.Table]) -> None:
        self.con, self.fresh = con, fresh
        self.queried = 0
        self.tables: dict[str, pa.Table] | None = None

    def choose(self, ids: list[int] | None) -> None:
        """The files the next reads are of (None: all)."""
        self.chosen = None if ids is None else pa.array(ids, pa.int64())
        if ids is None:
            return
        self.queried += 1
        if self.tables is None and self.queried > _QUERIED_BATCHES:
            self.tables = {kind: self.con.execute(_SOURCES[kind][0](None)).to_arrow_table() for kind in _SOURCES}
        if self.tables is None:
            register_values(self.con, "_learning", ids, pa.int64(), listed=True)

    def read(self, kind: str) -> Iterable[tuple]:
        key = _SOURCES[kind][1]
        if self.chosen is None:
            tables = [self.con.execute(_SOURCES[kind][0](None)).to_arrow_table()]
        elif self.tables is not None:
            table = self.tables[kind]
            tables = [table.filter(pc.is_in(table.column("file_id"), value_set=self.chosen))]
        else:
            tables = [self.con.execute(_SOURCES[kind][0](_OF_FILES)).to_arrow_table()]
        fresh = self.fresh.get(kind)
        if fresh is not None and fresh.num_rows:
            tables.append(fresh if self.chosen is None else
                          fresh.filter(pc.is_in(fresh.column("file_id"), value_set=self.chosen)))
        for table in tables:
            if table.num_rows:
                yield from zip(*column_lists(table, key))


class ModuleLearner:
    """Learns into `resolver` the rows of the modules a name may be defined in, from the database
    (the changed files' definitions already in it) and the changed files' imports and bases
    (`fresh`, not in it yet). The database must not lose rows while the resolver answers."""

    def __init__(self, con: duckdb.DuckDBPyConnection, fresh: dict[str, pa.Table], modules: dict[int, str],
                 resolver: Resolver) -> None:
        self.resolver = resolver
        self.rows = _Rows(con, {"imports": fresh["imports"], "inheritance": fresh["inheritance"]})
        self.files_of: dict[str, list[int]] = defaultdict(list)
        for file_id, module in modules.items():
            self.files_of[module].append(file_id)
        self.learned: set[str] = set()
        self.asked: set[str] = set()
        self.whole = False
        self.batches = 0
        self.names: pa.Table | None = None  # every definition's name and qualname, read at the first defined_named
        # The classes whose bases are answered afresh (those of the files resolved again when the
        # class tree is made: _bases_known); until then None, and the stored answers wait in `stored`
        self.again: set[str] | None = None
        self.stored: dict[str, list[tuple[str | None, str | None]]] = {}

    def __call__(self, key) -> None:
        if self.whole or not isinstance(key, str) or key in self.asked:
            return
        self.asked.add(key)
        batch = self._unlearned(key)
        if batch:
            self._learn(batch)

    def many(self, keys: Iterable[str]) -> None:
        """Learn what lookups of all of `keys` would, at once."""
        if self.whole:
            return
        batch: set[str] = set()
        for key in keys:
            if key not in self.asked:
                self.asked.add(key)
                batch.update(self._unlearned(key))
        if batch:
            self._learn(batch)

    def _unlearned(self, name: str) -> list[str]:
        """The modules not learned yet that `name`'s dotted prefixes (and itself) name."""
        out = []
        end = name.find(".")
        while True:
            prefix = name if end < 0 else name[:end]
            if prefix in self.files_of and prefix not in self.learned:
                out.append(prefix)
            if end < 0:
                return out
            end = name.find(".", end + 1)

    def _learn(self, batch: Iterable[str]) -> None:
        self.batches += 1
        if self.batches > BATCHES_AT_MOST or len(self.learned) > len(self.files_of) // 4:
            self.complete()  # asking this much, the rest soon follows: all at once costs less
            return
        batch = set(batch)
        while True:  # with the modules the batch's names lead into
            self.rows.choose(sorted(f for module in batch for f in self.files_of[module]))
            rows = list(self.rows.read("definitions"))
            more = {m for row in rows for m in self._unlearned(row[0])} - batch
            if not more:
                break
            batch |= more
        self.learned |= batch
        self._take(rows)

    def _take(self, definitions: list[tuple]) -> None:
        """Learn the definitions given and the chosen files' returns, imports and bases."""
        maps, resolver = definition_maps(definitions), self.resolver
        for name in ("defs", "evidence", "decorators", "metaclasses"):
            dict.update(getattr(resolver, name), getattr(maps, name))
        set.update(resolver.libraries, maps.libraries)
        dict.update(resolver.returns, returns_of(self.rows.read("returns")))
        resolver.learn_imports(self.rows.read("imports"))
        resolver.learn_bases(self.rows.read("inheritance"))
        self._settle(self.rows.read("answered_bases"))

    def _settle(self, rows: Iterable[tuple]) -> None:
        """The stored bases of the classes learned are the resolver's answers (settle_bases), but
        those of the classes answered afresh."""
        bases: dict[str, list[str | None]] = {}
        hows: dict[str, dict[int, str | None]] = defaultdict(dict)
        for qualname, resolved, position, how in rows:
            bases[qualname] = resolved
            hows[qualname][position] = how
        answers = {q: [(base, hows[q].get(i)) for i, base in enumerate(resolved)] for q, resolved in bases.items()}
        if self.again is None:
            self.stored.update(answers)
        else:
            self.resolver.settle_bases({q: a for q, a in answers.items() if q not in self.again})

    def _names(self) -> pa.Table:
        if self.names is None:
            self.names = self.rows.con.execute(_NAMES_SQL).to_arrow_table()
        return self.names

    def defined_named(self, name: str) -> list[str]:
        """The qualnames of the definitions called `name`, learned (Resolver.defined_named)."""
        names = self._names()
        qualnames = list(dict.fromkeys(names.filter(pc.equal(names.column("name"), name)).column("qualname").to_pylist()))
        self.many(qualnames)
        return qualnames

    def defined_in(self, owner: str) -> list[str]:
        """The qualnames of the definitions directly in `owner`, in a full build's order, learned
        with it (Resolver.defined_in)."""
        names, prefix = self._names(), owner + "."
        qualnames = [q for q in dict.fromkeys(names.filter(pc.starts_with(names.column("qualname"), prefix))
                                              .column("qualname").to_pylist()) if "." not in q[len(prefix):]]
        self.many([owner, *qualnames])
        return qualnames

    def complete(self) -> None:
        """Learn every module not learned yet, keeping what is learned (as a full build has it,
        in its order): for a read of all of a map (Learned)."""
        if self.whole:
            return
        self.whole = True
        resolver = self.resolver
        for name in _MAPS:
            dict.clear(getattr(resolver, name))
        set.clear(resolver.libraries)
        self._take_all()

    def everything(self) -> None:
        """Learn every module at once: the resolver becomes a full build's (plain maps, in its
        order, none of the hooks), what an update that resolves many files costs least with. Its
        answers so far stand (they are a full build's); the maps made of the hooks' answers are
        made again as a full build makes them, when next asked."""
        resolver = self.resolver
        if type(resolver.defs) is dict:
            return
        resolver._owned_by = resolver._owned = None
        resolver.__dict__.pop("_bodies", None)  # a cached_property
        resolver.bases_known = resolver.defined_named = resolver.defined_in = resolver.local_classes = None
        if self.whole:  # all learned already (complete): the same maps, plain
            for name in _MAPS:
                setattr(resolver, name, dict(getattr(resolver, name)))
            resolver.libraries = set(resolver.libraries)
            return
        self.whole = True
        for name in _MAPS:
            setattr(resolver, name, {})
        resolver.libraries = set()
        self._take_all()

    def _take_all(self) -> None:
        self.rows.choose(None)
        self._take(list(self.rows.read("definitions")))


# Every definition's name and qualname (defined_named, defined_in)
_NAMES_SQL = DEFINITION.sql(("name", "qualname"), prefix="all_")
# The classes made inside functions that have bases (a changed file's are resolved again: its
# functions' names are learned with it)
_LOCAL_CLASSES_SQL = "SELECT DISTINCT class_qualname FROM all_inheritance WHERE contains(class_qualname, '.<locals>.')"
# The project's classes, their bases as stored, and whether the update resolves their file again
# (_affected: those whose answers may change; _fresh: those parsed now)
_CLASS_BASES_SQL = """SELECT qualname, base_qualnames,
                             file_id IN (SELECT file_id FROM _affected) OR file_id IN (SELECT file_id FROM _fresh)
                      FROM classes"""


def _bases_known(con: duckdb.DuckDBPyConnection, learner: ModuleLearner) -> Iterator[tuple[str, list[str | None]]]:
    """Resolver.bases_known for an update: the bases of the classes of the files not resolved again
    as stored (what resolving them gave, and would give again, or the plan would resolve them
    again), those of the others as the resolver answers now; by qualname, as Dispatch._all_bases,
    and as it, each answered when the tree holds the classes before it (a base read through
    `self.kind` may look the tree up). The stored answers are also the resolver's from now on: a
    file resolved again for what flows into it, or a class's MRO, reads its classes' bases as a
    full build answered them, with the tree as it was then, not with the whole tree."""
    rows = con.execute(_CLASS_BASES_SQL).fetchall()
    again = learner.again = {qualname for qualname, _, resolved_again in rows if resolved_again}
    resolver = learner.resolver
    resolver.settle_bases({q: answer for q, answer in learner.stored.items() if q not in again})
    learner.stored.clear()
    learner.many(again)
    seen: set[str] = set()
    for qualname, bases, _ in sorted(rows, key=lambda row: row[0]):
        if qualname in seen:
            continue
        seen.add(qualname)
        if qualname in again:  # with bases written, as Dispatch._all_bases reads base_texts
            if resolver.base_texts.get(qualname):
                yield qualname, [b for b, _ in resolver.resolved_bases(qualname)]
        elif bases:
            yield qualname, list(bases)


def learning_resolver(con: duckdb.DuckDBPyConnection, fresh: dict[str, pa.Table],
                      modules: dict[int, str]) -> tuple[Resolver, ModuleLearner]:
    """A resolver that learns what its lookups ask about (ModuleLearner), and its learner."""
    resolver = Resolver({}, (), ())
    learner = ModuleLearner(con, fresh, modules, resolver)
    for name in _MAPS:
        setattr(resolver, name, Learned(learner, learner.complete))
    resolver.libraries = LearnedSet(learner)
    resolver.bases_known = lambda: _bases_known(con, learner)
    resolver.defined_named = learner.defined_named
    resolver.defined_in = learner.defined_in
    resolver.local_classes = lambda: [r[0] for r in con.execute(_LOCAL_CLASSES_SQL).fetchall()]
    return resolver, learner

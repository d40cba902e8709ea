"""Python's update: what a change of some files can make other files' names mean, as the resolver
reads them, and the resolution of those files again. Read before the changed files' rows go
(plan_update), applied once their new rows are in (apply_update). The tests of
tests/test_incremental.py and `python -m benchmarks.update_replay` hold it to a full build."""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass
from typing import Callable, Iterable

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from ...columns import IN_GONE, among, column_lists, concat, extracted, insert_arrow, keep_values, register_values, update_by_id
from ...schema import CALLABLE_KINDS, CALLABLES_AND_CLASSES, DEFINITION, PARSED_CALLS_SQL, PROJECT_CALL_SQL, RESOLVED_TABLES
from .expressions import _LOCALS, _METHOD_KINDS, CASED_NAME, _function_scopes, IMPLICIT_PROTOCOLS, IN_CAPITALS, KEEPING, PROTOCOL_CALLS
from .flows import MAX_HOPS
from .resolution import (BINDING_KEY, EVIDENCE, KEEPING_ROWS_SQL, KEEPS_IN_SELF, KEPT_BEFORE_SQL, MAY_KEEP_SQL,
                         PARAMETER_KEY, SCOPE_TABLES, SITE_ROWS_SQL, WRITTEN_ROWS_SQL, WRITTEN_TEXT,
                         call_sites, class_bases, definition_rows, evidence_sql, getattr_strings_sql, in_source_order,
                         keeping_sites, resolve_tables, scope_keys, storing_methods, written_values)
from .carry import Carried, answered_imports, carriers_of, carry, give_back, reached_as_modules
from .learning import BATCHES_AT_MOST, OnFirstRead, learning_resolver


# SQL: a row of the changed files' functions kept apart and resolved again as parts of them
# (_parts, carry.py; as few as the changed files, columns.among)
_IN_PARTS = among("file_id", "_parts")

_INTERFACE_SQL = """
    {definitions}
    UNION ALL SELECT 'import', module || ':' || scope_qualname, coalesce(bound_name, '*'),
        coalesce(target, imported_module) FROM imports WHERE {IN_GONE}
    UNION ALL SELECT 'base', class_qualname, position::VARCHAR, base_text FROM inheritance
        WHERE {IN_GONE}
    {says}
    UNION ALL SELECT 'says', qualname, metaclass, NULL FROM classes
        WHERE {IN_GONE} AND metaclass IS NOT NULL
    UNION ALL SELECT 'says', regexp_replace(scope_qualname, '[.][^.]*$', '') || '.' || substr(text, 6) || ':writes',
        string_agg(DISTINCT value, '\n' ORDER BY value), NULL
        FROM refs WHERE {IN_GONE} AND kind = 'write' AND value IS NOT NULL
            AND regexp_matches(text, '{written}')
        GROUP BY 2
    UNION ALL SELECT 'says', scope_qualname || ':return',
        string_agg(kind || ' ' || name || '=' || coalesce(value, ''), '\n'
                   ORDER BY line, kind, name, coalesce(value, '')), NULL
        FROM bindings WHERE {IN_GONE} AND scope_qualname IN (
            SELECT scope_qualname FROM bindings WHERE {IN_GONE} AND kind = 'return')
        GROUP BY scope_qualname
""".format(written=WRITTEN_TEXT, definitions=DEFINITION.sql(("'def'", "qualname", "kind", "NULL"), where=IN_GONE), IN_GONE=IN_GONE,
           says="\n".join(
    f"""UNION ALL SELECT 'says', qualname, {evidence_sql(t)}, NULL FROM {t}
        WHERE {IN_GONE} AND {evidence_sql(t)} IS NOT NULL
    UNION ALL SELECT 'says', qualname || ':decorators', array_to_string(decorators, '\n'), NULL FROM {t}
        WHERE {IN_GONE} AND len(decorators) > 0""" for t in EVIDENCE))


# The files of the classes the changed files' classes ($classes; NULL: all of them) derive from, at any depth.
_ANCESTOR_FILES_SQL = f"""
    WITH RECURSIVE up(qualname) AS (
        SELECT resolved_base FROM inheritance WHERE {IN_GONE} AND resolved_base IS NOT NULL
            AND ($classes IS NULL OR list_contains($classes, class_qualname))
        UNION SELECT i.resolved_base FROM up JOIN inheritance i ON i.class_qualname = up.qualname
            WHERE i.resolved_base IS NOT NULL)
    SELECT DISTINCT c.file_id FROM classes c JOIN up USING (qualname)
"""
# What the changed and affected files' calls pass arguments to (resolution.call_sites), but the
# steady files' (_Steady.targets); the changed files' functions kept apart and resolved again as
# parts of them (_parts, carry.py) count as the changed files do
_FLOW_TARGETS_SQL = f"""
    SELECT DISTINCT resolved_callee FROM calls
    WHERE ($gone AND ({IN_GONE} OR {_IN_PARTS})
           OR file_id IN (SELECT file_id FROM _affected) AND NOT {_IN_PARTS})
      AND file_id NOT IN (SELECT v FROM _steady)
      AND len(arguments) > 0 AND {SITE_ROWS_SQL} AND resolved_callee IS NOT NULL
"""
# The steady files' calls that pass arguments, with what _Steady.moves reads of them
_STEADY_SITES_SQL = f"""
    SELECT resolved_callee, file_id, caller_qualname, callee_text, arguments FROM calls
    WHERE file_id IN (SELECT v FROM _steady) AND len(arguments) > 0 AND {SITE_ROWS_SQL} AND resolved_callee IS NOT NULL
"""
def _callables_and_classes(columns: tuple[str, ...], where: str) -> str:
    """A UNION (distinct rows) over the tables of functions and classes."""
    return DEFINITION.sql(columns, where=where, tables=CALLABLES_AND_CLASSES, union="UNION")


def _within(inner: str, outer: str) -> str:
    """SQL: the scope `inner` is the function `outer` or nested in it. The outermost functions of
    both are equal: a join hashes on that, where the rest alone compares every pair (a stdlib
    update reaching 3,000 functions: 9.4 s for one statement, 0.04 s with it)."""
    return (f"(split_part({inner}, '{_LOCALS}', 1) = split_part({outer}, '{_LOCALS}', 1)"
            f" AND ({inner} = {outer} OR starts_with({inner}, {outer} || '{_LOCALS}')))")


_FILES_DEFINING_SQL = _callables_and_classes(("file_id",), "qualname IN (SELECT v FROM _q)")
# The names a call gives as its arguments (`fn`, `key=fn`, `*args`: fn, fn, args).
_GIVEN_NAMES = "list_transform(c.arguments, lambda a: ltrim(split_part(a, '=', -1), '*'))"
# The files of the functions (of _q) that call through a parameter or give it to a call (`filter(fn,
# xs)`, `sorted(xs, key=fn)` run it), or whose nested functions do: what their callers pass decides
# what those calls run.
_CALLS_ON_PARAMETERS_SQL = f"""
    SELECT DISTINCT c.file_id FROM parameters p JOIN calls c
      ON {_within('c.caller_qualname', 'p.owner_qualname')}
     AND (split_part(c.callee_text, '.', 1) = p.name OR list_contains({_GIVEN_NAMES}, p.name))
    WHERE p.owner_qualname IN (SELECT v FROM _q) AND p.name NOT IN ('self', 'cls')
"""
# The files calling `self.x()` where a constructor (of _q) stores what a parameter or one of its
# local names holds as x (`self.x = x`, `self.x = partial(fn, *args)`, `fn = args[0]; self.x = fn`:
# Resolver._stored_targets; any attribute whose value names one), or iterating `self.x` where it
# keeps a *x whole (`self.x = tuple(x)`: Containers.stored_star).
_STORED_WORDS = "regexp_extract_all(m.value, '[A-Za-z_][A-Za-z_0-9]*')"
_CALLS_ON_STORED_PARAMETERS_SQL = f"""
    WITH stored AS (
        SELECT m.name, p.kind FROM members m
        JOIN parameters p ON p.owner_qualname = m.class_qualname || '.__init__'
            AND list_contains({_STORED_WORDS}, p.name)
        WHERE m.kind = 'instance_attribute' AND p.owner_qualname IN (SELECT v FROM _q)
        UNION SELECT m.name, 'local' FROM members m
        JOIN bindings b ON b.scope_qualname = m.class_qualname || '.__init__' AND list_contains({_STORED_WORDS}, b.name)
        WHERE m.kind = 'instance_attribute' AND b.scope_qualname IN (SELECT v FROM _q))
    SELECT c.file_id FROM stored s JOIN calls c ON c.callee_text = 'self.' || s.name
    UNION SELECT c.file_id FROM stored s JOIN calls c ON c.callee_text = 'self.' || s.name || '.__iter__'
        WHERE s.kind = 'var-positional' AND c.kind = 'implicit'
"""
# What the functions _q (or functions nested in them) pass their own parameters on to: `call_it(fn)`,
# `run(*args, **kwargs)` (Resolver._forward).
_FORWARDED_TO_SQL = f"""
    SELECT DISTINCT c.resolved_callee FROM calls c JOIN parameters p
      ON {_within('c.caller_qualname', 'p.owner_qualname')}
    WHERE p.owner_qualname IN (SELECT v FROM _q) AND c.resolved_callee IS NOT NULL AND p.name NOT IN ('self', 'cls')
      AND list_contains({_GIVEN_NAMES}, p.name)
"""
# Calls of files not resolved now into definitions of files that are (_q: those and their callers,
# see _flow_sites), with the arguments they pass: Resolver.learn_flows. The rows are found by their
# callee alone first (a scan of one column), then read whole: the other filters pushed into the scan
# let 30,000 of the stdlib's rows through, every column read (twice the time).
_FLOW_SITES_SQL = f"""
    WITH sites AS (SELECT DISTINCT c.* FROM calls c
        WHERE c.rowid IN (SELECT rowid FROM calls WHERE resolved_callee IN (SELECT v FROM _q))
          AND c.file_id NOT IN (SELECT file_id FROM _resolving)
          AND len(c.arguments) > 0 AND {SITE_ROWS_SQL}
          AND c.kind <> 'implicit' AND c.{PROJECT_CALL_SQL})
    SELECT resolved_callee, resolution, kind, arguments, caller_qualname, file_id FROM sites
    ORDER BY file_id, line, col, kind, resolved_callee
"""
# A class of a changed file whose methods are all kept apart (carry.py) is passed nothing that
# what is resolved now reads: its class body and its file's module level bind no parameter.
_CLASSES_RESOLVED = f"""(qualname NOT IN (SELECT qualname FROM classes WHERE file_id IN (SELECT file_id FROM _carriers))
    OR qualname IN (SELECT class_qualname FROM members WHERE file_id IN (SELECT file_id FROM _resolving)
                    AND kind IN ({", ".join(f"'{k}'" for k in sorted(_METHOD_KINDS))})))"""
# The functions and classes of the files resolved now: what is passed to them is learned
# (Flows.learn_flows binds arguments only to those; a variable or an attribute is passed nothing)
_RESOLVING_DEFINITIONS_SQL = f"""
    SELECT qualname FROM ({DEFINITION.sql(("qualname", "kind"), where=f"file_id IN (SELECT file_id FROM _resolving) AND {_CLASSES_RESOLVED}", tables=CALLABLES_AND_CLASSES)})
    WHERE kind IN ('class', {", ".join(f"'{k}'" for k in sorted(CALLABLE_KINDS))})"""
# The classes a call of which may run a constructor that keeps what `self.x` reads in a class of the
# files resolved now (Resolver._stored_targets): their ancestors in the project, wherever defined,
# and every class below those (a subclass runs an __init__ it inherits, or sets x in its own), with
# their __init__. A library's or a builtin's class is no ancestor here: what its constructor is
# passed is never learned (Flows.learn_flows), and a class below it shares a project constructor
# with these only below a project class (`class E(Exception)` does not bring every exception's).
_CONSTRUCTORS_SQL = f"""
    WITH RECURSIVE up(q) AS (
        SELECT qualname FROM classes WHERE file_id IN (SELECT file_id FROM _resolving) AND {_CLASSES_RESOLVED}
        UNION SELECT i.resolved_base FROM up JOIN inheritance i ON i.class_qualname = up.q
            WHERE i.resolved_base IN (SELECT qualname FROM classes)),
    down(q) AS (
        SELECT q FROM up
        UNION SELECT i.class_qualname FROM down JOIN inheritance i ON i.resolved_base = down.q)
    SELECT q FROM down UNION SELECT q || '.__init__' FROM down
"""
_CALLERS_PASSING_SQL = """SELECT DISTINCT caller_qualname FROM calls WHERE resolved_callee IN (SELECT v FROM _q)
                          AND len(arguments) > 0 AND kind <> 'implicit'"""


def _flow_sites(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """The calls of files not resolved now into definitions of files that are (_resolving) and
    into the constructors their classes' attributes may come from, and into their callers up to
    MAX_HOPS - 1 calls away: an argument is followed back through the
    callers' parameters, and a nested caller's through the functions around it (a closure passes
    on what it reads of them). A level at a time, each a hash join (a recursive CTE scanned every
    column of calls: twice as slow)."""
    def around(names: set[str]) -> set[str]:
        return {scope for name in names for scope in _function_scopes(name)}

    here = around({r[0] for sql in (_RESOLVING_DEFINITIONS_SQL, _CONSTRUCTORS_SQL) for r in con.execute(sql).fetchall()})
    frontier = here
    for _ in range(MAX_HOPS - 1):
        register_values(con, "_q", sorted(frontier))
        callers = around({r[0] for r in con.execute(_CALLERS_PASSING_SQL).fetchall()})
        frontier = callers - here
        here |= callers
    register_values(con, "_q", sorted(here))
    return con.execute(_FLOW_SITES_SQL).fetchall()


_MADE = frozenset({"__init_subclass__", "__set_name__"})  # what type.__new__ runs of the project's
_PROTOCOL_CALLS = sorted(PROTOCOL_CALLS)
_IMPLIED = frozenset({"__get__", "__set__", *(name for names in PROTOCOL_CALLS.values() for name in names),
                      *(name for names in IMPLICIT_PROTOCOLS.values() for name in names)})
# When $implicit: the files reading or writing class attributes and decorated methods (descriptors),
# calling the builtins that run a method of their argument, or with implicit calls.
_IMPLICIT_USES_SQL = """SELECT r.file_id FROM refs r JOIN members m ON m.qualname = r.resolved_qualname
                WHERE $implicit AND r.kind IN ('read', 'write')
                  AND (m.kind = 'class_attribute' OR len(m.decorators) > 0)
            UNION SELECT file_id FROM calls WHERE $implicit
                AND (resolution = 'implicit' OR list_contains($protocols, resolved_callee))"""

# When $remade: the files with class statements or `type(name, bases, ns)` calls (what making a class runs).
_CLASS_STATEMENTS_SQL = """SELECT file_id FROM calls WHERE $remade
                AND (kind = 'implicit' AND starts_with(callee_text, 'type(') OR callee_text = 'type')"""

# A changed base ($rebased) moves the classes below it, so two class families defining a name may
# become one or one two (Resolver.by_name): the files with a call or read of a name defined there
# that is unanswered or answered by that guess.
_REGUESSED_SQL = """
    WITH RECURSIVE below(q) AS (
        SELECT unnest($rebased::VARCHAR[])
        UNION SELECT i.class_qualname FROM inheritance i JOIN below b ON i.resolved_base = b.q),
    names AS (SELECT DISTINCT name FROM members WHERE class_qualname IN (SELECT q FROM below))
    SELECT file_id FROM calls WHERE callee_name IN (SELECT name FROM names)
        AND (resolved_callee IS NULL OR resolution IN ('name', 'override'))
    UNION SELECT file_id FROM refs WHERE split_part(text, '.', -1) IN (SELECT name FROM names)
        AND (resolved_qualname IS NULL OR resolution = 'name')
"""
# What making or calling an instance runs (`Sub()` runs an __init__ a base gains; `c = C(); c()`,
# a __call__): the files naming the classes ($made) where such a method came or went, or their subclasses.
_MADE_USES_SQL = """
    WITH RECURSIVE made(qualname) AS (
        SELECT unnest($made::VARCHAR[])
        UNION SELECT i.class_qualname FROM inheritance i JOIN made m ON i.resolved_base = m.qualname)
    SELECT file_id FROM calls WHERE resolved_callee IN (SELECT qualname FROM made)
    UNION SELECT file_id FROM refs WHERE resolved_qualname IN (SELECT qualname FROM made)
"""


def _owner(dotted: str) -> str:
    """SQL: what a dotted name is defined in (`a.b.C.f` -> `a.b.C`)."""
    return f"left({dotted}, length({dotted}) - length(split_part({dotted}, '.', -1)) - 1)"


# What getattr with a string (Resolver._getattr_targets) may now give: the files that call getattr
# with a string (or a local assigned one, either cased) an added name starts with, or an upper-cased
# one where the name is in capitals (a method:
# anywhere, its class may be any object's; a function or class of a module (_added_globals,
# qualnames): only where an import binds a name to the module, a package above it or a module in
# it (`import a.b.c` binds a), or a star import brings names, as a module is an object only by an
# import), and those whose calls a sibling of an
# added definition answers by a string, a container or a return (a registry or visitor in another
# file gains a member).
# What each file's getattr with a string may give, as stored (getattr_strings: a changed file's as it
# was; a rule reaching it reaches the functions of it kept apart, carry.reached_as_modules);
# `home`, the file holding its module's imports
_GETATTR_NAMES = "SELECT file_id, file_id AS home, start, capitals FROM getattr_strings"
# May the name n be one of those (Values._attribute_names)? It has the start, in either case (the
# string may be cased), and is in capitals where the string is upper-cased.
_GIVES = """((c.start <> '' OR c.capitals) AND starts_with(lower({n}), lower(c.start))
             AND (NOT c.capitals OR regexp_full_match({n}, '""" + IN_CAPITALS + """')))"""
_NAMED_BY_STRING_SQL = f"""
    SELECT file_id FROM ({_GETATTR_NAMES}) c
        WHERE EXISTS (SELECT 1 FROM _added_members a WHERE {_GIVES.format(n='a.v')})
            OR EXISTS (SELECT 1 FROM (SELECT v, split_part(v, '.', -1) AS name,
                                             {_owner('v')} AS owner
                                      FROM _added_globals) a JOIN imports i ON i.file_id = c.home
                       WHERE {_GIVES.format(n='a.name')} AND (i.is_star OR EXISTS (
                           SELECT 1 FROM (SELECT coalesce(i.resolved_qualname, i.resolved_module) AS m) r
                           WHERE r.m = a.owner OR starts_with(a.owner, r.m || '.') OR starts_with(r.m, a.owner || '.'))))
    UNION SELECT file_id FROM calls WHERE resolution IN ('getattr', 'container', 'return')
        AND resolved_callee IS NOT NULL
        AND {_owner('resolved_callee')} IN (SELECT v FROM _owners)
"""
# Whatever else changed: the calls and property reads an added method may answer as an override (`x: Base; x.f()`
# runs a new subclass's f too) or that a guess by name (Resolver.by_name) gains or loses, and
# what getattr with a string may now give (_NAMED_BY_STRING_SQL).
# The parts that select rows by a bare name that came (_added) or went (the last parts of _removed),
# each a table and a condition comparing one of its WORD_OF expressions (schema.py) with them: a
# file whose words hold none of those names has no row they select.
_GUESSED_BY_NAME = (
    ("calls", """callee_name IN (SELECT v FROM _added)
        AND (resolution IN ('self', 'type', 'flow', 'alias', 'override', 'name') OR kind = 'property')"""),
    ("calls", "resolved_callee IS NULL AND callee_name IN (SELECT split_part(v, '.', -1) FROM _removed)"),
    ("refs", "resolution = 'name' AND split_part(text, '.', -1) IN (SELECT v FROM _added)"),
    ("refs", "resolved_qualname IS NULL AND split_part(text, '.', -1) IN (SELECT split_part(v, '.', -1) FROM _removed)"))
_ANSWERED_BY_NAME = (
    ("calls", "(resolved_callee IS NULL OR resolution = 'external') AND callee_name IN (SELECT v FROM _added)"),
    ("imports", """resolved_qualname IS NULL
        AND (name IN (SELECT v FROM _added) OR split_part(imported_module, '.', -1) IN (SELECT v FROM _added))"""),
    ("inheritance", "resolved_base IS NULL AND split_part(base_text, '.', -1) IN (SELECT v FROM _added)"),
    ("refs", "resolved_qualname IS NULL AND split_part(text, '.', -1) IN (SELECT v FROM _added)"))


def _by_name(parts: Iterable[tuple[str, str]], among_named: bool = False) -> tuple[str, ...]:
    """The parts as statements; with among_named, of the files _named only (their words hold a name
    of them, and the carriers of those: carry.py)."""
    within = f" AND {among('file_id', '_named')}" if among_named else ""
    return tuple(f"SELECT file_id FROM {table} WHERE ({condition}){within}" for table, condition in parts)


_OVERRIDES_AND_GUESSES = (*_by_name(_GUESSED_BY_NAME), _NAMED_BY_STRING_SQL)
_OVERRIDES_AND_GUESSES_SQL = "\n    UNION ".join(_OVERRIDES_AND_GUESSES)
# The def-only change: the files that pointed at a removed definition, or hold an unresolved
# name (or a call an added override may answer) that an added one may now answer.
_NAMES_CHANGED = (
    "SELECT file_id FROM calls WHERE resolved_callee IN (SELECT v FROM _removed)",
    """SELECT file_id FROM imports
        WHERE resolved_qualname IN (SELECT v FROM _removed) OR resolved_module IN (SELECT v FROM _removed)""",
    "SELECT file_id FROM inheritance WHERE resolved_base IN (SELECT v FROM _removed)",
    "SELECT file_id FROM refs WHERE resolved_qualname IN (SELECT v FROM _removed)",
    _NAMED_BY_STRING_SQL,
    _CLASS_STATEMENTS_SQL,
    _IMPLICIT_USES_SQL)
_BY_NAME = (*_GUESSED_BY_NAME, *_ANSWERED_BY_NAME)
# The files whose words hold one of the names that came or went (_came_or_went)
_NAMED_SQL = "SELECT DISTINCT file_id FROM words WHERE word IN (SELECT v FROM _came_or_went)"
_NAMED_AT_MOST = 64  # files a part by name is read of (columns.among); past it, of every file


def _named(con: duckdb.DuckDBPyConnection, added: set[str], removed: set[str], carried: Carried) -> int | None:
    """The files whose words hold a bare name that came (`added`) or went (of `removed`), and
    their carriers (what a changed file's functions wrote is in its words), kept as the listed
    set _named: how many; None when more than _NAMED_AT_MOST, or when a name is a dunder (the
    calls rows resolution adds, whose words the table leaves out, have such names: WORD_ROWS)."""
    names = added | {q.rpartition(".")[2] for q in removed}
    if any(name.startswith("__") and name.endswith("__") for name in names):
        return None
    register_values(con, "_came_or_went", sorted(names))
    files = {r[0] for r in con.execute(_NAMED_SQL).fetchall()}
    files |= carriers_of(carried, files)
    if len(files) > _NAMED_AT_MOST:
        return None
    register_values(con, "_named", sorted(files), pa.int64(), listed=True)
    return len(files)


def _names_changed_sql(removed: bool, named: int | None) -> str:
    """_NAMES_CHANGED and the parts by name as one statement; without the parts that read _removed
    when nothing was removed (each selects only rows naming a removed definition, and scans a
    table for none); the parts by name only of the files _named when `named` (how many: none, no
    part by name), all the files' when None."""
    by_name = () if named == 0 else _by_name(_BY_NAME, among_named=named is not None)
    return "\n    UNION ".join(part for part in (*_NAMES_CHANGED, *by_name) if removed or "_removed" not in part)
# The files that use a definition of the files _ids whose value, as other files can see it, holds
# an unresolved name ending in one of _names: a class or module attribute, or what a function
# returns (through each name it binds: `x = d.handler; return x`). Uses: calls, refs and imports
# resolved to it, and unresolved calls and refs that end in its name (`K.hook()`, `hook = d.handler`).
_VALUE_USERS_SQL = f"""
    WITH unresolved AS (
        SELECT file_id, callee_text AS text FROM calls WHERE file_id IN (SELECT v FROM _ids)
            AND resolved_callee IS NULL AND callee_name IN (SELECT v FROM _names)
        UNION SELECT file_id, text FROM refs r WHERE file_id IN (SELECT v FROM _ids)
            AND resolved_qualname IS NULL AND split_part(text, '.', -1) IN (SELECT v FROM _names)
            AND (contains(text, '.') OR NOT EXISTS (  -- a name the function (or one around it) binds
                SELECT 1 FROM bindings b WHERE b.name = r.text AND {_within('r.scope_qualname', 'b.scope_qualname')}
                UNION ALL SELECT 1 FROM parameters p
                WHERE p.name = r.text AND {_within('r.scope_qualname', 'p.owner_qualname')}))
        UNION SELECT file_id, bound_name FROM imports WHERE file_id IN (SELECT v FROM _ids)
            AND resolved_qualname IS NULL AND bound_name IS NOT NULL
            AND (name IN (SELECT v FROM _names) OR split_part(imported_module, '.', -1) IN (SELECT v FROM _names))),
    returners AS (SELECT DISTINCT scope_qualname FROM bindings WHERE kind = 'return' AND file_id IN (SELECT v FROM _ids)),
    saying AS (
        SELECT file_id, qualname AS q, concat_ws(' ', value, annotation) AS said FROM members
            WHERE file_id IN (SELECT v FROM _ids)
        UNION ALL SELECT file_id, qualname, concat_ws(' ', value, annotation) FROM globals
            WHERE file_id IN (SELECT v FROM _ids)
        UNION ALL SELECT file_id, scope_qualname, concat_ws(' ', value, annotation) FROM bindings
            WHERE scope_qualname IN (FROM returners)),
    said AS (SELECT DISTINCT s.q, split_part(s.q, '.', -1) AS name FROM saying s JOIN unresolved u
             ON u.file_id = s.file_id AND list_contains(regexp_extract_all(s.said, '[A-Za-z_][A-Za-z_0-9.]*'), u.text))
    SELECT file_id FROM calls WHERE resolved_callee IN (SELECT q FROM said)
        OR resolved_callee IS NULL AND callee_name IN (SELECT name FROM said)
    UNION SELECT file_id FROM refs WHERE resolved_qualname IN (SELECT q FROM said)
        OR resolved_qualname IS NULL AND split_part(text, '.', -1) IN (SELECT name FROM said)
    UNION SELECT file_id FROM imports WHERE resolved_qualname IN (SELECT q FROM said)
"""
# Every name written in what a definition of the project says it holds or returns (its return
# annotation, its parameters' annotations and defaults, its annotation, value, decorators,
# metaclass keyword; a function's return statements and the names it binds, which they may
# return), each marked when written as an attribute (`.name`): who may read a definition through
# its evidence. Strings in
# values and decorators say nothing the resolver reads (`__all__ = ["copyfile", ...]` would name
# everything); in signatures and annotations they may be forward references, and stay.
_UNQUOTED = r"""regexp_replace({}, '[rRbBuUfF]*("([^"\\]|\\.)*"|''([^''\\]|\\.)*'')', '', 'g')"""
_VALUE, _DECORATORS = _UNQUOTED.format("value"), _UNQUOTED.format("array_to_string(decorators, ' ')")
# A signature's return annotation: what it says a call gives (its parameters' names name nothing;
# their annotations and defaults are read from parameters)
_RETURNS = "regexp_extract(signature, '->(.*)$', 1)"
_MENTIONS_SQL = f"""
    CREATE OR REPLACE TEMP TABLE _mentions AS
    SELECT DISTINCT qualname, file_id, regexp_replace(word, '^[.\\s]+', '') AS name, starts_with(word, '.') AS dotted
    FROM (SELECT qualname, file_id, unnest(regexp_extract_all(said, '([.]\\s*)?[A-Za-z_][A-Za-z_0-9]*')) AS word FROM (
        SELECT qualname, file_id, concat_ws(' ', {_RETURNS}, annotation, {_VALUE}, {_DECORATORS}) AS said FROM members
        UNION ALL SELECT qualname, file_id, concat_ws(' ', {_RETURNS}, annotation, {_VALUE}, {_DECORATORS}) FROM globals
        UNION ALL SELECT qualname, file_id, concat_ws(' ', {_RETURNS}, {_DECORATORS}) FROM nested_functions
        UNION ALL SELECT owner_qualname, file_id, concat_ws(' ', annotation, default_value) FROM parameters
        UNION ALL SELECT qualname, file_id, metaclass FROM classes WHERE metaclass IS NOT NULL
        UNION ALL SELECT scope_qualname, file_id, concat_ws(' ', {_VALUE}, annotation) FROM bindings
            WHERE scope_qualname IN (SELECT scope_qualname FROM bindings WHERE kind = 'return')))
"""


def _exported(listed: str) -> str:
    """CTEs: d, the definitions of the listed table (with their bare names); exporting, their
    modules and those that star-import one of them, at any depth; starred, the files star-importing
    one of those (a bare name there may mean a definition of d)."""
    definitions = _callables_and_classes(("qualname", "file_id", "module"), f"qualname IN (SELECT v FROM {listed})")
    return f"""
    d AS (SELECT qualname, file_id, module, split_part(qualname, '.', -1) AS name FROM ({definitions})),
    exporting(module) AS (
        SELECT DISTINCT module FROM d
        UNION SELECT i.module FROM imports i JOIN exporting e
            ON i.is_star AND (i.resolved_module = e.module OR i.imported_module = e.module)),
    starred AS (
        SELECT DISTINCT i.file_id FROM imports i JOIN exporting e
            ON i.is_star AND (i.resolved_module = e.module OR i.imported_module = e.module))"""


# The definitions whose evidence writes a name by which their file may mean one of _q: its own
# file's (`return SHELLS.get(k)`), a name imported from its module or bound to it (`from m import
# make as mk`), one of its file's calls or references resolved to it (`self.cache.get`), any in a
# file star-importing it. Not every name written is a stored call or reference (the receiver of
# a call that resolves to nothing is not), so the names are matched as written; a member of a
# class (`owner`) is named bare only in its class's own definitions, elsewhere as an attribute
# (`.type`: not the `type` of `isinstance(x, type)`). A file's carriers (carry.py) see what it sees.
_MENTIONING_SQL = f"""
    WITH RECURSIVE {_exported("_q")},
    owners AS (SELECT d.name, c.qualname AS owner FROM d LEFT JOIN classes c ON c.qualname = {_owner('d.qualname')}),
    seen AS (
        SELECT file_id, name FROM d
        UNION SELECT i.file_id, d.name FROM imports i JOIN d
            ON i.imported_module = d.module OR i.resolved_module = d.module OR i.resolved_qualname = d.qualname
        UNION SELECT i.file_id, i.bound_name FROM imports i JOIN d ON i.resolved_qualname = d.qualname
        UNION SELECT c.file_id, split_part(c.callee_text, '.', -1) FROM calls c JOIN d ON c.resolved_callee = d.qualname
        UNION SELECT r.file_id, split_part(r.text, '.', -1) FROM refs r JOIN d ON r.resolved_qualname = d.qualname
        UNION SELECT s.file_id, d.name FROM starred s, d),
    seen_here AS (SELECT file_id, name FROM seen
                  UNION SELECT k.carrier, s.name FROM seen s JOIN _carriers k ON k.file_id = s.file_id)
    SELECT DISTINCT m.qualname FROM _mentions m JOIN seen_here s ON m.file_id = s.file_id AND m.name = s.name
    WHERE m.dotted OR EXISTS (SELECT 1 FROM owners o WHERE o.name = m.name
                              AND (o.owner IS NULL OR starts_with(m.qualname, o.owner || '.')))
"""
# The attributes the constructors _q keep (`self.p = p`, `self.inner = ensure(p)`): their values are
# read in the constructor's scope, its parameters' annotations included (Resolver.type_of).
_KEPT_BY_SQL = """SELECT qualname FROM members WHERE kind = 'instance_attribute'
                  AND class_qualname || '.__init__' IN (SELECT v FROM _q)"""
# The files that use a definition of _quals, or star-import one (`HANDLER.f()`: the receiver of a call is no stored reference).
_READERS_SQL = f"""
    WITH RECURSIVE {_exported("_quals")}
    SELECT file_id FROM calls WHERE resolved_callee IN (SELECT v FROM _quals)
    UNION SELECT file_id FROM refs WHERE resolved_qualname IN (SELECT v FROM _quals)
    UNION SELECT file_id FROM imports WHERE resolved_qualname IN (SELECT v FROM _quals)
    UNION SELECT file_id FROM starred
"""
# The files defining one of _quals (their own code may read it by a name no row resolves), and
# whether one is no function there: a function's readers call it, and their calls say so, where a
# value is read by its bare name (which reaches a changed file's functions kept apart: carry.py).
_DEFINERS_SQL = f"""
    SELECT m.file_id, bool_or(d.kind IS NULL OR d.kind NOT IN ({", ".join(f"'{k}'" for k in sorted(CALLABLE_KINDS))}))
    FROM (SELECT DISTINCT qualname, file_id FROM _mentions WHERE qualname IN (SELECT v FROM _quals)) m
    LEFT JOIN ({DEFINITION.sql(("qualname", "kind"))}) d USING (qualname)
    GROUP BY m.file_id
"""


def _readers(con: duckdb.DuckDBPyConnection, retyped: set[str]) -> tuple[list[int], set[str], set[int]]:
    """The files that may resolve differently when what the definitions `retyped` say (hold,
    return, are decorated with) changed: those using them, those using a definition whose own
    evidence reads one of them (`HANDLER = make()`, make's return changed: HANDLER's users too),
    or an attribute a changed constructor keeps, and so on until no definition is added; and
    those definitions, through which a value may read what the retyped ones say; and the readers
    but the files defining only functions among them (the carriers of a changed file that is one
    of these are reached too: carry.carriers_of)."""
    con.execute(_MENTIONS_SQL)
    quals: set[str] = set()
    new = set(retyped)
    while new:
        quals |= new
        register_values(con, "_q", sorted(new))
        found = {r[0] for r in con.execute(_MENTIONING_SQL).fetchall()}
        found |= {r[0] for r in con.execute(_KEPT_BY_SQL).fetchall()}
        new = found - quals
    register_values(con, "_quals", sorted(quals))
    using = {r[0] for r in con.execute(_READERS_SQL).fetchall()}
    definers = dict(con.execute(_DEFINERS_SQL).fetchall())
    return sorted(using | definers.keys()), quals, using | {f for f, bare in definers.items() if bare}


# The files that import from or point into the modules of _changed (`from pkg import sub` by the
# module it names, its target: sub.py may have come or gone); with $retyped (what a definition
# there holds or returns changed), every call and ref resolved by a value.
_USES_CHANGED_SQL = f"""
    SELECT DISTINCT file_id FROM imports i JOIN _changed c
      ON i.imported_module = c.module OR starts_with(i.imported_module, c.module || '.')
         OR i.resolved_qualname = c.module OR starts_with(i.resolved_qualname, c.module || '.')
         OR i.target = c.module OR starts_with(i.target, c.module || '.')
    UNION SELECT DISTINCT file_id FROM calls k JOIN _changed c
      ON starts_with(k.resolved_callee, c.module || '.')
    UNION SELECT DISTINCT file_id FROM inheritance h JOIN _changed c
      ON starts_with(h.resolved_base, c.module || '.')
    UNION SELECT DISTINCT file_id FROM refs r JOIN _changed c
      ON starts_with(r.resolved_qualname, c.module || '.')
    UNION SELECT DISTINCT file_id FROM calls WHERE $retyped
        AND resolution IN ('type', 'alias', 'return', 'container', 'flow', 'override', 'wrapper', 'lambda')
    UNION SELECT DISTINCT file_id FROM refs WHERE $retyped AND resolution IN ('type', 'alias')
    UNION {_CLASS_STATEMENTS_SQL}
    UNION {_IMPLICIT_USES_SQL}
    UNION {_OVERRIDES_AND_GUESSES_SQL}
"""

# The bindings (first column true) and parameters of the functions _s, in one statement: an update
# asks for them a few at a time, as the resolver comes to need them.
_SCOPES_SQL = f"""
    SELECT true, {', '.join(BINDING_KEY)}, {', '.join(f'NULL AS p{i}' for i in range(len(PARAMETER_KEY)))}
    FROM all_bindings WHERE scope_qualname IN (SELECT v FROM _s)
    UNION ALL SELECT false, {', '.join('NULL' for _ in BINDING_KEY)}, {', '.join(PARAMETER_KEY)}
    FROM all_parameters WHERE owner_qualname IN (SELECT v FROM _s)
"""

_SCOPES_HOLDING_SQL = "SELECT DISTINCT scope_qualname FROM all_bindings UNION SELECT owner_qualname FROM all_parameters"


# Queries of functions' local names before all of them are read at once (each scans both tables:
# reading the arguments a hot method is passed from thousands of tests asked 121 times, 0.97 s)
_SCOPES_QUERIED = 3


class ScopeLoader:
    """The local names of functions of files an update does not resolve (Resolver.scope_loader),
    read when the resolver first looks a name up there. Most functions it asks about have none (no
    parameter, no assignment) or are no function: those cost no query. Past _SCOPES_QUERIED
    questions, every function's are read once and handed out from memory, in the same order."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.holding: set[str] | None = None  # the functions with any local name, read at the first question
        self.asked = 0
        self.all: pa.Table | None = None  # every function's rows, ordered by function (stably)
        self.runs: dict[str, tuple[int, int]] = {}  # function -> where its rows are in `all`

    def __call__(self, names: list[str]) -> tuple[list[tuple], list[tuple]]:
        if self.holding is None:
            self.holding = {r[0] for r in self.con.execute(_SCOPES_HOLDING_SQL).fetchall()}
        names = [name for name in names if name in self.holding]
        if not names:
            return [], []
        self.asked += 1
        if self.all is None and self.asked > _SCOPES_QUERIED:
            self._read_all()
        if self.all is not None:
            parts = [self.all.slice(*self.runs[name]) for name in dict.fromkeys(names) if name in self.runs]
            rows = [row for part in parts for row in zip(*(column.to_pylist() for column in part.columns))]
        else:
            register_values(self.con, "_s", names)
            rows = self.con.execute(_SCOPES_SQL).fetchall()
        width = len(BINDING_KEY)
        return [r[1:width + 1] for r in rows if r[0]], [r[width + 1:] for r in rows if not r[0]]

    def _read_all(self) -> None:
        """Every function's rows at once, as Arrow (a dict of Python rows cost 100 MB more on the
        stdlib), each function's in the order a question reads them."""
        register_values(self.con, "_s", sorted(self.holding))
        table = self.con.execute(_SCOPES_SQL).to_arrow_table()
        whose = pc.coalesce(table.column(1), table.column(len(BINDING_KEY) + 1))
        order = pc.sort_indices(pa.table({"k": whose}), sort_keys=[("k", "ascending")])  # stable
        self.all, whose = table.take(order), whose.take(order)
        runs = pc.run_end_encode(whose.combine_chunks())
        start = 0
        for name, end in zip(runs.values.to_pylist(), runs.run_ends.to_pylist()):
            self.runs[name] = (start, end - start)
            start = end


_FIRST_ROWS = f" AND {PARSED_CALLS_SQL}"  # a call's rows as the parser gave them


def _interface_from_db(con: duckdb.DuckDBPyConnection) -> set[tuple]:
    """The names the files being replaced define, import and inherit: what others resolve against."""
    return set(con.execute(_INTERFACE_SQL).fetchall())


def _interface_from_tables(tables: dict[str, pa.Table]) -> set[tuple]:
    definitions = definition_rows(tables)
    out = {("def", q, k, None) for q, k, *_rest in definitions}
    out |= {("says", q, said, None) for q, _k, _layer, _module, said, *_rest in definitions if said is not None}
    out |= {("says", f"{q}:decorators", "\n".join(d), None) for q, _k, _layer, _module, _s, d, *_rest in definitions
            if d}
    # What functions return and the names they bind (Resolver._returned), as _INTERFACE_SQL says it.
    bound: dict[str, list[tuple]] = {}
    returning = set()
    for scope, name, kind, line, value in zip(*column_lists(tables["bindings"],
                                                        ("scope_qualname", "name", "kind", "line", "value"))):
        bound.setdefault(scope, []).append((line, kind, name, value or ""))
        if kind == "return":
            returning.add(scope)
    out |= {("says", f"{q}:return", "\n".join(f"{k} {n}={v}" for _line, k, n, v in sorted(bound[q])), None)
            for q in returning}
    # What methods write to `self.<name>` (Values._written), as _INTERFACE_SQL says it.
    writes: dict[str, set[str]] = {}
    for scope, text, kind, value in zip(*column_lists(tables["refs"], ("scope_qualname", "text", "kind", "value"))):
        if kind == "write" and value is not None and re.match(WRITTEN_TEXT, text):
            writes.setdefault(f"{scope.rpartition('.')[0]}.{text[5:]}:writes", set()).add(value)
    out |= {("says", key, "\n".join(sorted(values)), None) for key, values in writes.items()}
    imports = tables["imports"]
    for module, scope, bound, target, imported in zip(*column_lists(
            imports, ("module", "scope_qualname", "bound_name", "target", "imported_module"))):
        out.add(("import", f"{module}:{scope}", bound or "*", target or imported))
    for qualname, position, text in zip(*column_lists(tables["inheritance"], ("class_qualname", "position", "base_text"))):
        out.add(("base", qualname, str(position), text))
    return out


_SITE_KEY = ("caller_qualname", "callee_text", "kind", "arguments")
_PASSED_SQL = f"""SELECT {', '.join(_SITE_KEY)} FROM calls WHERE {IN_GONE}
                  AND len(arguments) > 0 AND kind <> 'implicit' {_FIRST_ROWS}"""
_SCOPE_SQL = {"bindings": f"SELECT {', '.join(BINDING_KEY)} FROM bindings WHERE {IN_GONE}",
              "parameters": f"SELECT {', '.join(PARAMETER_KEY)} FROM parameters WHERE {IN_GONE}"}
_SAID_SQL = f"""SELECT name, value, annotation FROM members WHERE {IN_GONE}
               UNION ALL SELECT name, value, annotation FROM globals WHERE {IN_GONE}"""
# What the changed files' functions kept apart and resolved again as parts of them (_parts) return
_PARTS_RETURNED_SQL = f"""SELECT value FROM bindings WHERE {_IN_PARTS} AND kind = 'return'
                         AND value IS NOT NULL"""
# The functions of _parts whose local values, defaults or annotations name one of $words
_PARTS_SAYING_SQL = f"""
    SELECT scope_qualname FROM bindings WHERE {_IN_PARTS}
        AND regexp_matches(concat_ws(' ', CASE WHEN kind <> 'return' THEN value END, annotation), $words)
    UNION SELECT owner_qualname FROM parameters WHERE {_IN_PARTS}
        AND regexp_matches(concat_ws(' ', default_value, annotation), $words)
"""
_IDENTIFIER_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


# The changed files' calls as they were and their parts' (_parts), with what each ran (_FLOW_TARGETS_SQL's rows)
_MOVING_TARGETS_SQL = f"""SELECT {', '.join(_SITE_KEY)}, resolved_callee FROM calls
    WHERE ({IN_GONE} OR {_IN_PARTS})
      AND len(arguments) > 0 AND {SITE_ROWS_SQL} AND resolved_callee IS NOT NULL"""


@dataclass
class Moved:
    """The changed files' calls that may pass something else now (moved_calls): every one, or
    those that differ from before (`keys`, by caller, text, kind and arguments), name a local name
    or parameter whose value may differ (`names`: (function, name), the call's function or one
    around it; `super()` any of them), are written in a function kept apart whose values name a
    changed definition (`scopes`, or nested in one), or name a definition that came or went or
    through which a value reads what a retyped one says (`words`)."""

    every: bool = False
    keys: frozenset = frozenset()
    scopes: frozenset = frozenset()
    words: frozenset = frozenset()
    names: frozenset = frozenset()

    def moves(self, caller: str, text: str, kind: str, arguments: Iterable[str]) -> bool:
        if self.every:
            return True
        if (caller, text, kind, tuple(arguments)) in self.keys:
            return True
        around = _function_scopes(caller)
        if not self.scopes.isdisjoint(around):
            return True
        said = set(_IDENTIFIER_WORD.findall(" ".join((text, *arguments))))
        if not self.words.isdisjoint(said):
            return True
        if "super" in said:  # passes the function's first parameter, by whatever name
            return any(scope in around for scope, _name in self.names)
        return any((scope, word) in self.names for scope in around for word in said)


def _grown(out: set, rows: Iterable[tuple], reads: Callable[[object, set[str]], bool]) -> set:
    """`out` with the key of each row (key, words) whose words `reads` says read one of it, to a
    fixpoint: a name whose value names a changed name holds something else too."""
    rows = list(rows)
    grown = True
    while grown:
        grown = False
        for key, said in rows:
            if key not in out and reads(key, said):
                out.add(key)
                grown = True
    return out


def _words_of(*texts: str | None) -> set[str]:
    return set(_IDENTIFIER_WORD.findall(" ".join(t for t in texts if t)))


def _changed_names(changed: set[tuple[str, str]], bindings: Iterable[tuple]) -> frozenset:
    """The local names whose value may differ: those whose rows differ or whose value names a
    changed definition (`changed`), and those whose value or annotation names one of them, in
    their function or one around it, to a fixpoint. bindings: (scope, name, value, annotation)
    rows, as they were and are."""
    out = set(changed)
    rows = (((scope, name), _words_of(value, annotation)) for scope, name, value, annotation in bindings)
    return frozenset(_grown(out, rows, lambda key, said: any((s, w) in out for s in _function_scopes(key[0])
                                                             for w in said)))


def moved_calls(con, fresh: dict[str, pa.Table], came_and_went: set[str], names: list[str],
                reading: set[str] = frozenset()) -> Moved:
    """Which calls of the changed files may give other arguments, read in other scopes, than
    before: what the others pass into other files' functions is what it was, and those files'
    calls through parameters need no new answer for them. Only for changes that add or remove
    definitions (`came_and_went`, their names in `names`) or change what definitions say
    (`reading`: the names of the definitions through which a value may read that, _readers).
    Return statements are left out: one differs only where what its function says changed, and
    a value reads it only by calling the function, by one of those names; but a return naming a
    definition that came or went moves every call. A call moves where it names what may hold
    something else: a local name or parameter whose rows differ or whose value names such a name
    or a changed definition, an attribute or module-level name whose value names one (a call
    that names none passes what it passed). The changed files' functions kept apart that are
    resolved again as parts of them (_parts) are read with them."""
    def own(scope: str | None) -> bool:  # of a definition that came or went, or nested in one
        return scope is not None and not came_and_went.isdisjoint(_function_scopes(scope))

    def counted(rows: Iterable[tuple], skip_own: bool = True) -> collections.Counter:
        return collections.Counter(tuple(tuple(v) if isinstance(v, (list, tuple)) else v for v in row)
                                   for row in rows if not (skip_own and own(row[0])))

    def not_returns(table: str, rows: Iterable[tuple]) -> list[tuple]:
        return [row for row in rows if table != "bindings" or row[BINDING_KEY.index("kind")] != "return"]

    def names_one(text: str | None, words: set[str]) -> bool:
        return bool(text) and not words.isdisjoint(_IDENTIFIER_WORD.findall(text))

    wanted, changed = set(names), set(names) | set(reading)
    returned = [value for value, kind in zip(*column_lists(fresh["bindings"], ("value", "kind")))
                if kind == "return" and value]
    returned += [r[0] for r in con.execute(_PARTS_RETURNED_SQL).fetchall()]
    if any(names_one(text, wanted) for text in returned):
        return Moved(every=True)
    # an attribute or module-level name whose value (as it was or is) names a changed one is one
    # too: a call names it to pass what it holds (`run(HANDLER)`, `self.handler`)
    said = [*con.execute(_SAID_SQL).fetchall(), *(row for table in ("members", "globals") for row in zip(
        *column_lists(fresh[table], ("name", "value", "annotation"))))]
    _grown(changed, ((name, _words_of(value, annotation)) for name, value, annotation in said),
           lambda _name, words: not changed.isdisjoint(words))
    calls = [row for row in zip(*column_lists(fresh["calls"], _SITE_KEY)) if row[3] and row[2] != "implicit"]
    now, before = counted(calls, False), counted(con.execute(_PASSED_SQL).fetchall(), False)
    keys = frozenset((now - before).keys() | (before - now).keys())
    named: set[tuple[str, str]] = set()  # (function, local name or parameter) whose rows differ
    values: list[tuple] = []  # the local names' values, as they were and are
    for table, key in (("bindings", BINDING_KEY), ("parameters", PARAMETER_KEY)):
        now = counted(not_returns(table, zip(*column_lists(fresh[table], key))))
        before = counted(not_returns(table, con.execute(_SCOPE_SQL[table]).fetchall()))
        at = key.index("name")
        named |= {(row[0], row[at]) for row in (now - before) + (before - now)}
        if table == "bindings":
            values += [(row[0], row[at], row[key.index("value")], row[key.index("annotation")]) for row in now | before]
    # a local value, default or annotation naming a changed definition passes it on
    for scope, name, value, annotation, kind in zip(*column_lists(fresh["bindings"], ("scope_qualname", "name", "value",
                                                                                     "annotation", "kind"))):
        if names_one(annotation, changed) or kind != "return" and names_one(value, changed):
            named.add((scope, name))
    for owner, name, default, annotation in zip(*column_lists(fresh["parameters"], ("owner_qualname", "name",
                                                                                    "default_value", "annotation"))):
        if names_one(default, changed) or names_one(annotation, changed):
            named.add((owner, name))
    scopes = {r[0] for r in con.execute(_PARTS_SAYING_SQL, _words(changed)).fetchall()} if changed else set()
    return Moved(keys=keys, scopes=frozenset(scopes), words=frozenset(changed), names=_changed_names(named, values))


class _Forwarding:
    """_FORWARDED_TO_SQL for the changed files' calls, which are not stored yet: the calls that
    give a parameter of the function they are written in (or of one around it) as an argument."""

    def __init__(self, resolver, calls: pa.Table, modules: dict[int, str]) -> None:
        self.resolver = resolver
        self.texts, files, self.callers, kinds, arguments = column_lists(
            calls, ("callee_text", "file_id", "caller_qualname", "kind", "arguments"))
        self.modules = [modules[f] for f in files]
        self.by_function: dict[str, list[int]] = collections.defaultdict(list)
        for i, (caller, kind, given) in enumerate(zip(self.callers, kinds, arguments)):
            if not given or kind == "implicit":
                continue
            names = {a.rpartition("=")[2].lstrip("*") for a in given}
            for function in _function_scopes(caller):
                facts = resolver.scope_facts.get(function, {})
                if any(facts.get(n, ("",))[0] == "parameter" for n in names - {"self", "cls"}):
                    self.by_function[function].append(i)
        self.answers: dict[int, str | None] = {}

    def of(self, functions: Iterable[str]) -> list[int]:
        return sorted({i for f in functions for i in self.by_function.get(f, ())})

    def resolved(self, i: int) -> str | None:
        if i not in self.answers:
            self.answers[i] = self.resolver.resolve_call(self.texts[i], self.modules[i], self.callers[i])[0]
        return self.answers[i]


def _moving(moved: Moved, calls: pa.Table) -> pa.Table:
    """The calls rows that may pass something else now."""
    keep = [moved.moves(*row) for row in zip(*column_lists(calls, _SITE_KEY))]
    return calls.filter(pa.array(keep, pa.bool_())) if calls.num_rows else calls


def _given(resolver, callees: Iterable[str | None]) -> set[str]:
    """The functions that get the arguments of calls to these callees: each callee, and a class's __init__."""
    out = set()
    for callee in callees:
        out.add(callee)
        if resolver.defs.get(callee) == "class":
            out.add(resolver.member(callee, "__init__"))
    out.discard(None)
    return out



# The local names and parameters of the steady files whose value, default or annotation says one
# of the words ($words).
_SAYING_SCOPES_SQL = """
    SELECT scope_qualname FROM bindings WHERE file_id IN (SELECT v FROM _steady) AND kind <> 'return'
        AND regexp_matches(concat_ws(' ', value, annotation), $words)
    UNION SELECT owner_qualname FROM parameters WHERE file_id IN (SELECT v FROM _steady)
        AND regexp_matches(concat_ws(' ', default_value, annotation), $words)
"""


class _Steady:
    """Files re-resolved as readers of what some definitions say, and nothing else (plan_update):
    a call of theirs may run or pass something else only where it reads such a value, through a
    name of `reading` written in the call (its callee or arguments) or in a local name, parameter
    default or annotation of its function or of one around it. Their other calls pass what they
    passed to what they ran: no new answer for what those functions are passed."""

    def __init__(self, con: duckdb.DuckDBPyConnection, files: set[int], reading: set[str]) -> None:
        self.files, self.reading = files, reading
        self.scopes: set[str] = set()
        register_values(con, "_steady", sorted(files), pa.int64())
        if files and reading:
            self.scopes = {r[0] for r in con.execute(_SAYING_SCOPES_SQL, _words(reading)).fetchall()}

    def targets(self, con: duckdb.DuckDBPyConnection, gone: bool) -> list[str]:
        """What the changed (when `gone`) and affected files' calls passed arguments to: the steady
        files' at the calls that may move only."""
        out = {r[0] for r in con.execute(_FLOW_TARGETS_SQL, {"gone": gone}).fetchall()}
        if self.files:
            out |= {callee for callee, *site in con.execute(_STEADY_SITES_SQL).fetchall() if self.moves(*site)}
        return sorted(out)

    def moving(self, calls: pa.Table) -> pa.Table:
        """The calls (first rows) that may run or pass something else now: those of files not
        steady, and the steady files' that may move."""
        if not self.files:
            return calls
        sites = zip(*column_lists(calls, ("file_id", "caller_qualname", "callee_text", "arguments")))
        return calls.take(pa.array([i for i, site in enumerate(sites) if self.moves(*site)], pa.int64()))

    def moves(self, file_id: int, caller: str, text: str, arguments: Iterable[str]) -> bool:
        """May this call run or pass something else now?"""
        if file_id not in self.files:
            return True
        return any(self.reading.intersection(_IDENTIFIER_WORD.findall(said)) for said in (text, *arguments)) \
            or not self.scopes.isdisjoint(_function_scopes(caller))


def _words(names: Iterable[str]) -> dict[str, str]:
    """The parameter $words: a regular expression matching any of the names as a word."""
    return {"words": r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b"}


@dataclass
class Plan:
    """What plan_update read of the rows an update replaces, for apply_update."""

    changed: set  # interface items (def, import, base) that came or went
    overridden: list[str] | None  # classes whose ancestors' `self.f()` may run another override (None: all)
    affected: list[int]  # other files whose names may mean something else now
    moved: Moved  # the changed files' calls that may pass into other files' functions what they did not
    old_flow_targets: list[str]  # what the changed and affected files passed arguments to before
    fresh_files: set[int]
    steady: _Steady  # the affected files whose calls pass on what they passed, but some
    carried: Carried  # the changed files' unchanged functions, as files of their own (carry.py)
    parts: set[int]  # the carriers resolved again as parts of their file: they pass what it passes


_PYTHON_FILES = "SELECT file_id FROM files WHERE language = 'python'"


# What keeps a value in a container of these names (as a word: $words), or holds what a function
# of these names returns: the names of the attributes and variables that do.
_HOLDING_SQL = """SELECT name FROM members WHERE regexp_matches(value, $words)
                  UNION SELECT name FROM globals WHERE regexp_matches(value, $words)"""
_SAYING_SQL = """SELECT file_id FROM bindings WHERE regexp_matches(value, $words)
    UNION SELECT file_id FROM calls WHERE regexp_matches(callee_text, $words)
    UNION SELECT file_id FROM refs WHERE regexp_matches(text, $words)"""
# The containers the calls of a method (that starts or stops keeping a value) are made on ($method)
_CALLED_ON_SQL = """SELECT DISTINCT callee_text FROM calls WHERE NOT alternative AND kind = 'call'
                    AND ends_with(callee_text, '.' || $method)"""


_ATTRIBUTES_NAMED_SQL = """SELECT qualname FROM members WHERE list_contains($names, name)
                            AND kind IN ('instance_attribute', 'class_attribute')"""


def _kept_readers(con: duckdb.DuckDBPyConnection, fresh: dict[str, pa.Table]) -> list[int]:
    """The files that may read what the changed files keep in a container (Containers._kept_in),
    when that changed: whatever mentions the container's name, or the name of what holds a local
    container a function returns (`self.procs = build_procs()`); and for a method that starts or
    stops keeping its argument in its instance, the containers it is called on."""
    may = {r[0] for r in con.execute(MAY_KEEP_SQL, {"keeping": sorted(KEEPING)}).fetchall()}
    may |= {name for name, kind in zip(*column_lists(fresh["members"], ("name", "kind"))) if kind == "method"}

    def sites(table: pa.Table) -> set[tuple]:  # a site in an attribute read where its class or module reads it
        out = set()
        for text, caller, kind, arguments in zip(*column_lists(table, ("callee_text", "caller_qualname", "kind",
                                                                       "arguments"))):
            if kind == "call" and arguments and "." in text and text.rpartition(".")[2] in may:
                local = "." not in text.rpartition(".")[0]
                out.add((text, caller if local else caller.rpartition(".")[0], tuple(arguments)))
            elif re.match(KEEPS_IN_SELF, text):
                out.add((text, caller, ()))
        return out

    differ = sites(con.execute(KEPT_BEFORE_SQL).to_arrow_table()) ^ sites(fresh["calls"])
    names: set[str] = set()
    for text, caller, arguments in differ:
        if not arguments:  # a method that keeps in self.<x>: the containers it is called on
            method = caller.rpartition(".")[2]
            texts = [r[0] for r in con.execute(_CALLED_ON_SQL, {"method": method}).fetchall()]
        else:
            texts = [text]
        for said in texts:
            container = said.rpartition(".")[0]
            names.add(container.rpartition(".")[2])
            if "." not in container:  # a local: what holds what its function returns
                names.add(caller.rpartition(".")[2])
    if not names:
        return []
    names |= {r[0] for r in con.execute(_HOLDING_SQL, _words(names)).fetchall()}
    return [r[0] for r in con.execute(_SAYING_SQL, _words(names)).fetchall()]


def plan_update(con: duckdb.DuckDBPyConnection, fresh: dict[str, pa.Table]) -> Plan:
    """Before the changed files' rows (_gone) are deleted: the files their change reaches (into
    the temp table _affected) and what they passed on. When the changed files still define and
    import the same names, no other file can resolve differently. When only definitions changed,
    re-resolve the files that pointed at a removed one or hold an unresolved name an added one may
    now answer. Otherwise (their imports or bases changed) re-resolve every file that points into
    a changed module (_changed)."""
    carried = carry(con, fresh)  # the changed files' unchanged functions: as another file's, from here on
    gone_ids = [r[0] for r in con.execute("SELECT file_id FROM _gone").fetchall()]
    fresh_files = {r[0] for r in con.execute("SELECT file_id FROM _fresh").fetchall()}
    old_interface = _interface_from_db(con)
    new_interface = _interface_from_tables(fresh)
    # What a definition holds or returns (its evidence, for calls resolved by type) changed?
    old_says = {item[1]: item[2] for item in old_interface if item[0] == "says"}
    new_says = {item[1]: item[2] for item in new_interface if item[0] == "says"}
    kept = {i[1] for i in old_interface if i[0] == "def"} & {i[1] for i in new_interface if i[0] == "def"}
    retyped_defs = {q.partition(":")[0] for q in old_says.keys() | new_says.keys()
                    if q.partition(":")[0] in kept and old_says.get(q) != new_says.get(q)}
    # what `self.<name> = v` writes in a class is what that attribute holds in its whole family
    rewritten = sorted({q.partition(":")[0].rpartition(".")[2] for q in old_says.keys() | new_says.keys()
                        if q.endswith(":writes") and old_says.get(q) != new_says.get(q)})
    if rewritten:
        retyped_defs |= {r[0] for r in con.execute(_ATTRIBUTES_NAMED_SQL, {"names": rewritten}).fetchall()}
    retyped = bool(retyped_defs)
    changed = {item for item in old_interface ^ new_interface if item[0] != "says"}
    # A class that came or went takes its bases along: no other file names it but by a name that
    # came or went (resolved to it, or unresolved and now its), like any definition's.
    new_or_gone = {item[1] for item in changed if item[0] == "def" and item[2] == "class"}
    rebased = [item for item in changed if item[0] == "base" and item[1] not in new_or_gone]
    # Reads and writes of class attributes may run a descriptor's __get__/__set__ (Resolver.accessor),
    # len(x) x's __len__ (Resolver._protocol_targets): what x holds, those methods or the bases changed.
    implicit = bool(rebased) or any(item[0] == "def" and item[1].rpartition(".")[2] in _IMPLIED for item in changed)
    # A class statement runs its metaclass (its own keyword's or a base's), a base's __init_subclass__
    # and the __set_name__ of what its body holds: any of them changed?
    classes = {i[1] for i in old_interface | new_interface if i[0] == "def" and i[2] == "class"}
    remade = bool(rebased) or any(item[0] == "def" and item[1].rpartition(".")[2] in _MADE for item in changed) \
        or any(old_says.get(q) != new_says.get(q) for q in classes - new_or_gone)
    def_like = all(item[0] == "def" or item[0] == "base" and item[1] in new_or_gone for item in changed)
    flags = {"implicit": implicit, "protocols": _PROTOCOL_CALLS, "remade": remade}
    came_and_went = {item[1] for item in changed if item[0] == "def"}
    names = sorted({q.rpartition(".")[2] for q in came_and_went})
    others: list[int] = []
    affected: list[int] = []
    register_values(con, "_removed", sorted({item[1] for item in old_interface - new_interface}))
    added_names = {item[1].rpartition(".")[2] for item in new_interface - old_interface}
    # an implicit row names the protocol's first method (`a.__iadd__`, `x.__bool__`): it may now run an added fallback
    added_names |= {head for head, names in IMPLICIT_PROTOCOLS.items() if added_names.intersection(names)}
    register_values(con, "_added", sorted(added_names))
    added_defs = {item[1] for item in new_interface - old_interface if item[0] == "def"}
    register_values(con, "_added_members", sorted({q.rpartition(".")[2] for q in added_defs
                                                   if q.rpartition(".")[0] in classes}))
    register_values(con, "_added_globals", sorted(q for q in added_defs if q.rpartition(".")[0] not in classes))
    register_values(con, "_owners", sorted({item[1].rpartition(".")[0] for item in new_interface - old_interface
                                            if item[0] == "def"}))
    if def_like and (changed or remade):  # remade: a class's metaclass keyword changed
        removed = bool(old_interface - new_interface)
        named = _named(con, added_names, {item[1] for item in old_interface - new_interface}, carried)
        affected = [r[0] for r in con.execute(_names_changed_sql(removed, named), flags).fetchall()]
        others = sorted(set(affected) - set(gone_ids))
        if others:
            # A name means something else now: so does a value of these files that says it
            # (`def make(): return d.handler`, d.handler added), and what uses those values follows.
            register_values(con, "_ids", others, pa.int64())
            register_values(con, "_names", names)
            affected += [r[0] for r in con.execute(_VALUE_USERS_SQL).fetchall()]
    reading: set[str] = set()  # the names through which a value may read what the retyped definitions say
    readers: list[int] = []
    reading_files: set[int] = set()  # the readers that reach a changed file's carriers (carry.carriers_of)
    if def_like and retyped:
        readers, through, reading_files = _readers(con, retyped_defs)
        reading = {q.rpartition(".")[2] for q in through}
    if not def_like:  # imports or bases changed: a name of these files may mean another thing now
        affected = [r[0] for r in con.execute(_USES_CHANGED_SQL, {"retyped": retyped, **flags}).fetchall()]
    if rebased:
        affected += [r[0] for r in con.execute(_REGUESSED_SQL, {"rebased": sorted({i[1] for i in rebased})}).fetchall()]
    made = sorted({item[1].rpartition(".")[0] for item in changed
                   if item[0] == "def" and item[1].rpartition(".")[2] in ("__init__", "__new__", "__call__")})
    if made:
        affected += [r[0] for r in con.execute(_MADE_USES_SQL, {"made": made}).fetchall()]
    # A `self.f()` in an ancestor may run an override added or removed here, `cls()` a subclass: the
    # classes whose members, bases or existence changed. When imports changed, or a base as written
    # names a value that reads what a retyped definition says, a base may now resolve elsewhere:
    # every class of the changed files.
    based_on_reading = retyped and (not def_like or any(reading.intersection(_IDENTIFIER_WORD.findall(text))
                                                        for text in fresh["inheritance"].column("base_text").to_pylist()))
    overridden = None if based_on_reading or any(item[0] == "import" for item in changed) else sorted(
        {item[1] for item in changed if item[0] == "base" or item[0] == "def" and item[2] == "class"}
        | {owner for item in changed if item[0] == "def" and (owner := item[1].rpartition(".")[0]) in classes})
    if (changed or retyped) and overridden != []:
        affected += [r[0] for r in con.execute(_ANCESTOR_FILES_SQL, {"classes": overridden}).fetchall()]
    affected += _kept_readers(con, fresh)
    # Files affected only as readers of what retyped definitions say, when nothing else changed:
    # their answers may change only where their code names a definition through which a value
    # reads that (`reading`), so what they pass on changes at those calls only (_Steady).
    steady = set(readers) - set(affected) if not (changed or implicit or remade or made) else set()
    # A rule reaching a changed file reads it as its module: its functions kept apart too, and
    # its imports resolved again.
    kept_apart = reached_as_modules(carried, set(affected) | reading_files)
    parts = kept_apart - set(affected) - set(readers)  # resolved again as parts of their file, not as readers
    register_values(con, "_parts", sorted(parts), pa.int64(), listed=True)
    steady -= kept_apart
    affected += readers
    affected += kept_apart
    python_files = {r[0] for r in con.execute(_PYTHON_FILES).fetchall()}
    affected = sorted((set(affected) - set(gone_ids)) & python_files)
    steady = _Steady(con, steady & set(affected), reading)
    keep_values(con, "_affected", "file_id", affected)
    # The functions the changed and affected files passed arguments to: what their parameters
    # may hold changes with them, unless the changed files pass what they passed.
    moved = moved_calls(con, fresh, came_and_went, names, reading) \
        if not (implicit or remade or made or others) and def_like else Moved(every=True)
    old_flow_targets = steady.targets(con, moved.every)
    if not moved.every:  # what the calls that may pass something else passed to
        old_flow_targets = sorted({*old_flow_targets, *(row[-1] for row in con.execute(_MOVING_TARGETS_SQL).fetchall()
                                                         if moved.moves(*row[:4]))})
    return Plan(changed, overridden, affected, moved, old_flow_targets, fresh_files, steady, carried, parts)


# An update that resolves more files than this learns the whole repository at once: a module at a
# time costs more past it (each lookup a method call, each module's rows a filter of the tables;
# the 80 files a changed return reaches in the stdlib took 14 s so, 8 s at once).
LEARNED_AT_MOST = 10


def apply_update(con: duckdb.DuckDBPyConnection, plan: Plan, fresh: dict[str, pa.Table],
                 modules: dict[int, str]) -> int:
    """Once the changed files' rows are in but their resolved tables: resolve those, the affected
    files', and those of the files their arguments now flow into; the number of other files."""
    changed, overridden, affected, fresh_ids = plan.changed, plan.overridden, plan.affected, plan.fresh_files
    gone_ids = {r[0] for r in con.execute("SELECT file_id FROM _gone").fetchall()}
    # What the resolver needs from the rest of the repository, learned as its lookups ask.
    where = "WHERE file_id IN (SELECT file_id FROM _affected)"
    resolver, learner = learning_resolver(con, fresh, modules)
    if len(affected) + len(fresh_ids) > LEARNED_AT_MOST:  # and again once the files arguments flow into are known
        learner.everything()
    resolver.scope_loader = ScopeLoader(con)

    def kept() -> dict[str, list[tuple]]:
        rows = con.execute(KEEPING_ROWS_SQL, {"keeping": sorted(KEEPING)}).to_arrow_table()
        rows = in_source_order(pa.concat_tables([rows, fresh["calls"].select(rows.column_names).cast(rows.schema)]),
                               modules)  # as a full build keeps them
        learner.many(storing_methods(rows))  # what keeping_sites looks up, at once
        return keeping_sites(rows, modules, resolver.defs)

    def written() -> dict[str, list[tuple[str, str, str]]]:
        rows = con.execute(WRITTEN_ROWS_SQL).to_arrow_table()
        return written_values(pa.concat_tables([rows, fresh["refs"].select(rows.column_names).cast(rows.schema)]),
                              modules)

    resolver.kept, resolver.written = OnFirstRead(kept), OnFirstRead(written)
    # What the changed and affected files now pass arguments to, and the ancestors of the classes
    # they define: re-resolved too (their files are `flowing`).
    resolver.learn_scopes(*scope_keys({name: concat(name, [extracted(con, name, where), fresh[name]])
                                        for name in SCOPE_TABLES}))
    resolver.class_tree()
    register_values(con, "_parts", sorted(plan.parts), pa.int64(), listed=True)
    if plan.moved.every:
        calls = concat("calls", [extracted(con, "calls", where + _FIRST_ROWS), fresh["calls"]])
    else:  # the parts' and the changed files' calls that may pass something else
        others = extracted(con, "calls", where + _FIRST_ROWS + f" AND NOT {_IN_PARTS}")
        parts = extracted(con, "calls", f"WHERE {_IN_PARTS}" + _FIRST_ROWS)
        calls = concat("calls", [others, *(_moving(plan.moved, t) for t in (parts, fresh["calls"]))])
    reached = set(plan.old_flow_targets)
    texts, fids, callers, kinds, arguments = column_lists(plan.steady.moving(calls), ("callee_text", "file_id",
                                                                                      "caller_qualname", "kind", "arguments"))
    reached |= _given(resolver, (site[0] for site in call_sites(resolver, texts, [modules[f] for f in fids], callers,
                                                                kinds, arguments)))
    forwarding = _Forwarding(resolver, fresh["calls"], modules)  # the changed files' calls
    for _ in range(MAX_HOPS):  # `def wrap(*args): run(*args)`: what wrap is given, run is given too
        register_values(con, "_q", sorted(reached))
        onward = _given(resolver, (r[0] for r in con.execute(_FORWARDED_TO_SQL).fetchall()))
        onward |= _given(resolver, (forwarding.resolved(i) for i in forwarding.of(reached)))
        if onward <= reached:
            break
        reached |= onward
    register_values(con, "_q", sorted(reached))
    flowing = {r[0] for sql in (_CALLS_ON_PARAMETERS_SQL, _CALLS_ON_STORED_PARAMETERS_SQL)
               for r in con.execute(sql).fetchall()}
    if changed:
        ancestors = {a for q in fresh["classes"].column("qualname").to_pylist()
                     if overridden is None or q in overridden for a in resolver.mro(q)[1:]}
        register_values(con, "_q", sorted(ancestors))
        defining = {r[0] for r in con.execute(_FILES_DEFINING_SQL).fetchall()}
        flowing |= defining | carriers_of(plan.carried, defining)  # a class's methods may be kept apart
    flowing -= set(affected) | gone_ids | fresh_ids
    if flowing:
        flowing &= {r[0] for r in con.execute(_PYTHON_FILES).fetchall()}
    if len(affected) + len(flowing) + len(fresh_ids) > LEARNED_AT_MOST:
        learner.everything()
    if flowing:
        keep_values(con, "_affected", "file_id", sorted(set(affected) | flowing))
    to_resolve, answered = answered_imports(plan.carried, fresh["imports"])
    redo = {name: concat(name, [extracted(con, name, where + (_FIRST_ROWS if name == "calls" else "")),
                                  to_resolve if name == "imports" else fresh[name]]) for name in RESOLVED_TABLES}
    scopes = {name: concat(name, [extracted(con, name, where), fresh[name]]) for name in SCOPE_TABLES}
    # The calls of the other files into what is resolved here, and what their callers' names mean.
    keep_values(con, "_resolving", "file_id", sorted(set(affected) | flowing | set(fresh_ids)))
    sites = _flow_sites(con)
    callers = sorted({site[-1] for site in sites})  # their files
    if len(callers) > BATCHES_AT_MOST:  # what their arguments say is read a batch of modules at a time, then all
        learner.everything()
    if callers:
        register_values(con, "_ids", callers, pa.int64())
        resolver.learn_scopes(*scope_keys({name: extracted(con, name, "WHERE file_id IN (SELECT v FROM _ids)")
                                           for name in SCOPE_TABLES}))
    classes = concat("classes", [extracted(con, "classes", where), fresh["classes"]])
    flow_sites = [(callee, how, kind, arguments, modules[fid], caller) for callee, how, kind, arguments, caller, fid
                  in sites]
    resolved = resolve_tables(resolver, {**redo, **scopes}, modules, flow_sites)
    bases = class_bases(resolver, classes)
    for name in RESOLVED_TABLES:  # only now: the resolver learned from these tables as it went
        con.execute(f'DELETE FROM "{name}" {where}')
    for name, table in resolved.items():
        insert_arrow(con, name, table)
    if answered is not None:
        insert_arrow(con, "imports", answered)
    update_by_id(con, "classes", bases)
    give_back(con, plan.carried)
    register_values(con, "_ids", pc.unique(fresh["modules"].column("file_id")).to_pylist(), pa.int64(), listed=True)
    con.execute(f"INSERT INTO getattr_strings {getattr_strings_sql(among('{file_id}', '_ids'), few=True)}")  # this language's
    return len(set(affected) - plan.carried.of.keys()) + len(flowing - plan.carried.of.keys())

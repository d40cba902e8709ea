"""The RRR tools (RepoClassBench's agent): plain functions over the graph, one query each."""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..db import run_query
from ..schema import DEFINITION, FUNCTIONS, PROJECT_CALL_SQL
from .engine import query_terms
from ..languages import Checker, for_file
from .rules import load_template


def _dicts(con: duckdb.DuckDBPyConnection, sql: str, params: dict, max_rows: int = 200) -> list[dict]:
    result = run_query(con, sql, params, max_rows=max_rows)
    return [dict(zip(result.columns, row)) for row in result.rows]


def get_imports(con: duckdb.DuckDBPyConnection, names: list[str], limit: int = 3) -> dict[str, list[str]]:
    """Import lines for each name the candidate uses without defining it."""
    return {name: [r["import_line"] for r in _dicts(
        con, "SELECT import_line FROM import_candidates($n) LIMIT $k", {"n": name, "k": limit})]
        for name in names}


def undefined_names(path: str | Path, checker: Checker | None = None) -> list[str]:
    """The names the file uses and does not define, as its language's checker reports them."""
    language = for_file(Path(path).name)
    if language is None:
        return []
    names = []
    for d in (checker or language.shared_checker()).lint(path):
        name = language.undefined_name(d)
        if name and name not in names:
            names.append(name)
    return names


def _with_import_lines(con: duckdb.DuckDBPyConnection, rows: list[dict]) -> list[dict]:
    """Each row with the line that imports its definition by its public path (`from httpx import
    Client` for httpx._client.Client.send), where there is one."""
    lines = {r["qualname"]: r["import_line"] for r in _dicts(con, """
        SELECT q.qualname, first(l.import_line) AS import_line
        FROM (SELECT unnest($qs::VARCHAR[]) AS qualname) q, LATERAL (SELECT * FROM import_line_of(q.qualname)) l
        GROUP BY q.qualname""", {"qs": sorted({row["qualname"] for row in rows})})} if rows else {}
    for row in rows:  # one query for all: planning the path walk is most of its cost
        row["import_line"] = lines.get(row["qualname"])
    return rows


def is_defined(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether the graph holds a definition of that simple name, or one a dotted path leads to."""
    return bool(_dicts(con, """SELECT 1 FROM all_symbols WHERE name = $n
                               UNION ALL SELECT 1 FROM canonical($n) LIMIT 1""", {"n": name}))


def get_class_info(con: duckdb.DuckDBPyConnection, name: str) -> list[dict]:
    """Each class of the repository with that simple name, or the class a dotted path leads to
    (`httpx.Client`, any layer): bases, docstring, constructor, members, and its import line."""
    out = []
    for klass in _dicts(con, """SELECT DISTINCT qualname, bases, base_qualnames, docstring, path, start_line FROM (
                                    SELECT * FROM classes WHERE name = $n
                                    UNION ALL
                                    SELECT * FROM all_classes WHERE qualname IN (SELECT qualname FROM canonical($n)))
                                ORDER BY qualname""", {"n": name}):
        members = _dicts(con, """SELECT name, kind, signature, defined_in, annotation
                                 FROM members_of($q) WHERE class = $q""", {"q": klass["qualname"]})
        # Python's __init__ (or the implicit `(self)`); Java's constructors, overloads joined by "; "
        made = [m["signature"] for m in members if m["kind"] == "constructor" or m["name"] == "__init__"]
        out.append({**klass, "constructor": "; ".join(made) if made else "(self)", "members": members})
    return _with_import_lines(con, out)


def get_signature(con: duckdb.DuckDBPyConnection, name: str) -> list[dict]:
    """By qualified name or any dotted path to it, or every definition with that simple name."""
    rows = _dicts(con, "SELECT * FROM signature_of($n)", {"n": name})
    if not rows:
        rows = _dicts(con, """SELECT s.kind, s.qualname, s.signature, s.docstring, s.path, s.start_line
                              FROM symbols s WHERE s.name = $n AND s.kind <> 'module' ORDER BY s.qualname""",
                      {"n": name})
    return _with_import_lines(con, rows)


_BODY_SQL = DEFINITION.sql(("qualname", "path", "start_line", "end_line", "source"),
                           where="qualname IN (SELECT qualname FROM canonical($q))", tables=FUNCTIONS)


def get_method_body(con: duckdb.DuckDBPyConnection, qualname: str) -> list[dict]:
    """The source of a function or method, by qualified name or any dotted path to it."""
    return _dicts(con, _BODY_SQL, {"q": qualname})


def get_relevant_code(con: duckdb.DuckDBPyConnection, query: str, limit: int = 10) -> list[dict]:
    """Definitions matching the words of a description (lexical until the semantic layer)."""
    terms = query_terms(query)
    if not terms:
        return []
    return _dicts(con, load_template("lexical"), {"terms": terms, "limit": limit})


def get_related_snippets(con: duckdb.DuckDBPyConnection, qualname: str, limit: int = 10) -> list[dict]:
    """Code that calls, or is called by, a definition: how it is used in the project."""
    return _dicts(con, f"""
        SELECT 'caller' AS relation, c.caller_qualname AS qualname, f.path, c.line, c.callee_text
        FROM calls c JOIN files f USING (file_id) WHERE c.resolved_callee = $q
        UNION ALL
        SELECT 'callee', c.resolved_callee, f.path, c.line, c.callee_text
        FROM calls c JOIN files f USING (file_id)
        WHERE c.caller_qualname = $q AND c.{PROJECT_CALL_SQL}
        ORDER BY relation, path, line LIMIT $k""", {"q": qualname, "k": limit})

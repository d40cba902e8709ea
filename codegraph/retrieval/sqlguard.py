"""Validate SQL nobody vetted (an LLM's) before it runs, and run it inside a fence.

Two layers: sqlglot parses the text and only a single SELECT (or WITH/UNION of SELECTs) over known
tables, views and macros, naming known columns and no file/environment function, passes; then
it runs on a read-only connection with external access disabled, a time limit and a row cap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb
import sqlglot
from sqlglot import exp

from ..db import QueryResult, run_query
from ..errors import QueryRejected

SAFE_TABLE_FUNCTIONS = {"range", "generate_series", "unnest"}
_FORBIDDEN_FUNCTION = re.compile(
    r"^(read_|.*_scan$|glob$|getenv$|query$|query_table$|sniff_csv$|parquet_|iceberg|delta_|"
    r"load|install|pragma|duckdb_secrets|current_setting$|set_|copy|export|import|attach|detach|"
    r"system$|shell$|http|sqlite_|postgres_|mysql_|json_execute|from_csv|from_json|text$)",
    re.I,
)
_ALLOWED_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)


@dataclass
class Schema:
    tables: set[str]
    macros: set[str]
    columns: set[str]

    @classmethod
    def from_connection(cls, con: duckdb.DuckDBPyConnection) -> "Schema":
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
        columns = {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main'").fetchall()}
        macros = {r[0] for r in con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'table_macro' "
            "AND NOT internal").fetchall()}
        for macro in macros:
            columns |= {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {macro}(NULL)").fetchall()}
        return cls({t.lower() for t in tables}, {m.lower() for m in macros}, {c.lower() for c in columns})


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name)
    return node.sql_name()


def validate(sql: str, schema: Schema) -> str:
    """Return the statement, normalised, or raise QueryRejected saying what is wrong."""
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise QueryRejected("empty statement: write one SELECT")
    try:
        statements = [s for s in sqlglot.parse(text, read="duckdb") if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise QueryRejected(f"does not parse: {str(exc).splitlines()[0]}") from None
    if len(statements) != 1:
        raise QueryRejected(f"{len(statements)} statements: send exactly one SELECT")
    tree = statements[0]
    if not isinstance(tree, _ALLOWED_ROOTS):
        raise QueryRejected(f"only SELECT (or WITH ... SELECT) is allowed, not {tree.key.upper()}")
    for node in tree.walk():
        if isinstance(node, (exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter,
                             exp.Command, exp.Copy, exp.Pragma, exp.Set, exp.Attach, exp.Detach)):
            raise QueryRejected(f"{node.key.upper()} is not allowed: read-only SELECTs only")
        if isinstance(node, exp.Into):
            raise QueryRejected("SELECT ... INTO is not allowed")

    defined = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    aliases = {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
    aliases |= {t.alias.lower() for t in tree.find_all(exp.Table) if t.alias}
    for table_alias in tree.find_all(exp.TableAlias):
        aliases.add(table_alias.name.lower())
        aliases |= {c.name.lower() for c in table_alias.columns}
    for lam in tree.find_all(exp.Lambda):
        aliases |= {e.name.lower() for e in lam.expressions}

    for table in tree.find_all(exp.Table):
        inner = table.this
        if isinstance(inner, exp.Func):
            name = _function_name(inner).lower()
            if name not in schema.macros and name not in SAFE_TABLE_FUNCTIONS:
                raise QueryRejected(f"table function {name}() is not allowed; use the tables or the macros "
                                    f"({', '.join(sorted(schema.macros))})")
            continue
        name = table.name.lower()
        if not name or (name not in schema.tables and name not in defined):
            raise QueryRejected(f"unknown table {table.sql(dialect='duckdb')!r}; the tables are "
                                f"{', '.join(sorted(schema.tables))}")
        if table.args.get("db") or table.args.get("catalog"):
            raise QueryRejected("qualified table names (other databases or schemas) are not allowed")
    for func in tree.find_all(exp.Func):
        name = _function_name(func)
        if _FORBIDDEN_FUNCTION.match(name) and name.lower() not in schema.macros:
            raise QueryRejected(f"function {name}() is not allowed: no file, network or setting access")
    unknown = sorted({c.name for c in tree.find_all(exp.Column)
                      if c.name and c.name.lower() not in schema.columns and c.name.lower() not in aliases
                      and c.name.lower() not in defined})
    if unknown:
        raise QueryRejected(f"unknown column(s) {', '.join(unknown)}; see the schema for the column names")
    return text


def run_untrusted(con: duckdb.DuckDBPyConnection, sql: str, schema: Schema, *, max_rows: int = 50,
                  timeout_s: float = 2.0) -> QueryResult:
    """Validate, then run on `con`, which must be a codegraph.db.connect_readonly() connection."""
    return run_query(con, validate(sql, schema), max_rows=max_rows, timeout_s=timeout_s)

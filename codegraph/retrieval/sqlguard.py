"""Validate SQL nobody vetted (an LLM's) before it runs, and run it inside a fence.

Two layers: sqlglot parses the text and only a single SELECT (or WITH/UNION of SELECTs) over known
tables, views and macros, naming known columns, calling no table function but the allowed ones
(anywhere in the tree, LATERAL included) and no file/environment function, passes; the SQL that
runs is sqlglot's rendering of the tree it checked, never the raw text. Then it runs in a query
process (db.QueryWorker): read-only, external access disabled, a hard time bound, capped memory,
rows and bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import duckdb
import sqlglot
from sqlglot import exp

from ..db import run_query
from ..graphfile import QueryResult
from ..query_worker import QueryWorker
from ..errors import QueryRejected

SAFE_TABLE_FUNCTIONS = {"range", "generate_series", "unnest"}
MAX_SQL_CHARS = 20_000
_FORBIDDEN_FUNCTION = re.compile(
    r"^(read_|.*_scan$|glob$|getenv$|query$|query_table$|sniff_csv$|parquet_|iceberg|delta_|duckdb_|pragma_|"
    r"which_secret|enable_|disable_|checkpoint|force_checkpoint|"
    r"load|install|pragma|duckdb_secrets|current_setting$|set_|copy|export|import|attach|detach|"
    r"system$|shell$|http|sqlite_|postgres_|mysql_|json_execute|from_csv|from_json|text$)",
    re.I,
)
_ALLOWED_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)
# Statements that must not appear anywhere in the tree (older sqlglot releases lack some classes).
_FORBIDDEN_NODES = tuple(getattr(exp, name) for name in (
    "Insert", "Update", "Delete", "Create", "Drop", "Alter", "AlterTable", "Command", "Copy", "Pragma", "Set",
    "Attach", "Detach", "Merge", "Use", "Transaction", "Commit", "Rollback") if hasattr(exp, name))


@dataclass
class Schema:
    tables: set[str]
    macros: set[str]
    columns: set[str]
    table_functions: set[str] = field(default_factory=set)  # every table function DuckDB knows

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
        table_functions = {r[0] for r in con.execute(
            "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'table'").fetchall()}
        return cls({t.lower() for t in tables}, {m.lower() for m in macros}, {c.lower() for c in columns},
                   {f.lower() for f in table_functions})


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.name)
    return node.sql_name()


def validate(sql: str, schema: Schema) -> str:
    """Return the statement as sqlglot renders the checked tree, or raise QueryRejected saying
    what is wrong. Whatever the parser does with hostile text ends as a rejection."""
    text = (sql or "").strip().rstrip(";").strip()
    if not text:
        raise QueryRejected("empty statement: write one SELECT")
    if len(text) > MAX_SQL_CHARS:
        raise QueryRejected(f"the statement is {len(text):,} characters, over the {MAX_SQL_CHARS:,} allowed")
    try:
        return _validate(text, schema)
    except RecursionError:
        raise QueryRejected("the statement is nested too deeply to check") from None
    except sqlglot.errors.SqlglotError as exc:
        raise QueryRejected(f"does not parse: {(str(exc).splitlines() or [''])[0][:200]}") from None
    except QueryRejected:
        raise
    except Exception as exc:  # a parser bug must not crash the loop that asked
        raise QueryRejected(f"could not be checked ({type(exc).__name__}): write a simpler SELECT") from None


def _validate(text: str, schema: Schema) -> str:
    statements = [s for s in sqlglot.parse(text, read="duckdb") if s is not None]
    if len(statements) != 1:
        raise QueryRejected(f"{len(statements)} statements: send exactly one SELECT")
    tree = statements[0]
    if not isinstance(tree, _ALLOWED_ROOTS):
        raise QueryRejected(f"only SELECT (or WITH ... SELECT) is allowed, not {tree.key.upper()}")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN_NODES):
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
    table_functions = getattr(schema, "table_functions", set())
    for func in tree.find_all(exp.Func):
        name = _function_name(func)
        lower = name.lower()
        if lower in schema.macros:
            continue
        if _FORBIDDEN_FUNCTION.match(name):
            raise QueryRejected(f"function {name}() is not allowed: no file, network or setting access")
        if lower in table_functions and lower not in SAFE_TABLE_FUNCTIONS:
            raise QueryRejected(f"table function {lower}() is not allowed (anywhere, LATERAL included); use the "
                                f"tables or the macros ({', '.join(sorted(schema.macros))})")
    unknown = sorted({c.name for c in tree.find_all(exp.Column)
                      if c.name and c.name.lower() not in schema.columns and c.name.lower() not in aliases
                      and c.name.lower() not in defined})
    if unknown:
        raise QueryRejected(f"unknown column(s) {', '.join(unknown)}; see the schema for the column names")
    return tree.sql(dialect="duckdb", comments=False)


def run_untrusted(runner, sql: str, schema: Schema, *, max_rows: int = 50, timeout_s: float = 2.0) -> QueryResult:
    """Validate, then run the checked rendering on `runner`, a db.QueryWorker (or, for callers
    that accept a soft time limit, a db.connect_readonly() connection)."""
    checked = validate(sql, schema)
    if isinstance(runner, QueryWorker):
        return runner.run(checked, max_rows=max_rows, timeout_s=timeout_s)
    return run_query(runner, checked, max_rows=max_rows, timeout_s=timeout_s)

"""Opening the graph database, its schema, and running SQL that nobody has vetted."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import duckdb
import pyarrow as pa

from . import __version__
from .errors import DatabaseNotFound, QueryError, QueryRejected, QueryTimeout, SchemaMismatch

SCHEMA_VERSION = "1"
DB_DIRNAME = ".codegraph"
DB_FILENAME = "graph.duckdb"
ENV_DB = "CODEGRAPH_DB"

_ARROW_TYPES = {
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
    "VARCHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
    "VARCHAR[]": pa.list_(pa.string()),
    "TIMESTAMP": pa.timestamp("us"),
    "DOUBLE": pa.float64(),
}


def schema_sql() -> str:
    return resources.files("codegraph").joinpath("schema.sql").read_text(encoding="utf-8")


def default_db_path(repo: str | os.PathLike) -> Path:
    return Path(repo) / DB_DIRNAME / DB_FILENAME


def find_db(explicit: str | os.PathLike | None = None, start: str | os.PathLike | None = None) -> Path:
    """--db, then $CODEGRAPH_DB, then the nearest .codegraph/graph.duckdb above `start`."""
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise DatabaseNotFound(f"no database at {path}: run `codegraph index REPO --db {path}` first")
        return path
    env = os.environ.get(ENV_DB)
    if env:
        path = Path(env)
        if not path.is_file():
            raise DatabaseNotFound(f"{ENV_DB}={env} does not name a database file: index first or unset it")
        return path
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / DB_DIRNAME / DB_FILENAME
        if candidate.is_file():
            return candidate
    raise DatabaseNotFound(
        f"no {DB_DIRNAME}/{DB_FILENAME} in {here} or above: run `codegraph index REPO`, "
        f"or pass --db PATH, or set {ENV_DB}"
    )


def create_schema(con: duckdb.DuckDBPyConnection, repo_root: str) -> None:
    con.execute(schema_sql())
    set_meta(con, schema_version=SCHEMA_VERSION, tool_version=__version__, repo_root=repo_root)


def set_meta(con: duckdb.DuckDBPyConnection, **items: str) -> None:
    for key, value in items.items():
        con.execute("DELETE FROM meta WHERE key = $key", {"key": key})
        con.execute("INSERT INTO meta VALUES ($key, $value)", {"key": key, "value": str(value)})


def get_meta(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute("SELECT key, value FROM meta").fetchall())


def check_schema(con: duckdb.DuckDBPyConnection, path: Path | str) -> dict[str, str]:
    try:
        meta = get_meta(con)
    except duckdb.Error:
        raise SchemaMismatch(f"{path} is not a codegraph database (no meta table)") from None
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise SchemaMismatch(
            f"{path} has schema version {meta.get('schema_version')}, this codegraph reads "
            f"{SCHEMA_VERSION}: re-run `codegraph index` to rebuild it"
        )
    return meta


def arrow_schema(con: duckdb.DuckDBPyConnection, table: str, columns: Iterable[str]) -> pa.Schema:
    types = {name: typ for name, typ in con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $t",
        {"t": table}).fetchall()}
    return pa.schema([(c, _ARROW_TYPES[types[c]]) for c in columns])


def rows_to_arrow(schema: pa.Schema, rows: list[tuple]) -> pa.Table:
    """Row tuples (in the schema's column order) as one Arrow table."""
    if not rows:
        return schema.empty_table()
    arrays = [pa.array(col, type=schema.field(i).type) for i, col in enumerate(zip(*rows))]
    return pa.Table.from_arrays(arrays, schema=schema)


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> int:
    """Bulk insert through Arrow: hundreds of thousands of rows per second, never row by row."""
    if not data.num_rows:
        return 0
    con.register("_codegraph_batch", data)
    try:
        con.execute(f'INSERT INTO "{table}" BY NAME SELECT * FROM _codegraph_batch')
    finally:
        con.unregister("_codegraph_batch")
    return data.num_rows


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...], rows: list[tuple]) -> int:
    return insert_arrow(con, table, rows_to_arrow(arrow_schema(con, table, columns), rows))


# -- read-only queries -------------------------------------------------------------------------

@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple]
    truncated: bool = False
    elapsed_s: float = 0.0
    types: list[str] = field(default_factory=list)


def connect_readonly(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A connection that can read the graph and nothing else: no writes, no files, no network."""
    try:
        con = duckdb.connect(
            str(path),
            read_only=True,
            config={"enable_external_access": False, "autoload_known_extensions": False,
                    "autoinstall_known_extensions": False, "lock_configuration": True,
                    "threads": 2, "memory_limit": "2GB", "temp_directory": ""},
        )
    except duckdb.IOException as exc:
        raise DatabaseNotFound(f"cannot open {path}: {exc}") from None
    return con


def run_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, Any] | None = None,
    *,
    max_rows: int = 10_000,
    timeout_s: float = 10.0,
) -> QueryResult:
    """Run one statement with a time limit and a row cap; DuckDB's own errors become QueryError."""
    timed_out = threading.Event()

    def on_timeout() -> None:
        timed_out.set()
        con.interrupt()

    timer = threading.Timer(timeout_s, on_timeout)
    started = time.perf_counter()
    timer.start()
    try:
        cursor = con.execute(sql, params or {})
        if cursor.description is None:
            return QueryResult([], [], elapsed_s=time.perf_counter() - started)
        columns = [d[0] for d in cursor.description]
        types = [str(d[1]) for d in cursor.description]
        rows = cursor.fetchmany(max_rows + 1)
    except duckdb.InterruptException:
        raise QueryTimeout(f"query stopped after the {timeout_s:g} s time limit") from None
    except duckdb.Error as exc:
        if timed_out.is_set():
            raise QueryTimeout(f"query stopped after the {timeout_s:g} s time limit") from None
        message = str(exc).strip()
        if "read-only" in message.lower() or "enable_external_access" in message:
            raise QueryRejected(message) from None
        raise QueryError(message) from None
    finally:
        timer.cancel()
    truncated = len(rows) > max_rows
    return QueryResult(columns, rows[:max_rows], truncated, time.perf_counter() - started, types)


TABLES = ("files", "skipped_files", "modules", "classes", "members", "globals", "nested_functions",
          "parameters", "imports", "calls", "inheritance")


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
            for t in (*TABLES, "embeddings") if t in present}


def query_database(path: Path | str, sql: str, params: dict[str, Any] | None = None, *,
                   max_rows: int = 10_000, timeout_s: float = 30.0) -> QueryResult:
    con = connect_readonly(path)
    try:
        meta = check_schema(con, path)
        if meta.get("embedding_model") and "embed(" in sql.lower():
            from .semantic.store import model_from_meta, register_embed

            register_embed(con, model_from_meta(meta), int(meta["embedding_dim"]))
        return run_query(con, sql, params, max_rows=max_rows, timeout_s=timeout_s)
    finally:
        con.close()


def database_stats(path: Path | str) -> dict[str, Any]:
    con = connect_readonly(path)
    try:
        meta = check_schema(con, path)
        return {"path": str(path), "meta": meta, "counts": table_counts(con)}
    finally:
        con.close()

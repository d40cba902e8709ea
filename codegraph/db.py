"""Opening the graph database, its schema, and running SQL that nobody has vetted."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import duckdb


class _Absent:
    """A meta-path finder that says at once that a module is not installed. DuckDB tries to
    import pandas whenever it converts a parameter, about twice per list element, and Python does
    not remember failed imports: each try walks sys.path (0.2 ms), 40 ms of every search."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


if importlib.util.find_spec("pandas") is None and not any(isinstance(f, _Absent) for f in sys.meta_path):
    sys.meta_path.insert(0, _Absent(frozenset({"pandas"})))

from . import __version__, schema
from .cachedir import layers_folder
from .columns import sql_string
from .errors import (CodegraphError, DatabaseCorrupt, DatabaseLocked, DatabaseNotFound, QueryError, QueryRejected,
                     QueryTimeout, SchemaMismatch)
from .graphfile import MAX_RESULT_BYTES, QueryResult

def create_schema(con: duckdb.DuckDBPyConnection, repo_root: str) -> None:
    con.execute(schema.ddl())
    set_meta(con, schema_version=schema.SCHEMA_VERSION, tool_version=__version__, repo_root=repo_root)


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
    if meta.get("schema_version") != schema.SCHEMA_VERSION:
        raise SchemaMismatch(
            f"{path} has schema version {meta.get('schema_version')}, this codegraph reads "
            f"{schema.SCHEMA_VERSION}: re-run `codegraph index` to rebuild it"
        )
    layer = meta.get("library_layer")
    if layer and not (os.path.isdir(layer) and _inside(layer, layers_folder())):
        why = "is gone (the cache was cleared)" if not os.path.isdir(layer) else \
            f"is outside the cache folder this codegraph reads ({layers_folder()}: CODEGRAPH_CACHE changed)"
        raise SchemaMismatch(f"{path} reads its library layer from {layer}, which {why}: re-run `codegraph index` "
                             "to rebuild it")
    return meta


def _inside(path: str, folder: Path) -> bool:
    return os.path.realpath(path).startswith(str(folder) + os.sep)


# -- read-only queries -------------------------------------------------------------------------

def open_error(path: Path | str, exc: Exception) -> CodegraphError:
    """DuckDB's errors on opening a file, as one line that says what to do."""
    message = " ".join(str(exc).split())
    if re.search(r"conflicting lock|could not set lock", message, re.I):
        holder = re.search(r"held in (.+?) \(PID (\d+)\)", message)
        who = f" by {holder.group(1)} (PID {holder.group(2)})" if holder else " by another process"
        return DatabaseLocked(f"{path} is locked{who}: close that program (e.g. a duckdb shell or another "
                              "codegraph index) and run again, or write elsewhere with --db")
    if isinstance(exc, (duckdb.SerializationException, duckdb.InternalException)) or \
            "not a valid DuckDB database" in message or "Corrupt" in message or "checksum" in message.lower():
        return DatabaseCorrupt(f"{path} is damaged or not a DuckDB file ({message[:160]}): rebuild it with "
                               "`codegraph index REPO --full`")
    return DatabaseNotFound(f"cannot open {path}: {message[:300]}")


def connect_readonly(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A connection that can read the graph and nothing else: no writes, no network, no file but
    the library layers' (library_cache: the graph's `library` tables may be views of them; only
    codegraph writes there, and a reading statement cannot write). DuckDB takes the allowed folder
    only once the database is open, so external access is turned off then, before any query."""
    try:
        con = duckdb.connect(
            str(path),
            read_only=True,
            config={"autoload_known_extensions": False, "autoinstall_known_extensions": False,
                    "threads": 2, "memory_limit": "2GB", "temp_directory": ""},
        )
    except duckdb.Error as exc:
        raise open_error(path, exc) from None
    try:
        if con.execute("SELECT current_setting('lock_configuration')").fetchone()[0]:
            # the process has this file open already (DuckDB shares one instance per file): locked by
            # an earlier connect_readonly, whose settings hold for this connection too
            if con.execute("SELECT current_setting('enable_external_access')").fetchone()[0]:
                raise DatabaseLocked(f"{path} is open in this process with file access on: close that "
                                     "connection first")
            return con
        folder = str(layers_folder()) + os.sep
        con.execute(f"SET allowed_directories = [{sql_string(folder)}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def open_graph(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-only connection to a codegraph database whose schema this version reads."""
    con = connect_readonly(path)
    try:
        check_schema(con, path)
    except BaseException:
        con.close()
        raise
    return con


def connect_writable(path: Path | str) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path))
    except duckdb.Error as exc:
        raise open_error(path, exc) from None


def _value_bytes(value: Any) -> int:
    if isinstance(value, (str, bytes)):
        return len(value) + 16
    if isinstance(value, (list, tuple)):
        return 16 + sum(_value_bytes(v) for v in value)
    if isinstance(value, dict):
        return 16 + sum(_value_bytes(k) + _value_bytes(v) for k, v in value.items())
    return 16


def run_query(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, Any] | None = None,
    *,
    max_rows: int = 10_000,
    timeout_s: float = 10.0,
    max_bytes: int = MAX_RESULT_BYTES,
) -> QueryResult:
    """Run one statement with a time limit, a row cap and a result size cap (counted while
    fetching); DuckDB's own errors become QueryError. The time limit interrupts DuckDB between
    operators: a single long expression can outlast it, so SQL nobody vetted goes through
    QueryWorker, which enforces a hard bound."""
    timed_out = threading.Event()

    def on_timeout() -> None:
        timed_out.set()
        con.interrupt()

    timer: threading.Timer | None = threading.Timer(timeout_s, on_timeout)
    started = time.perf_counter()
    try:
        timer.start()
    except RuntimeError:  # no thread to spare (a query process near its memory limit): QueryWorker's
        timer = None      # hard bound still stops the query
    rows: list[tuple] = []
    stopped_by = None
    try:
        cursor = con.execute(sql, params or {})
        if cursor.description is None:
            return QueryResult([], [], elapsed_s=time.perf_counter() - started)
        columns = [d[0] for d in cursor.description]
        types = [str(d[1]) for d in cursor.description]
        size = 0
        while stopped_by is None:
            batch = cursor.fetchmany(min(1024, max_rows + 1 - len(rows)))
            if not batch:
                break
            for row in batch:
                size += _value_bytes(row)
                if size > max_bytes:
                    stopped_by = "bytes"
                    break
                rows.append(row)
            if len(rows) > max_rows:
                stopped_by = "rows"
    except duckdb.InterruptException:
        raise QueryTimeout(f"query stopped after the {timeout_s:g} s time limit") from None
    except duckdb.OutOfMemoryException:
        raise QueryRejected("the query needs more memory than it may use: add LIMIT or select fewer, "
                            "smaller columns") from None
    except duckdb.Error as exc:
        if timed_out.is_set():
            raise QueryTimeout(f"query stopped after the {timeout_s:g} s time limit") from None
        message = str(exc).strip()
        if "read-only" in message.lower() or "enable_external_access" in message:
            raise QueryRejected(message) from None
        raise QueryError(message) from None
    finally:
        if timer is not None:
            timer.cancel()
    return QueryResult(columns, rows[:max_rows], stopped_by is not None, time.perf_counter() - started, types,
                       stopped_by)


# -- SQL nobody vetted: what may run (query_worker.py runs it in a process that can be stopped) --

# What SQL nobody vetted may be: one statement that only reads (SELECT in all its forms, DESCRIBE,
# SHOW, SUMMARIZE, FROM-first, a table function; EXPLAIN of one). Anything else would change the
# connection for the next caller (CREATE TEMP MACRO members_of, SET, PREPARE) even where the file
# itself is read-only.
_READING_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})


def reading_statement(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raise QueryRejected unless `sql` is exactly one statement that only reads, as DuckDB's own
    parser sees it."""
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(" ".join(str(exc).split())[:400]) from None
    if len(statements) != 1:
        raise QueryRejected(f"one statement per query, got {len(statements)}: send them one at a time")
    kind = str(statements[0].type).rsplit(".", 1)[-1]
    if kind not in _READING_STATEMENTS:
        raise QueryRejected(f"only a reading statement (SELECT, WITH ... SELECT, DESCRIBE, EXPLAIN) may run here, "
                            f"not {kind}: the graph and this connection are read-only")


TABLES = schema.GRAPH_TABLES


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Rows per table of the repository's own code; `library_files` counts the standard library
    and package files indexed beside it (the `library` schema)."""
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
    counts = {t.name: con.execute(f'SELECT count(*) FROM main."{t.name}"').fetchone()[0]
              for t in schema.TABLES if t.name != "meta" and t.name in present}
    try:
        counts["library_files"] = con.execute(f"SELECT count(*) FROM {schema.LIBRARY_SCHEMA}.files").fetchone()[0]
    except duckdb.Error:
        pass
    return counts


def database_stats(path: Path | str) -> dict[str, Any]:
    con = connect_readonly(path)
    try:
        meta = check_schema(con, path)
        return {"path": str(path), "meta": meta, "counts": table_counts(con)}
    finally:
        con.close()

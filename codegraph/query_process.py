"""The query worker's child process (query_worker.py asks it): one read-only connection, its
memory capped by the operating system, each request answered by db.run_query within its limits."""

from __future__ import annotations

import threading

try:
    import resource
except ImportError:  # not on Windows: no memory cap there
    resource = None

from .db import check_schema, connect_readonly, reading_statement, run_query
from .errors import CodegraphError
from .worker import serve


def _limit_memory(megabytes: int) -> None:
    if resource is None:
        return
    try:
        resource.setrlimit(resource.RLIMIT_AS, (megabytes * 1024 * 1024, megabytes * 1024 * 1024))
    except (ValueError, OSError):
        pass


def serve_queries(connection, path: str, memory_mb: int) -> None:
    threading.stack_size(512 * 1024)  # under the address-space limit, a thread's 8 MB default stack can fail
    _limit_memory(memory_mb)
    try:
        con = connect_readonly(path)
        meta = check_schema(con, path)
    except CodegraphError as exc:
        connection.send(("error", type(exc).__name__, str(exc)))
        return
    connection.send(("ready", None, None))
    state = {"embed": False}

    def handle(request):
        number, (sql, params, max_rows, max_bytes, timeout_s) = request
        return number, *answer(sql, params, max_rows, max_bytes, timeout_s)

    def answer(sql, params, max_rows, max_bytes, timeout_s):
        try:
            reading_statement(con, sql)
            if not state["embed"] and meta.get("embedding_model") and "embed(" in sql.lower():
                # numpy, pyarrow and the model only for a query that embeds: most never do (75 ms)
                from .semantic.store import model_from_meta, register_embed

                register_embed(con, model_from_meta(meta), int(meta["embedding_dim"]))
                state["embed"] = True
            return "ok", run_query(con, sql, params, max_rows=max_rows, timeout_s=timeout_s, max_bytes=max_bytes), None
        except CodegraphError as exc:
            return "error", type(exc).__name__, str(exc)
        except MemoryError:
            return "error", "QueryRejected", "the query ran out of memory: add LIMIT or select less"
        except Exception as exc:  # a bug or a DuckDB failure the caller must see as one line
            return "error", "QueryError", f"{type(exc).__name__}: {exc}"

    serve(connection, handle)

"""SQL nobody vetted, run in a child process with its own read-only connection: a query that
overruns its time is stopped by killing the process, its memory is capped by the operating
system, its result by rows and bytes. What may run at all is db.reading_statement's call. This
side only talks to the child (query_process.py), so asking costs no DuckDB import."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from .errors import (DatabaseCorrupt, DatabaseLocked, DatabaseNotFound, QueryError, QueryRejected, QueryTimeout,
                     SchemaMismatch)
from .graphfile import MAX_RESULT_BYTES, QUERY_MEMORY_MB, QueryResult
from .worker import Worker, WorkerDied, WorkerTimeout


_ERRORS = {"QueryTimeout": QueryTimeout, "QueryRejected": QueryRejected, "QueryError": QueryError,
           "DatabaseNotFound": DatabaseNotFound, "SchemaMismatch": SchemaMismatch,
           "DatabaseLocked": DatabaseLocked, "DatabaseCorrupt": DatabaseCorrupt}


QUERY_TARGET = "codegraph.query_process:serve_queries"


class WorkerClosed(QueryError):
    """The QueryWorker was closed (replaced by a newer one) before this request reached it."""


class QueryWorker:
    """A child process with its own read-only connection. A query that overruns its time limit
    is stopped by killing the process (DuckDB cannot interrupt one long expression), its memory
    is capped by the operating system, and its result by rows and bytes while fetching."""

    def __init__(self, path: Path | str, *, memory_mb: int = QUERY_MEMORY_MB) -> None:
        self.path, self.memory_mb = str(path), memory_mb
        self._worker = Worker(QUERY_TARGET, (self.path, memory_mb), name="codegraph-query", greeting=True)
        # One request at a time on the pipe, and each answer checked against its request: threads
        # sharing a worker (the MCP server's tool calls) never get each other's rows.
        self._lock = threading.Lock()
        self._number = 0
        self.closed = False

    def run(self, sql: str, params: dict[str, Any] | None = None, *, max_rows: int = 10_000,
            timeout_s: float = 10.0, max_bytes: int = MAX_RESULT_BYTES) -> QueryResult:
        started = time.perf_counter()
        try:
            with self._lock:
                if self.closed:
                    raise WorkerClosed("this query process was closed: ask again")
                if not self._worker.alive:
                    status, kind, message = self._worker.start()
                    if status == "error":
                        self._worker.stop()
                        raise _ERRORS.get(kind, QueryError)(message)
                self._number += 1
                number = self._number
                answered, status, payload, message = self._worker.ask(
                    (number, (sql, params or {}, max_rows, max_bytes, timeout_s)), timeout_s + 1.0)
                if answered != number:  # never expected; a worker out of step is not trusted again
                    self._worker.stop()
                    raise QueryError(f"the query process answered request {answered} to request {number}; "
                                     "it was restarted: run the query again")
        except WorkerTimeout:
            raise QueryTimeout(f"query stopped after {time.perf_counter() - started:.1f} s "
                               f"(the {timeout_s:g} s time limit)") from None
        except WorkerDied:
            raise QueryRejected(f"the query was stopped: it needed more than the {self.memory_mb} MB of "
                                "memory a query may use, or crashed DuckDB") from None
        if status == "error":
            raise _ERRORS.get(payload, QueryError)(message)
        return payload

    def close(self) -> None:
        with self._lock:  # after the request in flight, if any
            self.closed = True
            self._worker.close()

    def __enter__(self) -> "QueryWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def query_database(path: Path | str, sql: str, params: dict[str, Any] | None = None, *,
                   max_rows: int = 10_000, timeout_s: float = 30.0, max_bytes: int = MAX_RESULT_BYTES) -> QueryResult:
    """Run a user's SQL read-only, in a query process with a hard time bound and size caps."""
    with QueryWorker(path) as worker:
        return worker.run(sql, params, max_rows=max_rows, timeout_s=timeout_s, max_bytes=max_bytes)

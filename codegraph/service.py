"""The graph `codegraph mcp` serves, kept fresh, and what each of its tools answers (server.py
declares the tools to the MCP SDK and loads this module behind `initialize`).

Every answer reflects the repository as it is on disk: each tool call asks the snapshot taken at
the last update whether any file changed since (an inotify queue on Linux, the files' stats
elsewhere) and updates the graph incrementally before it answers when one did; a watcher
(watchfiles) marks the graph stale as a hint. The server
never blocks other users of the file: it reads through short-lived read-only connections, and
its updates go through the indexer, which writes a copy and swaps it in while others read.
Results are capped in tokens and say so when cut.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from . import db, graphfile, query_worker
from .discover import Snapshot
from .errors import CodegraphError
from .indexer import index_repository
from .llm import estimate_tokens
from .retrieval.diagnose import diagnose as run_diagnose
from .retrieval.task_context import task_context
from .retrieval.tools import get_class_info, get_method_body, get_signature
from .schema_doc import schema_markdown, schema_summary
from .semantic.search import search as run_search, vectors_unavailable

T = TypeVar("T")
MAX_TOKENS = 4000
_SQL_ROWS = 200


def _json(value: Any) -> str:
    return json.dumps(value, default=str, ensure_ascii=False, separators=(",", ":"))


def capped(rows: list, max_tokens: int = MAX_TOKENS) -> str:
    """Rows as JSON lines, as many as fit in the budget; the last line says what was left out."""
    lines, used = [], 0
    for i, row in enumerate(rows):
        line = _json(row)
        cost = estimate_tokens(line + "\n")
        if used + cost > max_tokens:
            lines.append(_json({"truncated": True, "shown": i, "total": len(rows),
                                "hint": "narrow the question (LIMIT, a qualified name) to see the rest"}))
            break
        lines.append(line)
        used += cost
    return "\n".join(lines) if lines else "(no rows)"


def capped_text(text: str, max_tokens: int = MAX_TOKENS) -> str:
    if estimate_tokens(text) <= max_tokens:
        return text
    cut = text[: max_tokens * 4].rsplit("\n", 1)[0]
    return cut + f"\n[truncated: {estimate_tokens(text)} tokens in all, {max_tokens} shown]"


class Graph:
    """One repository's graph, kept fresh: the watcher marks it stale, `fresh()` updates it."""

    def __init__(self, repo: str | os.PathLike, db_path: str | os.PathLike | None = None, *,
                 watch: bool = True, libraries: bool = True) -> None:
        self.repo = graphfile.served_repository(repo)
        self.db_path = Path(db_path) if db_path else graphfile.default_db_path(self.repo)
        self.libraries = libraries
        self._stale = threading.Event()
        self._stale.set()
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._worker: query_worker.QueryWorker | None = None
        self._worker_file: tuple | None = None
        self._con = None
        self._con_file: tuple | None = None
        self.watching = False
        self._snapshot: Snapshot | None = None
        self._checker = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="codegraph-fresh")
        self.last_update: dict = {}
        self.last_check_ms = 0.0
        self.indexing: dict | None = None  # while an index runs: its phase and how far it is
        self.library_layer: dict | None = None  # on first contact, while the library layer is built: since when
        self._later: subprocess.Popen | None = None  # the process that builds it
        self._first: threading.Thread | None = None
        if watch:
            self.watching = self._start_watcher()

    # -- freshness ----------------------------------------------------------------------------
    def _start_watcher(self) -> bool:
        try:
            import watchfiles
        except ImportError:
            return False

        def relevant(change, path: str) -> bool:
            return path.endswith((".py", ".gitignore")) and f"{os.sep}{graphfile.DB_DIRNAME}{os.sep}" not in path

        def run() -> None:
            try:
                for _ in watchfiles.watch(self.repo, watch_filter=relevant, debounce=40, step=10,
                                          stop_event=self._stop, raise_interrupt=False):
                    self._stale.set()
            except Exception:  # the watcher died: fall back to checking on every call
                self.watching = False

        threading.Thread(target=run, name="codegraph-watch", daemon=True).start()
        return True

    def fresh(self, compare: bool = True, libraries: bool | None = None) -> Path:
        """Bring the graph up to date if anything changed; returns the database path. The watcher
        only hints: the files are compared with the snapshot taken before the last update
        (discover.Snapshot: an inotify queue read, or one stat per folder and file), so an answer
        right after a save or a delete already sees it, whatever the watcher's debounce. `compare=False` leaves the
        comparison to the caller (`answer` runs it beside the question). `libraries=False`: without the
        library layer this once (the first contact's project layer)."""
        started = time.perf_counter()
        with self._lock:
            if (self._stale.is_set() or self._snapshot is None or not self.db_path.exists()
                    or (compare and self._snapshot.changed())):
                self._stale.clear()
                snapshot = Snapshot.of(self.repo)  # before the update reads the files: a later save shows
                self._close_connection()  # DuckDB will not open a file twice in one process with other settings
                self.indexing = {"phase": "starting", "done": 0, "total": 0,
                                 "since": self.indexing["since"] if self.indexing else time.time()}
                try:
                    report = index_repository(self.repo, self.db_path, progress=self._progress,
                                              libraries=self.libraries if libraries is None else libraries)
                finally:
                    self.indexing = None
                if self.libraries and libraries is None and (self.library_layer or {}).get("failed"):
                    self.library_layer = None  # this index has the library layer: the failed build is past
                if self._snapshot is not None:
                    self._snapshot.close()
                self._snapshot = snapshot
                self.last_update = {"mode": report.mode, "parsed": report.parsed, "deleted": report.deleted,
                                    "seconds": round(report.elapsed_s, 3), "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
        self.last_check_ms = (time.perf_counter() - started) * 1000
        return self.db_path

    def _progress(self, phase: str, done: int, total: int, detail: str) -> None:
        self.indexing = {"phase": phase, "done": done, "total": total, "since": self.indexing["since"]
                         if self.indexing else time.time()}

    def index_in_background(self) -> None:
        """The first index on a thread of its own, so the server answers `initialize` at once;
        a tool asked meanwhile waits for it (fresh() holds the lock), index_status does not. With
        the library layer and no graph yet, the project's own layer comes first (click: 1.5 s
        against 10 s with a cold library cache) and is served while another process builds the
        graph again with the library layer and swaps it in (_library_layer_later)."""
        def run() -> None:
            try:
                if self.libraries and not self.db_path.exists():
                    self.fresh(libraries=False)
                    self._library_layer_later()
                else:
                    self.fresh()
            except Exception:  # noqa: BLE001 - the next call's fresh() tries again and reports it
                self._stale.set()
            finally:
                self.indexing = None

        # said before the thread starts: an index_status that comes before the index takes the lock
        # must not wait behind it
        self.indexing = {"phase": "starting", "done": 0, "total": 0, "since": time.time()}
        self._first = threading.Thread(target=run, name="codegraph-first-index", daemon=True)
        self._first.start()

    def _library_layer_later(self) -> None:
        """Build the graph with the library layer in a process of its own, without this server's
        lock: tools answer from the project's layer meanwhile. A call that finds a file changed
        updates with the library layer (fresh()), which waits for this build's index lock and then
        has the library layer too, so no answer ever mixes files of two moments."""
        self.library_layer = {"since": time.time()}
        try:
            self._later = subprocess.Popen(self._library_layer_command(), stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            _, err = self._later.communicate()
            if self._later.returncode:
                self.library_layer = {"failed": (err.strip().splitlines() or ["(no message)"])[-1]}
                return
            self.library_layer = None
            self.last_update = {**self.last_update, "library_layer": "in",
                                "at": time.strftime("%Y-%m-%dT%H:%M:%S")}
        finally:
            self._later = None

    def _library_layer_command(self) -> list[str]:
        return [sys.executable, "-m", "codegraph.cli", "index", str(self.repo), "--db", str(self.db_path), "-q"]

    def answer(self, work: Callable[[], T]) -> T:
        """work() on the graph as it stands while another thread compares the files with the
        snapshot, so the stats overlap the question instead of preceding it; when the files
        changed, the graph is updated and work() runs again. What comes back always matches the
        files as they were when the call came."""
        self.fresh(compare=False)
        check = self._checker.submit(self._snapshot.changed)
        try:
            result, failure = work(), None
        except Exception as exc:  # noqa: BLE001 - an answer from a stale graph, right or wrong, is not final
            result, failure = None, exc
        if check.result():
            self.fresh()
            return work()
        if failure is not None:
            raise failure
        return result

    def _identity(self) -> tuple:
        st = os.stat(self.db_path)
        return st.st_ino, st.st_mtime_ns, st.st_size

    def connect(self):
        """A cursor on a read-only connection to the current file, kept open between calls and
        opened again when the file was replaced (by this server's update or another index run).
        Freshness is the caller's (`answer`)."""
        path = self.fresh(compare=False)
        with self._lock:
            identity = self._identity()
            if self._con is None or self._con_file != identity:
                self._close_connection()
                self._con, self._con_file = db.open_graph(path), identity
            return self._con.cursor()

    def _close_connection(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def query(self, sql: str, params: dict | None = None, *, max_rows: int = _SQL_ROWS,
              timeout_s: float = 10.0) -> graphfile.QueryResult:
        """SQL nobody vetted: the query process of `codegraph sql`, restarted when the file changed.
        Freshness is the caller's (`answer`)."""
        for _ in range(3):
            path = self.fresh(compare=False)
            retired = None
            with self._lock:
                identity = self._identity()
                if self._worker is None or self._worker_file != identity:
                    retired = self._worker
                    self._worker, self._worker_file = query_worker.QueryWorker(path), identity
                worker = self._worker
            if retired is not None:
                retired.close()  # after the request it is answering, if any
            try:
                return worker.run(sql, params, max_rows=max_rows, timeout_s=timeout_s)
            except query_worker.WorkerClosed:  # replaced by a newer file's worker between the two steps: ask that one
                continue
        raise CodegraphError("the graph changed three times during this query: ask again")

    def status(self) -> dict:
        indexing = self.indexing
        if indexing is not None:  # answered now, from the index's progress, not after it
            return {"repository": str(self.repo), "database": str(self.db_path), "fresh": False,
                    "indexing": {"phase": indexing["phase"], "done": indexing["done"], "total": indexing["total"],
                                 "seconds": round(time.time() - indexing["since"], 1)},
                    "watching": self.watching, "last_update": self.last_update, **self._library_status()}
        started = time.perf_counter()
        self.fresh()
        check_ms = (time.perf_counter() - started) * 1000
        stats = db.database_stats(self.db_path)
        meta = stats["meta"]
        return {"repository": str(self.repo), "database": str(self.db_path), "indexed_at": meta.get("indexed_at"),
                "schema_version": meta.get("schema_version"), "tool_version": meta.get("tool_version"),
                "embedding_model": meta.get("embedding_model"), "counts": stats["counts"],
                "fresh": True, "watching": self.watching, "freshness_check_ms": round(check_ms, 2),
                "last_update": self.last_update, **self._library_status()}

    def _library_status(self) -> dict:
        later = self.library_layer
        if later is None:
            return {}
        if "failed" in later:
            return {"library_layer": f"not built: {later['failed']}; answers come from the project's own layer"}
        return {"library_layer": f"being built for {time.time() - later['since']:.0f} s; answers come from the "
                                 "project's own layer until it is in"}

    def close(self) -> None:
        self._stop.set()
        later = self._later
        if later is not None:
            later.terminate()
        self._checker.shutdown(wait=False)
        if self._snapshot is not None:
            self._snapshot.close()
        with self._lock:
            self._close_connection()
            if self._worker is not None:
                self._worker.close()
                self._worker = None


class Tools:
    """What each MCP tool answers, over one Graph: text for the client, capped in tokens; a
    CodegraphError for what the caller should change (server.py makes it the tool's error)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def _with(self, fn: Callable[[Any], T]) -> T:
        """fn(cursor) on the current graph (Graph.answer: redone when a file changed meanwhile)."""
        graph = self.graph

        def work():
            con = graph.connect()
            try:
                return fn(con)
            finally:
                con.close()

        return graph.answer(work)

    def _found(self, fn, missing: str) -> str:
        """The rows `fn` finds, capped; none is a tool error that says what to try instead."""
        rows = self._with(fn)
        if not rows:
            raise CodegraphError(missing)
        return capped(rows)

    def sql(self, query: str, limit: int) -> str:
        graph = self.graph
        result = graph.answer(lambda: graph.query(query, max_rows=max(1, min(limit, _SQL_ROWS))))
        text = capped([dict(zip(result.columns, r)) for r in result.rows])
        if result.truncated:
            text += "\n" + _json({"truncated": True, "by": result.stopped_by, "hint": "add LIMIT or filters"})
        return text

    def schema(self, full: bool = False) -> str:
        return capped_text(schema_markdown(), 12000) if full else schema_summary()

    def search(self, query: str, limit: int, mode: str) -> str:
        def run(con) -> tuple[list[dict], str | None]:
            hits = run_search(con, self.graph.db_path, query, max(1, min(limit, 50)), mode=mode)
            return hits, vectors_unavailable(db.get_meta(con)) if mode == "hybrid" else None

        hits, note = self._with(run)
        return (f"# note: {note}\n" if note else "") + capped(
            [{key: h[key] for key in ("qualname", "kind", "signature", "path", "start_line", "docstring", "why")}
             for h in hits])

    def context(self, description: str, file: str, symbol: str, signature: str, budget: int) -> str:
        found = self._with(lambda con: task_context(self.graph.db_path, description, file, symbol,
                                                    signature=signature or None,
                                                    budget_tokens=max(100, min(budget, 8000)), con=con))
        return "".join(f"# note: {note}\n" for note in found.notes) + (found.text or "(nothing found)")

    def diagnose(self, file: str, first_line: int, last_line: int) -> str:
        graph = self.graph
        target = (graph.repo / file).resolve()
        if graph.repo not in target.parents:
            raise CodegraphError(f"{file} is not inside the repository {graph.repo}")
        graph.fresh()
        report = run_diagnose(target, graph.db_path, lines=(first_line or None, last_line or None))
        if not report.diagnostics:
            return "no errors"
        head = "\n".join(f"{d.path}:{d.line}: {d.symbol} ({d.msg_id}) {d.message}" for d in report.diagnostics)
        return capped_text(head + "\n\n" + (report.context or ""))

    def class_info(self, name: str) -> str:
        return self._found(lambda con: get_class_info(con, name),
                           f"no class named {name!r} in the graph: try `search` or a qualified name")

    def signature(self, name: str) -> str:
        return self._found(lambda con: get_signature(con, name),
                           f"no definition named {name!r} in the graph: try `search`")

    def members(self, name: str) -> str:
        return self._found(lambda con: _rows(con, """
            SELECT class, name, kind, signature, defined_in, qualname FROM members_of($c)
            ORDER BY class, mro_position, name""", {"c": name}),
                           f"no class {name!r} in the graph: try `search`, or a dotted path (pkg.Class)")

    def body(self, name: str) -> str:
        return self._found(lambda con: get_method_body(con, name), f"no function {name!r} in the graph")

    def imports_for(self, name: str) -> str:
        return self._found(lambda con: _rows(con, "SELECT * FROM import_candidates($n) LIMIT 10", {"n": name}),
                           f"nothing named {name!r} to import in the graph")

    def callers(self, name: str) -> str:
        return capped(self._with(lambda con: _rows(con, "SELECT * FROM callers_of($q) LIMIT 200", {"q": name})))

    def callees(self, name: str) -> str:
        return capped(self._with(lambda con: _rows(con, "SELECT * FROM callees_of($q) LIMIT 200", {"q": name})))

    def index_status(self) -> str:
        return _json(self.graph.status())

    def close(self) -> None:
        self.graph.close()


def _rows(con, sql: str, params: dict) -> list[dict]:
    result = db.run_query(con, sql, params, max_rows=_SQL_ROWS)
    return [dict(zip(result.columns, r)) for r in result.rows]


def start(repo: str | os.PathLike, db_path: str | os.PathLike | None, libraries: bool) -> Tools:
    """The tools over a graph of repo whose first index has begun on a thread of its own."""
    graph = Graph(repo, db_path, libraries=libraries)
    graph.index_in_background()
    return Tools(graph)

"""`codegraph mcp`: the graph as tools for coding agents, over the Model Context Protocol (stdio).

This module is what the client sees: the tools' names, parameters and descriptions, and the
boundary where a failure becomes one line. What they answer, and the graph kept fresh behind
them, is service.py's, loaded on a thread of its own once the server runs: `initialize` waits for
the MCP SDK's import only, not for the indexer, DuckDB and the retrieval code (0.3-0.4 s more).
"""

from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import sys
import threading
import time
from typing import Callable

from . import __version__, graphfile
from .errors import CodegraphError, one_line

SERVER_INSTRUCTIONS = """A code graph of one Python repository in DuckDB: modules, classes, members (inherited ones
through members_of), globals, parameters, imports, calls (resolved across files), inheritance, bindings, and
embeddings. Start with `schema` to see the tables and macros, then ask `sql` (read-only) or the lookup tools.
Every answer reflects the files on disk at the time of the call."""



class _Loading:
    """service.start on a thread of its own once `begin` is called; `tools()` waits for it (a
    fraction of a second after the server starts), and raises what it raised."""

    def __init__(self, start: Callable[[], object], repo: object = None) -> None:
        self._ready: concurrent.futures.Future = concurrent.futures.Future()
        self._start = start
        self._repo, self._since = repo, time.time()

    def while_loading(self) -> str | None:
        """index_status's answer while the graph is still loading (its first index not begun):
        said at once, not after the load; None once it has loaded."""
        if self._ready.done():
            return None
        return json.dumps({"repository": str(self._repo), "fresh": False, "indexing": {
            "phase": "loading", "done": 0, "total": 0, "seconds": round(time.time() - self._since, 1)}})

    def begin(self) -> None:
        threading.Thread(target=self._load, name="codegraph-load", daemon=True).start()

    def _load(self) -> None:
        try:
            self._ready.set_result(self._start())
        except BaseException as exc:  # noqa: BLE001 - handed to the tool that waits for it
            self._ready.set_exception(exc)

    def __call__(self):
        return self._ready.result()

    def close(self) -> None:
        if self._ready.done() and self._ready.exception() is None:
            self._ready.result().close()


def build_server(tools: Callable[[], "service.Tools"]):  # noqa: F821 - service is loaded late, on purpose
    """The MCP server with codegraph's tools; tools() gives what answers them."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("codegraph", version=__version__, instructions=SERVER_INSTRUCTIONS)

    def guarded(fn):
        """Every failure is one line to the client, with its reason and at most 400 characters
        (an argument is not echoed back whole); a failure that is not codegraph's own also
        goes to the server's log as one line, never a traceback."""
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except CodegraphError as exc:
                raise ToolError(one_line(str(exc))) from None
            except Exception as exc:  # noqa: BLE001 - the boundary: a bug or bad input becomes one line
                message = one_line(f"{fn.__name__} failed: {type(exc).__name__}: {exc}")
                print(f"codegraph mcp: {message}", file=sys.stderr, flush=True)
                raise ToolError(message) from None
        return run

    def tool(fn):
        server.add_tool(guarded(fn), name=fn.__name__, description=fn.__doc__)
        return fn

    @tool
    def sql(query: str, max_rows: int = 100) -> str:
        """Run one read-only SELECT (or WITH) over the graph: no writes, no file or network access, a
        10 s limit, at most max_rows rows (200 at most). The macros (members_of, callers_of, ...) work
        here; see the `schema` tool. Rows come back as JSON lines, capped in tokens."""
        return tools().sql(query, max_rows)

    @tool
    def schema() -> str:
        """Every table with its columns and what they mean, the views, and the SQL macros with their
        arguments: what you need to write correct SQL for the `sql` tool."""
        return tools().schema()

    @tool
    def search(query: str, k: int = 10, mode: str = "hybrid") -> str:
        """Definitions that answer a plain question ("parse a url into its components"): BM25 over
        names, docstrings and signatures blended with an embedding; public code before tests and
        private helpers. mode: hybrid | bm25 | vector."""
        return tools().search(query, k, mode)

    @tool
    def context(description: str, file: str, symbol: str, signature: str = "", budget_tokens: int = 2000) -> str:
        """What code about to be written at FILE (relative path) for SYMBOL (`func` or
        `Class.method`) will most likely need: the enclosing class's members, the module's imports
        and names, definitions that answer the description, graph neighbours; each line says why."""
        return tools().context(description, file, symbol, signature, budget_tokens)

    @tool
    def diagnose(path: str, first_line: int = 0, last_line: int = 0) -> str:
        """Lint a Python file of the repository (save your edit first) with pylint's error checkers,
        keep the messages on lines first_line..last_line (0: the whole file), and answer each with
        the project's real names, signatures and members (SQL over the graph)."""
        return tools().diagnose(path, first_line, last_line)

    @tool
    def class_info(name: str) -> str:
        """A class by simple name or any dotted path Python imports it by (httpx.Client, or
        httpx._client.Client): bases, docstring, constructor, every member (inherited ones too)
        with kind and signature, and the line that imports it by its public path."""
        return tools().class_info(name)

    @tool
    def signature(name: str) -> str:
        """Signature, parameters and docstring of a function, method or class, by simple name or
        any dotted path to it (httpx.get, json.JSONDecoder.decode), with its public import line."""
        return tools().signature(name)

    @tool
    def members(class_name: str) -> str:
        """The members of a class by simple name or any dotted path to it (json.JSONDecoder),
        inherited ones included, in method resolution order."""
        return tools().members(class_name)

    @tool
    def body(qualname: str) -> str:
        """The source of a function or method, by qualified name or any dotted path to it."""
        return tools().body(qualname)

    @tool
    def imports_for(name: str) -> str:
        """How to import a name (a class, function or module), from the project, the standard
        library or an installed package the project uses."""
        return tools().imports_for(name)

    @tool
    def relevant(query: str, limit: int = 10) -> str:
        """Definitions whose names and docstrings match a description (lexical)."""
        return tools().relevant(query, limit)

    @tool
    def callers(qualname: str) -> str:
        """Where a function, method or class (by qualified name or any dotted path to it) is called:
        file, line, and how the call was resolved."""
        return tools().callers(qualname)

    @tool
    def callees(qualname: str) -> str:
        """What a function or method (by qualified name or any dotted path to it) calls, each call
        with what it resolved to."""
        return tools().callees(qualname)

    @tool
    def index_status() -> str:
        """What is indexed, when, whether it is current (it always is when a tool answers), and how
        long the last freshness check and update took; while an index runs (the first one starts
        with the server), its phase and progress, at once."""
        early = getattr(tools, "while_loading", None)
        said = early() if early is not None else None
        return said if said is not None else tools().index_status()

    return server


def _start(repo: str | os.PathLike, db_path: str | os.PathLike | None, libraries: bool):
    from . import service  # here, not at the top: what `initialize` must not wait for (module docstring)

    return service.start(repo, db_path, libraries)


def serve(repo: str | os.PathLike, db_path: str | os.PathLike | None = None, *, libraries: bool = True) -> None:
    """Run the stdio server until the client closes it. The graph loads, and its first index
    starts, behind the SDK's import: nothing competes with it for the interpreter."""
    repo = graphfile.served_repository(repo)
    loading = _Loading(lambda: _start(repo, db_path, libraries), repo)
    server = build_server(loading)  # imports the SDK
    loading.begin()
    try:
        server.run("stdio")
    finally:
        loading.close()

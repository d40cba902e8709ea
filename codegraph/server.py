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
from typing import Annotated, Callable, Literal

from pydantic import Field, ValidationError

from . import __version__, graphfile
from .errors import CodegraphError, one_line
from .semantic import MODES

# One name per concept, the CLI's: `name` for what is looked up (a simple name, or any dotted path
# Python imports it by), `limit` for how many, `file` for a repository file, `budget` for tokens.
# Every parameter is described; a closed set of values is an enum (pydantic comes with the SDK).
SearchMode = Literal[MODES]
Name = Annotated[str, Field(description="A simple name (Cart), a qualified name (shop.models.Cart) or any dotted "
                                        "path Python imports it by (httpx.Client for httpx._client.Client)")]
File = Annotated[str, Field(description="A file of the repository, relative to its root (shop/report.py)")]
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

    class Server(MCPServer):
        """Arguments the schema refuses come back as one line naming each parameter, what it takes
        and what it got, not pydantic's multi-line report with a link."""

        async def call_tool(self, name, arguments, context=None):
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if not isinstance(cause, ValidationError):
                    raise
                said = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']} "
                                 f"(got {e.get('input')!r})" for e in cause.errors())
                raise ToolError(one_line(f"{name}: {said}")) from cause

    server = Server("codegraph", version=__version__, instructions=SERVER_INSTRUCTIONS)

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
    def sql(query: Annotated[str, Field(description="One read-only SELECT or WITH statement, e.g. SELECT * FROM "
                                                    "members_of('shop.models.Cart')")],
            limit: Annotated[int, Field(ge=1, le=200, description="At most this many rows")] = 100) -> str:
        """Run one read-only SELECT (or WITH) over the graph: no writes, no file or network access, a
        10 s limit. The macros (members_of, callers_of, ...) work here; see the `schema` tool. Rows
        come back as JSON lines, capped in tokens."""
        return tools().sql(query, limit)

    @tool
    def schema(full: Annotated[bool, Field(description="Every column's meaning too (the reference, cut at 12,000 "
                                                       "characters) instead of the summary")] = False) -> str:
        """The tables with their columns, the views, and the SQL macros with their arguments: what you
        need to write correct SQL for the `sql` tool."""
        return tools().schema(full)

    @tool
    def search(query: Annotated[str, Field(description="A plain question: \"parse a url into its components\"")],
               limit: Annotated[int, Field(ge=1, le=50, description="How many definitions")] = 10,
               mode: Annotated[SearchMode, Field(description="hybrid: words and meaning blended; bm25: words "
                                                             "only; vector: the embedding only")] = "hybrid") -> str:
        """Definitions that answer a plain question: BM25 over names, docstrings and signatures blended
        with an embedding; public code before tests and private helpers."""
        return tools().search(query, limit, mode)

    @tool
    def context(description: Annotated[str, Field(description="What the code must do")],
                file: Annotated[str, Field(description="The file the code goes into, relative to the repository "
                                                       "(shop/report.py)")],
                symbol: Annotated[str, Field(description="What is written: `func` or `Class.method`")],
                signature: Annotated[str, Field(description="The signature if known: (self, key: str) -> bytes; "
                                                            "empty if not")] = "",
                budget: Annotated[int, Field(ge=100, le=8000, description="Token budget of the answer (a hard "
                                                                          "cap)")] = 2000) -> str:
        """What code about to be written at FILE for SYMBOL will most likely need: the enclosing class's
        members, the module's imports and names, definitions that answer the description, graph
        neighbours; each line says why."""
        return tools().context(description, file, symbol, signature, budget)

    @tool
    def diagnose(file: File,
                 first_line: Annotated[int, Field(ge=0, description="Keep messages from this line on (0: the "
                                                                    "file's start)")] = 0,
                 last_line: Annotated[int, Field(ge=0, description="Keep messages up to this line (0: the "
                                                                   "file's end)")] = 0) -> str:
        """Lint a Python file of the repository (save your edit first) with pylint's error checkers,
        keep the messages on lines first_line..last_line, and answer each with the project's real
        names, signatures and members (SQL over the graph)."""
        return tools().diagnose(file, first_line, last_line)

    @tool
    def class_info(name: Name) -> str:
        """A class: bases, docstring, constructor, every member (inherited ones too) with kind and
        signature, and the line that imports it by its public path."""
        return tools().class_info(name)

    @tool
    def signature(name: Name) -> str:
        """Signature, parameters and docstring of a function, method or class, with its public import
        line."""
        return tools().signature(name)

    @tool
    def members(name: Name) -> str:
        """The members of a class, inherited ones included, in method resolution order."""
        return tools().members(name)

    @tool
    def body(name: Name) -> str:
        """The source of a function or method."""
        return tools().body(name)

    @tool
    def imports_for(name: Annotated[str, Field(description="The name to import: a class, function, variable or "
                                                           "module (Timeout, os)")]) -> str:
        """How to import a name, best first: the public path of the package that defines it, then its
        own module, from the project, the standard library or an installed package."""
        return tools().imports_for(name)

    @tool
    def callers(name: Name) -> str:
        """Where a function, method or class is called: file, line, and how the call was resolved."""
        return tools().callers(name)

    @tool
    def callees(name: Name) -> str:
        """What a function or method calls, each call with what it resolved to."""
        return tools().callees(name)

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

"""Where the graph's file is, and what a query of it answers: what a command needs before anything
opens the file. No DuckDB here: `codegraph sql` hands its query to a child process and never
imports it (db.py, query_process.py do)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CodegraphError, DatabaseNotFound

DB_DIRNAME = ".codegraph"
DB_FILENAME = "graph.duckdb"
ENV_DB = "CODEGRAPH_DB"


def served_repository(repo: str | os.PathLike) -> Path:
    """The folder `codegraph mcp` serves, or one line saying what to give instead."""
    found = Path(repo).resolve()
    if not found.is_dir():
        raise CodegraphError(f"{repo} is not a directory: give the repository to serve")
    return found


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


MAX_RESULT_BYTES = 64 * 1024 * 1024
QUERY_MEMORY_MB = 4096


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple]
    truncated: bool = False
    elapsed_s: float = 0.0
    types: list[str] = field(default_factory=list)
    stopped_by: str | None = None  # "rows" or "bytes": which cap cut the result

"""What a full build (full_build.py) and an update (update.py) share: the report, parsing in
worker processes into Arrow chunks, the library layer, the writer thread, the embeddings and
the search statistics."""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import ctypes
import functools
import gc
import multiprocessing
import os
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import db
from .discover import Discovery
from .languages import Library
from .errors import RepositoryError
from .columns import column_lists, concat, insert_arrow
from .library_cache import LibraryCache
from .parsing import Chunk, extract_chunk
from .schema import BY_NAME, EXTRACTED
from .semantic.models import EmbeddingModel
from .semantic.store import write_vectors
from .sources import Skip, SourceFile
from .worker import die_with

SkipRow = BY_NAME["skipped_files"].row
# Work below this many bytes of source is parsed in this process: starting two forkserver workers
# costs about 0.5 s of wall time, what extracting 1.2 MB takes (2.5 MB a CPU second), so a
# pool pays for itself from about twice that.
PARALLEL_BYTES = 2_500_000

Progress = Callable[[str, int, int, str], None]  # (phase, done, total, detail)


@dataclass
class IndexReport:
    db_path: Path
    repo_root: Path
    mode: str  # full | update | unchanged
    files_seen: int = 0
    parsed: int = 0
    unchanged: int = 0
    deleted: int = 0
    reresolved: int = 0
    skipped: list[Skip] = field(default_factory=list)
    partial: list[tuple[str, int]] = field(default_factory=list)  # (path, error nodes)
    counts: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    vectors: dict = field(default_factory=dict)  # what happened to the vector cache
    library_files: int = 0  # standard library and package files indexed (layer stdlib or site)
    library_parsed: int = 0  # of them, parsed by this build (the others came from the library cache)
    library_resolved: bool = False  # this build resolved the library layer (else: its resolution came from the cache)
    library_environment: str = ""  # where the library layer came from (Library.named)
    library_layer: str = ""  # the cache's folder the graph reads the layer from in place (library_cache), if any
    rebuilt_because: str = ""  # why an update gave way to a full build (Rebuild.reason)


class Workers:
    """The build's parsing processes: one pool for the whole build (the project's files and every
    level of the library layer), started the first time there is enough to parse to pay for it,
    shut down with close(). Never forked: the process may run threads (DuckDB's, OpenBLAS's, a
    server's), and a child forked while one of them holds a lock deadlocks; forkserver workers
    come from a clean process."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None
        self.parsed_here = 0  # bytes parsed in this process so far: what has come predicts what will

    def map(self, work: Callable, chunks: list[list[SourceFile]]) -> Iterator[Chunk]:
        """work(chunk) for every chunk, in this process or in the pool, as they finish. The pool
        starts once this build's work, what was parsed here and these chunks, reaches
        PARALLEL_BYTES (the library layer comes a level at a time, each level small)."""
        if self.pool is None:
            size = sum(f.size for chunk in chunks for f in chunk)
            if self.jobs <= 1 or self.parsed_here + size < PARALLEL_BYTES:
                self.parsed_here += size
                return map(work, chunks)
            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            self.pool = concurrent.futures.ProcessPoolExecutor(
                self.jobs, mp_context=multiprocessing.get_context(method), initializer=die_with,
                initargs=(os.getpid(),))
        return _completed(self.pool, work, chunks)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


@dataclass
class Build:
    """One index run, as a full build and an update both read it."""

    root: Path
    target: Path
    found: Discovery
    workers: Workers
    progress: Progress | None
    report: IndexReport
    embed: str | None = "auto"  # the embedding model asked for (semantic.models.get_model), or None
    library: Library | None = None  # the library layer, or None without it
    resolve_jobs: int | None = None  # None: each language's own default (Resolution.full)


@dataclass(frozen=True)
class Rebuild:
    """An update's verdict that it cannot follow what changed: the graph is built afresh."""

    reason: str


def starting_a_worker() -> bool:
    """True while this process is a multiprocessing child re-running its parent's main script
    (a script that calls codegraph without `if __name__ == "__main__":`); it would wait
    forever for the index lock its parent holds."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


GUARD_HINT = ("if a script calls codegraph, put the call under `if __name__ == \"__main__\":` (parsing "
               "workers start from a fresh interpreter, which imports the script again), or pass jobs=1")


def extract_chunks(files: list[SourceFile], workers: Workers, progress: Progress | None,
                    model: EmbeddingModel | None = None, layer: str = "project") -> Iterator[Chunk]:
    size = 8
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    total, done = len(files), 0
    work = functools.partial(extract_chunk, model=model, layer=layer)
    for chunk in workers.map(work, chunks):
        done += len(chunk.paths)
        if progress:
            progress("parsing" if layer == "project" else "libraries", done, total, chunk.paths[-1])
        yield chunk


def _completed(pool: concurrent.futures.Executor, work: Callable, chunks: list) -> Iterator[Chunk]:
    """Results as they finish; each is dropped from here once handed on."""
    pending = {pool.submit(work, chunk) for chunk in chunks}
    try:
        while pending:
            finished, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in finished:
                yield future.result()
    except concurrent.futures.process.BrokenProcessPool as exc:
        raise RepositoryError(f"the parsing workers died while starting: {GUARD_HINT}") from exc
    finally:  # abandoned (an error, a closed generator): what is still queued is not parsed
        for future in pending:
            future.cancel()


def by_language(tables: dict[str, pa.Table], language_of: dict[int, str]) -> dict[str, dict[str, pa.Table]]:
    """Extracted tables split by the language of each row's file (`language_of`: file id ->
    language), for each language's resolution. One language, the usual case: the tables as they are."""
    names = sorted(set(language_of.values()))
    if len(names) <= 1:
        return {names[0]: tables} if names else {}
    out = {}
    for name in names:
        ids = pa.array([fid for fid, lang in language_of.items() if lang == name], pa.int64())
        out[name] = {table: rows.filter(pc.is_in(rows.column("file_id"), value_set=ids))
                     for table, rows in tables.items()}
    return out


def give_back_memory() -> None:
    """Return the heap pages Python has freed to the system before DuckDB, which allocates
    elsewhere, grows: a full build's peak is the resolver's high water plus DuckDB's."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


class Writer(threading.Thread):
    """Inserts tables on a thread of its own, in the order they are put, each dropped once written:
    DuckDB works without the GIL, so a build's inserts run on the other core while this one
    resolves, and the resolved tables go in as they come (resolve_tables' emit)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, tables: Iterable[tuple[str, pa.Table]]) -> None:
        super().__init__(daemon=True)
        self.con, self.error, self.abandoned = con, None, False
        self.pending: queue.SimpleQueue = queue.SimpleQueue()
        for name, table in tables:
            self.put(name, table)
        self.start()

    def put(self, name: str, table: pa.Table) -> None:
        self.pending.put((name, table))

    def run(self) -> None:
        while (item := self.pending.get()) is not None:
            if self.error is None and not self.abandoned:
                try:
                    insert_arrow(self.con, *item)
                except BaseException as exc:  # re-raised in the building thread by finish()
                    self.error = exc
            del item

    def finish(self) -> None:
        """Wait until everything put is written."""
        self.pending.put(None)
        self.join()
        if self.error is not None:
            raise self.error

    def abandon(self) -> None:
        """The build failed: write nothing more, and stop."""
        self.abandoned = True
        self.pending.put(None)
        self.join()


def summarise(report: IndexReport, con: duckdb.DuckDBPyConnection) -> None:
    report.counts = db.table_counts(con)
    report.skipped = [Skip(*r) for r in con.execute(
        "SELECT path, reason, detail FROM skipped_files ORDER BY path").fetchall()]
    report.partial = con.execute(
        "SELECT path, parse_errors FROM files WHERE parse_errors > 0 ORDER BY path").fetchall()


def write_embeddings(con: duckdb.DuckDBPyConnection, model: EmbeddingModel, parts: list, *, fit: bool = False,
                     progress: Progress | None = None) -> None:
    """The workers' parts as vectors in the `embeddings` table, a batch at a time (`fit`: a full
    build, where the model may learn from the corpus first); a learned model takes minutes on a
    large repository, so the progress counts definitions."""
    write_vectors(con, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, model.dim), np.float32))  # the table
    total, done = sum(len(p[0]) for p in parts if p is not None), 0
    for ids, file_ids, matrix in model.vectors(parts, fit=fit):
        write_vectors(con, ids, file_ids, matrix)
        done += len(ids)
        if progress:
            progress("embedding", done, total, model.id)


def term_stats(con: duckdb.DuckDBPyConnection) -> None:
    """BM25's corpus statistics, kept in meta so a query need not scan the index for them."""
    documents, average = con.execute(
        "SELECT count(*), coalesce(avg(length), 0) FROM (SELECT id, any_value(length) AS length FROM terms GROUP BY id)"
    ).fetchone()
    db.set_meta(con, bm25_documents=documents, bm25_average_length=round(float(average), 4))


IMPORT_KEY = ("imported_module", "name", "is_star")  # what Library.imported reads of an imports row


def external_imports(library: Library, project_modules: set[str], chunks: list[Chunk]) -> set[str]:
    """The names outside the repository the chunks' files of the library's language import, as
    the library layer reads them (a Java file's `import java.util.List` is not Python's to find)."""
    return library.imported(project_modules, (row for chunk in chunks
                                              for row in zip(*column_lists(_of_language(chunk, library.language),
                                                                           IMPORT_KEY))))


def _of_language(chunk: Chunk, name: str) -> pa.Table:
    """The chunk's import rows of files in that language."""
    imports = chunk.tables["imports"]
    ids = [r.file_id for r in chunk.file_rows if r.language == name]
    if len(ids) == len(chunk.file_rows):
        return imports
    return imports.filter(pc.is_in(imports.column("file_id"), value_set=pa.array(ids, pa.int64())))


def modules_of(files: Iterable[SourceFile], name: str) -> set[str]:
    """The modules of the repository's files in one language: what the library layer of that
    language leaves to the repository."""
    return {f.module for f in files if f.language == name}


def library_chunks(project_modules: set[str], direct: list[str], library: Library, workers: Workers,
                   progress: Progress | None, cache: LibraryCache | None = None) -> list[Chunk]:
    """The library layer: the modules the repository imports from outside it, and what those
    import in turn, up to the library's max_depth and max_files. With a cache, only the files
    it does not hold as they are now are parsed, and it keeps those."""
    seen_names: set[str] = set()
    seen_paths: set[str] = set()
    out: list[Chunk] = []
    frontier = set(direct)
    for _depth in range(library.max_depth + 1):
        todo = sorted(library.expand(frontier) - seen_names)
        seen_names.update(todo)
        if not todo or len(seen_paths) >= library.max_files:
            break
        found = [(f, layer) for f, layer in library.files(todo)
                 if f.path not in seen_paths][: library.max_files - len(seen_paths)]
        seen_paths.update(f.path for f, _ in found)
        new: list[Chunk] = []
        if cache is not None and found:
            held_rows, imports, found = cache.known(found)
            if held_rows:  # its imports for now, the other rows once the walk ends
                new.append(Chunk(held_rows, [], {"imports": imports}, [r.path for r in held_rows], cached=True))
                if progress:
                    progress("libraries", len(held_rows), len(held_rows) + len(found), "(from the library cache)")
        for layer in dict.fromkeys(where for _f, where in found):  # Python's stdlib and site, Java's jdk and jar
            batch = [f for f, where in found if where == layer]
            if batch:
                new.extend(extract_chunks(batch, workers, progress, None, layer))
        out.extend(new)
        frontier = external_imports(library, project_modules, new)
    held = [c for c in out if c.cached]
    if held:  # their rows once asked for (held_rows): a build that finds its resolved layer reads none
        out = [c for c in out if not c.cached]
        file_rows = [r for c in held for r in c.file_rows]
        out.insert(0, Chunk(file_rows, [], {}, [r.path for r in file_rows], cached=True))
    for chunk in out:  # a library file that does not parse is not the user's problem
        chunk.skips = []
    parsed = [c for c in out if not c.cached]
    if cache is not None and parsed:  # in one transaction: each costs a commit
        cache.keep([r for c in parsed for r in c.file_rows],
                   {name: concat(name, [c.tables[name] for c in parsed]) for name in EXTRACTED})
    return out


def held_rows(chunks: list[Chunk], cache: LibraryCache) -> None:
    """Fill the chunk of library files the cache holds (library_chunks) with their rows."""
    for chunk in chunks:
        if chunk.cached:
            chunk.tables = cache.rows([r.file_id for r in chunk.file_rows])


def skip_row(skip: Skip, by_path: dict[str, SourceFile]) -> tuple:
    f = by_path.get(skip.path)
    return SkipRow(path=skip.path, reason=skip.reason, detail=skip.detail, size=f.size if f else None,
                   mtime_ns=f.mtime_ns if f else None)


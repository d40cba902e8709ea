"""`codegraph index`: discover, parse in parallel, resolve names, write one DuckDB file.

A full build is written beside the database and swapped in with os.replace; an update is one
transaction on a copy that is swapped in the same way (codegraph/update.py). Either way a crash
leaves the previous database as it was, and readers never meet a writer's lock.
"""

from __future__ import annotations

import concurrent.futures
import concurrent.futures.process
import contextlib
import ctypes
import functools
import gc
import json
import multiprocessing
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import duckdb
import numpy as np
import pyarrow as pa

from . import db, library
from .discover import DEFAULT_MAX_FILE_SIZE, Skip, SourceFile, discover
from .library import Finder
from .errors import RepositoryError, SchemaMismatch
from .extract import ExtractionBudget, FileFacts, UndecodableSource, extract
from .resolution import (RESOLVED_TABLES, build_resolver, class_bases, column_lists, definition_rows, for_resolution,
                         resolve_tables, returns_of_tables, set_class_bases)
from .schema import BY_NAME, EXTRACTED, LIBRARY_SCHEMA
from .semantic.models import HashingModel, dense_tf
from .semantic.store import DEFAULT_DIM, build_vector_cache, merge_sparse, model_meta, vectors_path, write_vectors
from .semantic.texts import sparse_vectors, term_rows
from .worker import die_with

FileRow, SkipRow = BY_NAME["files"].row, BY_NAME["skipped_files"].row
_TERM_TYPES = tuple(f.type for f in BY_NAME["terms"].arrow_schema())
_PARALLEL_THRESHOLD = 24

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


def _extract_one(item: tuple[str, str, str, bool]) -> FileFacts | Skip:
    abspath, path, module, is_package = item
    try:
        with open(abspath, "rb") as fh:
            data = fh.read()
        return extract(data, path, module, is_package)
    except UndecodableSource as exc:
        reason = "binary" if "binary" in str(exc) else "undecodable"
        return Skip(path, reason, str(exc))
    except OSError as exc:
        return Skip(path, "unreadable", str(exc))
    except (RecursionError, MemoryError) as exc:
        return Skip(path, "too-complex", type(exc).__name__)
    except ExtractionBudget as exc:
        return Skip(path, "too-slow", f"{exc}; the file is left out, the rest of the index goes on")
    except Exception as exc:  # one bad file must never stop the index
        return Skip(path, "error", f"{type(exc).__name__}: {exc}")


@dataclass
class _Chunk:
    """What a worker sends back: Arrow tables, so conversion happens in parallel."""

    file_rows: list[tuple]
    skips: list[Skip]
    tables: dict[str, pa.Table]
    paths: list[str]
    vectors: tuple | None = None  # sparse term frequencies for the hashing embedder
    terms: pa.Table | None = None  # BM25's rows for these files


@functools.lru_cache(maxsize=1)
def _arrow_schemas() -> dict[str, pa.Schema]:
    """What the parser emits per table: every column but the resolved ones."""
    return {name: BY_NAME[name].arrow_schema("extract") for name in EXTRACTED}


_LAYERED = frozenset(name for name in EXTRACTED if "layer" in BY_NAME[name].names())


def _extract_chunk(items: list[SourceFile], embed_dim: int = 0, layer: str = "project") -> _Chunk:
    """Parse files; library files (another layer) are not embedded nor put in the search index:
    they are there to be looked up, not searched."""
    with _full_collections_deferred():  # in a worker process too
        return _chunk_of(items, embed_dim, layer)


def _chunk_of(items: list[SourceFile], embed_dim: int, layer: str) -> _Chunk:
    rows: dict[str, list[tuple]] = {name: [] for name in EXTRACTED}
    file_rows, skips = [], []
    for f in items:
        result = _extract_one((f.abspath, f.path, f.module, f.is_package))
        if isinstance(result, Skip):
            skips.append(result)
            continue
        file_rows.append(_file_row(f, result)._replace(layer=layer))
        for name, table_rows in result.rows.items():
            if layer != "project" and name == "refs":
                continue  # the library layer is there to look definitions up, not their uses
            if layer != "project" and name in _LAYERED:
                table_rows = [r._replace(layer=layer) for r in table_rows]
            rows[name].extend(table_rows)
    project = layer == "project"
    vectors = sparse_vectors(rows, embed_dim) if embed_dim and project else None
    terms = pa.Table.from_arrays([pa.array(col, typ) for col, typ in zip(term_rows(rows if project else {}), _TERM_TYPES)],
                                 schema=BY_NAME["terms"].arrow_schema())
    return _Chunk(file_rows, skips, {name: db.rows_to_arrow(_arrow_schemas()[name], r) for name, r in rows.items()},
                  [f.path for f in items], vectors, terms)


def _starting_a_worker() -> bool:
    """True while this process is a multiprocessing child re-running its parent's main script
    (a script that calls codegraph without `if __name__ == "__main__":`); it would wait
    forever for the index lock its parent holds."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


_GUARD_HINT = ("if a script calls codegraph, put the call under `if __name__ == \"__main__\":` (parsing "
               "workers start from a fresh interpreter, which imports the script again), or pass jobs=1")


def _extract_chunks(files: list[SourceFile], jobs: int, progress: Progress | None,
                    embed_dim: int = 0, layer: str = "project") -> Iterator[_Chunk]:
    size = 8
    chunks = [files[i : i + size] for i in range(0, len(files), size)]
    total, done = len(files), 0
    work = functools.partial(_extract_chunk, embed_dim=embed_dim, layer=layer)
    if jobs <= 1 or total < _PARALLEL_THRESHOLD:
        results: Iterable[_Chunk] = map(work, chunks)
        pool = None
    else:
        # Never forked: the process may run threads (DuckDB's, OpenBLAS's, a server's), and a
        # child forked while one of them holds a lock deadlocks.
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
        pool = concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method),
                                                      initializer=die_with, initargs=(os.getpid(),))
        results = _completed(pool, work, chunks)
    try:
        for chunk in results:
            done += len(chunk.paths)
            if progress:
                progress("parsing" if layer == "project" else "libraries", done, total, chunk.paths[-1])
            yield chunk
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _completed(pool: concurrent.futures.Executor, work: Callable, chunks: list) -> Iterator[_Chunk]:
    """Results as they finish; each is dropped from here once handed on."""
    pending = {pool.submit(work, chunk) for chunk in chunks}
    try:
        while pending:
            finished, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in finished:
                yield future.result()
    except concurrent.futures.process.BrokenProcessPool as exc:
        raise RepositoryError(f"the parsing workers died while starting: {_GUARD_HINT}") from exc


def _file_row(f: SourceFile, facts: FileFacts) -> tuple:
    return FileRow(file_id=facts.file_id, path=f.path, module=f.module, sha256=facts.sha256, size=f.size,
                   mtime_ns=f.mtime_ns, lines=facts.lines, parse_errors=facts.parse_errors)


def _concat(name: str, tables: list[pa.Table]) -> pa.Table:
    schema = _arrow_schemas()[name]
    tables = [t.select(list(schema.names)).cast(schema) for t in tables if t.num_rows]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _give_back_memory() -> None:
    """Return the heap pages Python has freed to the system before DuckDB, which allocates
    elsewhere, grows: a full build's peak is the resolver's high water plus DuckDB's."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


class _Writer(threading.Thread):
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
                    db.insert_arrow(self.con, *item)
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


def _summarise(report: IndexReport, con: duckdb.DuckDBPyConnection) -> None:
    report.counts = db.table_counts(con)
    report.skipped = [Skip(*r) for r in con.execute(
        "SELECT path, reason, detail FROM skipped_files ORDER BY path").fetchall()]
    report.partial = con.execute(
        "SELECT path, parse_errors FROM files WHERE parse_errors > 0 ORDER BY path").fetchall()


def index_repository(
    repo: str | os.PathLike,
    db_path: str | os.PathLike | None = None,
    *,
    jobs: int | None = None,
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    full: bool = False,
    embed: bool = True,
    progress: Progress | None = None,
    libraries: bool = True,
    python: str | None = None,
    resolve_jobs: int = 1,
) -> IndexReport:
    """Build or update the graph of `repo`. With `embed`, every definition also gets a vector
    from the offline hashing model (only new or changed ones on an update). With `libraries`,
    the standard library and installed packages the repository imports are indexed too, as the
    interpreter `python` (default: this one) finds them, with layer stdlib or site. With
    `resolve_jobs` > 1, a full build of 20,000 calls or more on Linux has forked copies of this
    process resolve parts of them: faster, but each copy comes to hold most of what the resolver
    holds (the stdlib: about 11 % less time, about 0.6 GB more memory for one copy)."""
    if _starting_a_worker():
        raise RepositoryError(f"index_repository was called again by a parsing worker as it started: {_GUARD_HINT}")
    started = time.perf_counter()
    root = Path(repo).resolve()
    if not root.is_dir():
        raise RepositoryError(f"{repo} is not a directory: give the path of a repository to index")
    target = Path(db_path) if db_path else db.default_db_path(root)
    _prepare_folder(target)
    jobs = jobs or min(2, os.cpu_count() or 1)
    report = IndexReport(target, root, "full")
    with _index_lock(target), _system_arrow_pool(), _full_collections_deferred():
        return _index_locked(root, target, jobs, max_file_size, full, embed, progress, libraries, python, report,
                             started, resolve_jobs)


def _index_locked(root: Path, target: Path, jobs: int, max_file_size: int, full: bool, embed: bool,
                  progress: Progress | None, libraries: bool, python: str | None, report: IndexReport,
                  started: float, resolve_jobs: int = 1) -> IndexReport:
    _remove_abandoned_builds(target)

    t = time.perf_counter()
    found = discover(root, max_file_size)
    report.timings["discover"] = time.perf_counter() - t
    report.files_seen = len(found.files)
    if not found.files:
        report.warnings.append(f"no Python files found in {root} (is it the right folder?)")

    if target.exists():
        _refuse_foreign_file(target)
    finder = Finder(python) if libraries else None
    if target.exists() and not full:
        try:
            from .update import update  # the update path imports this module's building blocks

            update(root, target, found, jobs, progress, report, embed, finder)
            report.elapsed_s = time.perf_counter() - started
            return report
        except SchemaMismatch:
            pass  # an older schema, another root or other settings: rebuild it from scratch below
    if target.exists():
        _refuse_foreign(target)
    _full_build(root, target, found, jobs, progress, report, embed, finder, resolve_jobs)
    report.elapsed_s = time.perf_counter() - started
    return report


def _write_embeddings(con: duckdb.DuckDBPyConnection, model: HashingModel, sparse: tuple, batch: int = 8192) -> None:
    """Dense vectors a batch at a time: peak memory stays at one batch, not the whole matrix."""
    ids, file_ids, indptr, indices, values = sparse
    write_vectors(con, ids[:0], file_ids[:0], np.zeros((0, model.dim), np.float32))  # creates the table
    for start in range(0, len(ids), batch):
        stop = min(start + batch, len(ids))
        lo, hi = indptr[start], indptr[stop]
        tf = dense_tf(indptr[start : stop + 1] - lo, indices[lo:hi], values[lo:hi], model.dim)
        write_vectors(con, ids[start:stop], file_ids[start:stop], model.finish(tf))


def _term_stats(con: duckdb.DuckDBPyConnection) -> None:
    """BM25's corpus statistics, kept in meta so a query need not scan the index for them."""
    documents, average = con.execute(
        "SELECT count(*), coalesce(avg(length), 0) FROM (SELECT id, any_value(length) AS length FROM terms GROUP BY id)"
    ).fetchone()
    db.set_meta(con, bm25_documents=documents, bm25_average_length=round(float(average), 4))


def _prepare_folder(target: Path) -> None:
    """Create the database's folder; a .codegraph/ folder ignores itself for git."""
    fresh = not target.parent.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    ignore = target.parent / ".gitignore"
    if target.parent.name == db.DB_DIRNAME and (fresh or not ignore.exists()):
        try:
            ignore.write_text("# written by codegraph: nothing in here belongs in version control\n*\n")
        except OSError:
            pass


def _refuse_foreign_file(target: Path) -> None:
    """Never overwrite a file that is not a DuckDB database."""
    with open(target, "rb") as fh:
        head = fh.read(16)
    if len(head) >= 12 and head[8:12] != b"DUCK":
        raise RepositoryError(f"{target} is not a DuckDB file: codegraph will not overwrite it; choose another --db")


def _refuse_foreign(target: Path) -> None:
    """Never overwrite a file codegraph did not write; a locked or damaged one is one clear line."""
    _refuse_foreign_file(target)
    try:
        con = duckdb.connect(str(target), read_only=True)
    except duckdb.Error as exc:
        error = db.open_error(target, exc)
        if isinstance(error, db.DatabaseCorrupt) or "lock" not in str(exc).lower():
            return  # a damaged database of ours is rebuilt by --full; the update says so
        raise error from None
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        con.close()
    if tables and "meta" not in tables:
        raise RepositoryError(f"{target} is a DuckDB database that codegraph did not write: it will not be "
                              "overwritten; choose another --db")


def _remove_abandoned_builds(target: Path) -> None:
    """Delete half-built databases of index runs that died (their process is gone)."""
    for leftover in target.parent.glob(target.name + ".building-*"):
        pid = leftover.name.split(".building-")[1].split(".")[0]
        try:
            os.kill(int(pid), 0)
            alive = int(pid) != os.getpid()
        except (ValueError, ProcessLookupError):
            alive = False
        except PermissionError:
            alive = True
        if not alive:
            leftover.unlink(missing_ok=True)


def _external_imports(project_modules: set[str], chunks: list[_Chunk]) -> set[str]:
    """Dotted names the chunks import from outside the repository (`from a import b` gives a and
    a.b: b may be a submodule)."""
    tops = {m.split(".")[0] for m in project_modules}
    names = set()
    for chunk in chunks:
        for module, name, star in zip(*column_lists(chunk.tables["imports"], ("imported_module", "name", "is_star"))):
            if not module or module.startswith(".") or module.split(".")[0] in tops:
                continue
            names.add(module)
            if name and not star:
                names.add(f"{module}.{name}")
    return names


def _library_chunks(project_modules: set[str], direct: list[str], finder: Finder, jobs: int,
                    progress: Progress | None) -> list[_Chunk]:
    """The library layer: the modules the repository imports from the standard library and its
    installed packages, and what those import in turn, up to library.MAX_DEPTH and MAX_FILES."""
    seen_names: set[str] = set()
    seen_paths: set[str] = set()
    out: list[_Chunk] = []
    frontier = set(direct)
    for _depth in range(library.MAX_DEPTH + 1):
        todo = sorted(library.candidates(frontier) - seen_names)
        seen_names.update(todo)
        if not todo or len(seen_paths) >= library.MAX_FILES:
            break
        found = [(f, layer) for f, layer in library.library_files(finder.locate(todo), finder)
                 if f.path not in seen_paths][: library.MAX_FILES - len(seen_paths)]
        seen_paths.update(f.path for f, _ in found)
        new: list[_Chunk] = []
        for layer in ("stdlib", "site"):
            batch = [f for f, where in found if where == layer]
            if batch:
                new.extend(_extract_chunks(batch, jobs, progress, 0, layer))
        out.extend(new)
        frontier = _external_imports(project_modules, new)
    for chunk in out:  # a library file that does not parse is not the user's problem
        chunk.skips = []
    return out


def _full_build(root: Path, target: Path, found, jobs: int, progress: Progress | None, report: IndexReport,
                embed: bool = True, finder: Finder | None = None, resolve_jobs: int = 1) -> None:
    report.mode = "full"
    tmp = target.with_name(target.name + f".building-{os.getpid()}")
    by_path = {f.path: f for f in found.files}
    skips, file_rows = list(found.skipped), []
    chunks: list[_Chunk] = []
    t = time.perf_counter()
    for chunk in _extract_chunks(found.files, jobs, progress, DEFAULT_DIM if embed else 0):
        chunks.append(chunk)
        skips.extend(chunk.skips)
        file_rows.extend(chunk.file_rows)
    report.timings["extract"] = time.perf_counter() - t
    report.parsed = len(file_rows)
    direct: list[str] = []
    lib_chunks: list[_Chunk] = []
    if finder is not None:
        t = time.perf_counter()
        project_modules = {f.module for f in found.files}
        direct = sorted(_external_imports(project_modules, chunks))
        lib_chunks = _library_chunks(project_modules, direct, finder, jobs, progress)
        report.library_files = sum(len(c.file_rows) for c in lib_chunks)
        report.timings["library"] = time.perf_counter() - t
    t = time.perf_counter()
    tables = {name: _concat(name, [c.tables[name] for c in chunks]) for name in EXTRACTED}
    lib_tables = {name: _concat(name, [c.tables[name] for c in lib_chunks]) for name in EXTRACTED}
    lib_files = [row for c in lib_chunks for row in c.file_rows]
    modules = {r.file_id: r.module for r in [*file_rows, *lib_files]}
    terms = pa.concat_tables([c.terms for c in chunks]) if chunks else BY_NAME["terms"].arrow_schema().empty_table()
    sparse = merge_sparse([c.vectors for c in chunks]) if embed else None
    del chunks, lib_chunks  # from here each table lives as long as the writer or the resolver needs it

    def phase(name: str) -> None:
        if progress:
            progress(name, 0, 1, "")

    try:
        con = db.connect_writable(tmp)
        try:
            db.create_schema(con, str(root))
            # The file is swapped in only when complete, so no transaction is needed for atomicity.
            # DuckDB ingests the definitions on a second thread while this one resolves names.
            side = con.cursor()
            phase("resolving")
            unresolved = [*((n, tables[n]) for n in EXTRACTED if n not in RESOLVED_TABLES),
                          *((f"{LIBRARY_SCHEMA}.{n}", lib_tables[n]) for n in EXTRACTED if n not in RESOLVED_TABLES),
                          ("terms", terms)]
            del terms
            writer = _Writer(side, unresolved)
            del unresolved
            try:
                resolver = build_resolver(
                    [*definition_rows(tables), *definition_rows(lib_tables)],
                    _concat("imports", [tables["imports"], lib_tables["imports"]]),
                    _concat("inheritance", [tables["inheritance"], lib_tables["inheritance"]]),
                    returns_of_tables(tables["bindings"], lib_tables["bindings"]))
                classes = [t["classes"].select(["id", "qualname"]) for t in (tables, lib_tables)]
                tables = for_resolution(resolver, tables)
                # the library's local names too, before any call is answered: a project call may read
                # what a library function returns (`a, b = socket.socketpair()`), as an update does
                # through its scope loader
                lib_tables = for_resolution(resolver, lib_tables)
                resolve_tables(resolver, tables, modules, jobs=resolve_jobs, emit=writer.put)
                del tables
                resolve_tables(resolver, lib_tables, modules, jobs=resolve_jobs,
                               emit=lambda name, table: writer.put(f"{LIBRARY_SCHEMA}.{name}", table))
                del lib_tables
                bases = [class_bases(resolver, classes[0]), class_bases(resolver, classes[1])]
                del resolver  # what it learned is in the resolved tables now
                _give_back_memory()
                if embed:
                    model = HashingModel(DEFAULT_DIM).fit_sparse(sparse[2], sparse[3])
            except BaseException:
                writer.abandon()
                raise
            writer.finish()
            if embed:
                phase("embedding")
                _write_embeddings(con, model, sparse)
                db.set_meta(con, **model_meta(model))
                del sparse
            report.timings["resolve"] = time.perf_counter() - t
            phase("writing")
            set_class_bases(con, bases[0])
            set_class_bases(con, bases[1], f"{LIBRARY_SCHEMA}.classes")
            db.insert_rows(con, "files", file_rows)
            db.insert_rows(con, "files", lib_files, schema_name=LIBRARY_SCHEMA)
            db.insert_rows(con, "skipped_files", [_skip_row(s, by_path) for s in skips])
            if finder is not None:
                db.set_meta(con, **library.meta(finder), library_imports=json.dumps(direct))
            _term_stats(con)
            db.set_meta(con, indexed_at=time.strftime("%Y-%m-%dT%H:%M:%S"))
            side.close()
            report.timings["write"] = time.perf_counter() - t
            if embed:
                phase("vector cache")
                t = time.perf_counter()
                _give_back_memory()
                report.vectors = build_vector_cache(con, target)
                report.timings["vectors"] = time.perf_counter() - t
            else:
                vectors_path(target).unlink(missing_ok=True)
            _summarise(report, con)
        finally:
            con.close()
        target.with_name(target.name + ".wal").unlink(missing_ok=True)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def _system_arrow_pool() -> Iterator[None]:
    """Arrow buffers from the C library's allocator while indexing: pyarrow's default mimalloc
    keeps the pages of freed tables, and a full build frees tables while the resolver grows, so
    the stdlib's peak was 0.94-0.99 GB with it against 0.87-0.92 GB without, at the same speed."""
    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(before)


@contextlib.contextmanager
def _full_collections_deferred() -> Iterator[None]:
    """No full garbage collection until the block ends (young ones still run): a build only
    grows its heap, and each full collection walks all of it again whenever it has grown by a
    quarter. On the stdlib that was 5.4 s of a 57 s build (gc callbacks); the one collection
    _give_back_memory makes takes 0.14 s, and the peak is unchanged. An incremental collector
    (Python 3.14) ignores the third threshold: there this changes nothing."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], 1 << 30)
    try:
        yield
    finally:
        gc.set_threshold(*before)


@contextlib.contextmanager
def _index_lock(target: Path) -> Iterator[None]:
    """One index run at a time per database; the second waits. Readers are never blocked."""
    if os.name == "nt":  # no flock; DuckDB's own lock still refuses a second writer
        yield
        return
    import fcntl

    with open(target.with_name(target.name + ".lock"), "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _skip_row(skip: Skip, by_path: dict[str, SourceFile]) -> tuple:
    f = by_path.get(skip.path)
    return SkipRow(path=skip.path, reason=skip.reason, detail=skip.detail, size=f.size if f else None,
                   mtime_ns=f.mtime_ns if f else None)


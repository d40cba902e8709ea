"""Updating a graph in place: only changed files are parsed, and only what their change can
reach is resolved again (each language's resolution decides what that is), in one transaction;
while other processes read the file, the update is written to a copy that replaces it
atomically (`_writable`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Iterator

import duckdb
import pyarrow as pa

from . import __version__, db
from .errors import CodegraphError, SchemaMismatch
from .build import (Build, IndexReport, Progress, Rebuild, by_language, external_imports, extract_chunks, modules_of,
                    skip_row, summarise, term_stats, write_embeddings)
from .columns import IN_FRESH, IN_GONE, concat, insert_arrow, insert_rows, keep_values, sql_string
from .languages import language
from .sources import Skip, SourceFile
from .schema import EXTRACTED, FILE_TABLES, LIBRARY_SCHEMA, RESOLVED_TABLES, words_sql
from .semantic.models import EmbeddingError, EmbeddingModel, get_model
from .semantic.store import VectorCache, build_vector_cache, model_from_meta, vectors_path


# An update's file this many times the size it had when last written whole is written whole again
# (_write_whole): an update writes its rows uncompressed and leaves the space of those it replaced
# free, so one that re-resolves most files doubles the file (the stdlib's 174 MB became 324 MB
# after a changed base, 496 MB after a second one, each update after that 0.15-0.2 s slower).
GROWN_AT = 1.5
GROWN_BY_AT_LEAST = 32 << 20  # bytes: a small graph's file grows by a few blocks at each update, and is copied fast


@contextlib.contextmanager
def _writable(target: Path, rewrite: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a copy of the database that replaces it atomically when the update is
    complete. DuckDB lets a writer in only when no other process has the file open, and refuses
    readers while a writer has it: writing in place would fail the update whenever a server, a
    search or the duckdb shell reads, and fail them while it writes. With a copy, readers keep
    the state they opened, the next ones open the new one, and nobody waits or fails. (Copying
    costs about 0.1 s per 100 MB of database.) The row groups an update writes are not
    compressed: its checkpoint, when the connection closes, takes half as long (0.09 s against
    0.18 s on click), and the next whole write (a full build, or _write_whole) compresses them
    again. Every page of the copy is dirty until written back, and the checkpoint's fsync would
    write them all (0.06 s of a stdlib update): the write-back starts at once on a thread, beside
    the update's work. With rewrite, a copy grown past GROWN_AT is written whole before it
    replaces the database."""
    copy = target.with_name(target.name + f".building-{os.getpid()}")
    shutil.copyfile(target, copy)
    written = threading.Thread(target=_write_back, args=(copy,), name="codegraph-write-back", daemon=True)
    written.start()
    try:
        con = db.connect_writable(copy)
        con.execute("SET force_compression = 'uncompressed'")
        stored = db.get_meta(con).get("whole_bytes") if rewrite else None
        whole = int(stored) if stored else _file_bytes(con)  # unknown: the last whole write was a full build's
    except BaseException:
        written.join()
        copy.unlink(missing_ok=True)
        raise
    try:
        yield con
        written.join()
        grown = False
        if rewrite:
            con.execute("CHECKPOINT")
            size = _file_bytes(con)
            grown = size > GROWN_AT * whole and size - whole >= GROWN_BY_AT_LEAST
            if not grown and not stored:
                db.set_meta(con, whole_bytes=whole)
    except BaseException:
        con.close()
        written.join()
        copy.unlink(missing_ok=True)
        copy.with_name(copy.name + ".wal").unlink(missing_ok=True)
        raise
    con.close()
    if grown:
        _write_whole(copy)
    os.replace(copy, target)


def _file_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The size of the connection's database file, in its blocks (free ones too)."""
    return con.execute("SELECT total_blocks * block_size FROM pragma_database_size() "
                       "WHERE database_name = current_database()").fetchone()[0]


def _write_whole(path: Path) -> None:
    """The database at `path` written again in place, compressed and without free space (1.5 s for
    the stdlib's graph, which it makes 147 MB). What fails here leaves `path` as it was: an
    update is whole without this."""
    whole = path.with_name(path.name + ".whole")
    try:
        whole.unlink(missing_ok=True)
        con = db.connect_writable(whole)
        try:
            name = con.execute("SELECT current_database()").fetchone()[0]
            con.execute(f"ATTACH {sql_string(path)} AS _written (READ_ONLY)")
            con.execute(f'COPY FROM DATABASE _written TO "{name}"')
            con.execute("DETACH _written")
            con.execute("CHECKPOINT")
            db.set_meta(con, whole_bytes=_file_bytes(con))
        finally:
            con.close()
        os.replace(whole, path)
    except (CodegraphError, duckdb.Error, OSError):
        for left in (whole, whole.with_name(whole.name + ".wal")):
            with contextlib.suppress(OSError):
                left.unlink(missing_ok=True)


def _write_back(path: Path) -> None:
    """Write a file's pages to disk (what DuckDB's checkpoint would wait for otherwise); a
    failure here is the checkpoint's to meet and report."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _cannot_update(meta: dict[str, str], build: Build) -> str | None:
    """Why the database cannot be brought up to date for this run, if it cannot."""
    root, target, library = build.root, build.target, build.library
    if meta.get("repo_root") != str(root):
        return f"{target} indexes {meta.get('repo_root')}, not {root}"
    if meta.get("tool_version") != __version__:
        return f"{target} was built by codegraph {meta.get('tool_version')}"
    if (library is None) != (not meta.get("library_identity")) or \
            (library is not None and meta.get("library_identity") != library.identity()):
        return f"{target} was built with other library settings"
    return None


def _embedding_model(meta: dict[str, str], build: Build) -> EmbeddingModel | Rebuild | None:
    """The model an update embeds with: the one the database's vectors come from, unless this run
    asks for none or for another (then the graph is built afresh with it)."""
    stored = meta.get("embedding_model")
    if (build.embed is None) != (not stored):
        return Rebuild(f"{build.target} was built {'with' if stored else 'without'} embeddings")
    if build.embed is None:
        return None
    try:
        model = model_from_meta(meta)
    except EmbeddingError as exc:
        return Rebuild(str(exc))
    if build.embed != "auto" and get_model(build.embed).id != model.id:
        return Rebuild(f"{build.target}'s vectors come from {model.id}, not from the model asked for ({build.embed})")
    return model


def update(build: Build) -> Rebuild | None:
    """Bring the database up to date with the files; or the verdict that it must be built afresh."""
    target, found, workers, progress, report = build.target, build.found, build.workers, build.progress, build.report
    library = build.library
    report.mode = "update"
    # Read what the database holds (read-only: readers of the file do not stop that), then let go
    # of it while the workers parse: forking a process that holds a DuckDB connection is not safe.
    con = db.connect_readonly(target)
    try:
        try:
            meta = db.check_schema(con, target)
        except SchemaMismatch as exc:  # another schema version: the rows cannot be kept
            return Rebuild(str(exc))
        reason = _cannot_update(meta, build)
        if reason is not None:
            return Rebuild(reason)
        model = _embedding_model(meta, build)
        if isinstance(model, Rebuild):
            return model
        old = {path: (fid, module, sha, size, mtime) for fid, path, module, sha, size, mtime in
               con.execute("SELECT file_id, path, module, sha256, size, mtime_ns FROM files WHERE layer = 'project'"
                           ).fetchall()}
        library_state = con.execute(f"SELECT path, size, mtime_ns FROM {LIBRARY_SCHEMA}.files").fetchall()
        old_project_imports = con.execute("""SELECT f.path, i.imported_module, i.name, i.is_star FROM imports i
                                             JOIN files f USING (file_id) WHERE f.layer = 'project'
                                             AND f.language = $language""",
                                          {"language": library.language}).fetchall() if library else []
        old_skips = {path: (reason, detail, size, mtime) for path, reason, detail, size, mtime in
                     con.execute("SELECT path, reason, detail, size, mtime_ns FROM skipped_files").fetchall()}
    finally:
        con.close()
    to_parse: list[SourceFile] = []
    touched: list[tuple[int, int]] = []  # same content, new mtime
    kept_skips: list[Skip] = []
    for f in found.files:
        prev = old.get(f.path)
        if prev is not None and prev[1] == f.module:
            if prev[3] == f.size and prev[4] == f.mtime_ns:
                continue
            try:
                with open(f.abspath, "rb") as fh:
                    same = hashlib.sha256(fh.read()).hexdigest() == prev[2]
            except OSError:  # vanished or unreadable since discovery: the parser reports it
                same = False
            if same:
                touched.append((prev[0], f.mtime_ns))
                continue
        skipped_before = old_skips.get(f.path)
        if skipped_before and skipped_before[2] == f.size and skipped_before[3] == f.mtime_ns:
            kept_skips.append(Skip(f.path, skipped_before[0], skipped_before[1]))
            continue
        to_parse.append(f)
    present = {f.path for f in found.files}
    parse_paths = {f.path for f in to_parse}
    gone = [p for p in old if p not in present or p in parse_paths]
    deleted = [p for p in old if p not in present]
    skips_now = list(found.skipped) + kept_skips
    skips_changed = sorted((s.path, s.reason) for s in skips_now) != sorted(
        (p, r) for p, (r, *_rest) in old_skips.items())
    report.unchanged = len(found.files) - len(to_parse) - len(kept_skips)
    report.deleted = len(deleted)
    if library is not None and library.changed(meta, library_state):
        return Rebuild("a library the repository imports changed on disk")
    if not to_parse and not deleted and not touched and not skips_changed:
        report.mode = "unchanged"
        if model is not None and VectorCache.read(vectors_path(target), token=meta.get("vectors_token") or "-") is None:
            with _writable(target, rewrite=False) as con:  # the vector cache is missing or damaged: made again
                report.vectors = build_vector_cache(con, target)
        con = db.connect_readonly(target)
        try:
            summarise(report, con)
        finally:
            con.close()
        return None

    t = time.perf_counter()
    by_path = {f.path: f for f in found.files}
    chunks = list(extract_chunks(to_parse, workers, progress, model))
    report.timings["extract"] = time.perf_counter() - t
    t = time.perf_counter()
    file_rows = [row for c in chunks for row in c.file_rows]
    skips_now.extend(s for c in chunks for s in c.skips)
    if library is not None:
        project_modules, gone_paths = modules_of(found.files, library.language), set(gone)
        kept = library.imported(project_modules, (row[1:] for row in old_project_imports if row[0] not in gone_paths))
        now = sorted(kept | external_imports(library, project_modules, chunks))
        if now != json.loads(meta.get("library_imports") or "[]"):
            return Rebuild("the repository imports other libraries now")
    fresh = {name: concat(name, [c.tables[name] for c in chunks]) for name in EXTRACTED}
    report.parsed = len(file_rows)
    if progress:
        progress("writing", 0, 1, str(target))

    with _writable(target) as con:
        _apply_update(con, target, report, meta, model, old, gone, to_parse, fresh, chunks, file_rows, touched,
                      skips_now, by_path, progress)
    return None


def _apply_update(con, target: Path, report: IndexReport, meta: dict, model, old: dict, gone: list,
                  to_parse: list, fresh: dict, chunks: list, file_rows: list, touched: list, skips_now: list,
                  by_path: dict, progress: Progress | None) -> None:
    """The update as one transaction on `con`: replace the changed files' rows, let each language
    resolve them and what their change reaches, refresh the terms statistics and the vector cache."""
    t = time.perf_counter()
    con.execute("BEGIN")
    gone_ids = [old[p][0] for p in gone]
    changed_modules = sorted({old[p][1] for p in gone} | {f.module for f in to_parse})
    keep_values(con, "_gone", "file_id", gone_ids, listed=True)
    keep_values(con, "_fresh", "file_id", [r.file_id for r in file_rows], listed=True)
    keep_values(con, "_changed", "module", changed_modules, pa.string())
    # Each language with a resolution plans from the rows still there: the languages of the
    # files replaced (as the database has them) and of those parsed now.
    languages_now = {r.file_id: r.language for r in file_rows}
    was = {fid: lang for fid, lang in con.execute(
        f"SELECT file_id, language FROM files WHERE {IN_GONE}").fetchall()}
    groups = by_language(fresh, languages_now)
    plans = {}
    for name in sorted(set(languages_now.values()) | set(was.values())):
        resolution = language(name).resolution()
        group = groups.setdefault(name, {table: concat(table, []) for table in EXTRACTED})
        plans[name] = (resolution, resolution.plan_update(con, group) if resolution is not None else None)
    for name in FILE_TABLES:
        if name != "embeddings" or model is not None:  # the vectors' table: only in a graph with embeddings
            con.execute(f'DELETE FROM "{name}" WHERE {IN_GONE}')
    if model is not None:
        write_embeddings(con, model, [c.vectors for c in chunks], progress=progress)
    for name in EXTRACTED:  # each language's rows, as its plan left them (it may keep some where they are)
        if name not in RESOLVED_TABLES:
            for group in groups.values():
                insert_arrow(con, name, group[name])
    for chunk in chunks:
        insert_arrow(con, "terms", chunk.terms)
    modules = dict(con.execute("SELECT file_id, module FROM all_files").fetchall())
    modules.update({r.file_id: r.module for r in file_rows})
    insert_rows(con, "files", file_rows)  # the languages' resolutions read which file is whose
    report.reresolved = 0
    for name, (resolution, plan) in plans.items():
        if resolution is None:
            for table in RESOLVED_TABLES:
                insert_arrow(con, table, groups[name][table])
        else:
            report.reresolved += resolution.apply_update(con, plan, groups[name], modules)
    con.execute(words_sql(IN_FRESH))  # the files parsed now have their rows, and no other file's words changed
    for fid, mtime in touched:
        con.execute("UPDATE files SET mtime_ns = $m WHERE file_id = $f", {"m": mtime, "f": fid})
    con.execute("DELETE FROM skipped_files")
    insert_rows(con, "skipped_files", [skip_row(s, by_path) for s in skips_now])
    term_stats(con)
    db.set_meta(con, indexed_at=time.strftime("%Y-%m-%dT%H:%M:%S"))
    if model is not None:
        if progress:
            progress("vector cache", 0, 1, "")
        changed_files = sorted(set(gone_ids) | {r.file_id for r in file_rows})
        report.vectors = build_vector_cache(con, target, previous_token=meta.get("vectors_token"),
                                            changed_files=changed_files)
    con.execute("COMMIT")
    report.timings["write"] = time.perf_counter() - t
    summarise(report, con)

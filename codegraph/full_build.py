"""A full build: every file parsed and resolved, written to a new file beside the database and
swapped in with os.replace, so a crash leaves the previous database as it was."""

from __future__ import annotations

import json
import os
import time

import pyarrow as pa

from . import db
from .build import (Build, Chunk, Writer, by_language, external_imports, extract_chunks, give_back_memory,
                    held_rows, library_chunks, modules_of, skip_row, summarise, term_stats, write_embeddings)
from .columns import arrow_schema, concat, insert_rows
from .languages import language
from .library_cache import LibraryCache, find_layer, layer_key, read_layer, view_layer, write_layer
from .schema import BY_NAME, EXTRACTED, LIBRARY_SCHEMA, RESOLVED_TABLES, words_sql
from .semantic.models import get_model
from .semantic.store import build_vector_cache, vectors_path

# The library tables resolving the project reads (resolution.full with library_resolved): all but
# the calls and references, which only the library's own resolution reads.
_READ_OF_LAYER = tuple(name for name in EXTRACTED if name not in ("calls", "refs"))


def full_build(build: Build) -> None:
    root, target, found, workers, progress, report = (build.root, build.target, build.found, build.workers,
                                                      build.progress, build.report)
    library, resolve_jobs = build.library, build.resolve_jobs
    model = get_model(build.embed) if build.embed is not None else None
    report.mode = "full"
    tmp = target.with_name(target.name + f".building-{os.getpid()}")
    by_path = {f.path: f for f in found.files}
    skips, file_rows = list(found.skipped), []
    chunks: list[Chunk] = []
    t = time.perf_counter()
    for chunk in extract_chunks(found.files, workers, progress, model):
        chunks.append(chunk)
        skips.extend(chunk.skips)
        file_rows.extend(chunk.file_rows)
    report.timings["extract"] = time.perf_counter() - t
    report.parsed = len(file_rows)
    direct: list[str] = []
    lib_chunks: list[Chunk] = []
    layer, reused = "", None  # the library layer's key (library_cache.layer_key) and its folder, if kept
    if library is not None:
        t = time.perf_counter()
        project_modules = modules_of(found.files, library.language)
        direct = sorted(external_imports(library, project_modules, chunks))
        cache = LibraryCache.open(library.identity())
        try:
            lib_chunks = library_chunks(project_modules, direct, library, workers, progress, cache)
            layer = layer_key([row for c in lib_chunks for row in c.file_rows])
            reused = find_layer(layer) if cache is not None else None
            if reused is None and cache is not None:
                held_rows(lib_chunks, cache)
        finally:
            if cache is not None:
                cache.close()
        report.library_files = sum(len(c.file_rows) for c in lib_chunks)
        note = library.missing_note(root, set(direct))
        if note:
            report.warnings.append(note)
        report.library_parsed = sum(len(c.file_rows) for c in lib_chunks if not c.cached)
        report.library_resolved = reused is None
        report.library_layer = str(reused or "")
        report.library_environment = library.named()
        report.timings["library"] = time.perf_counter() - t
    t = time.perf_counter()
    tables = {name: concat(name, [c.tables[name] for c in chunks]) for name in EXTRACTED}
    if reused is not None:  # what resolving the project reads of the library (its own rows are in the layer)
        lib_tables = {**{name: concat(name, []) for name in EXTRACTED}, **read_layer(reused, _READ_OF_LAYER)}
    else:
        lib_tables = {name: concat(name, [c.tables[name] for c in lib_chunks]) for name in EXTRACTED}
    lib_files = [row for c in lib_chunks for row in c.file_rows]
    modules = {r.file_id: r.module for r in [*file_rows, *lib_files]}
    terms = pa.concat_tables([c.terms for c in chunks]) if chunks else arrow_schema(BY_NAME["terms"]).empty_table()
    features = [c.vectors for c in chunks] if model is not None else []
    del chunks, lib_chunks  # from here each table lives as long as the writer or the resolver needs it

    def phase(name: str) -> None:
        if progress:
            progress(name, 0, 1, "")

    try:
        con = db.connect_writable(tmp)
        try:
            db.create_schema(con, str(root))
            if reused is not None:
                view_layer(con, reused, LIBRARY_SCHEMA)
            # The file is swapped in only when complete, so no transaction is needed for atomicity.
            # DuckDB ingests the definitions on a second thread while this one resolves names.
            side = con.cursor()
            phase("resolving")
            unresolved = [*((n, tables[n]) for n in EXTRACTED if n not in RESOLVED_TABLES),
                          *((f"{LIBRARY_SCHEMA}.{n}", lib_tables[n]) for n in EXTRACTED
                            if n not in RESOLVED_TABLES and reused is None),
                          ("terms", terms)]
            del terms
            writer = Writer(side, unresolved)
            del unresolved
            try:
                # each language resolves its own files' rows (the library's, its language's too)
                groups = by_language(tables, {r.file_id: r.language for r in file_rows})
                del tables
                library_language = library.language if library is not None else None
                if library_language is not None and library_language not in groups:
                    groups[library_language] = {name: concat(name, []) for name in EXTRACTED}
                after = []
                for name in sorted(groups):
                    group = groups.pop(name)
                    resolution = language(name).resolution()
                    if resolution is None:  # rows as extracted
                        for table in RESOLVED_TABLES:
                            writer.put(table, group.pop(table))
                        continue
                    if name == library_language:
                        lib, lib_tables = lib_tables, {}
                    else:
                        lib = {n: concat(n, []) for n in EXTRACTED}
                    after.append(resolution.full(group, lib, modules, resolve_jobs, writer.put,
                                                 library_resolved=reused is not None and name == library_language))
                    del group, lib
                give_back_memory()
            except BaseException:
                writer.abandon()
                raise
            writer.finish()
            report.timings["resolve"] = time.perf_counter() - t
            if model is not None:
                t = time.perf_counter()
                write_embeddings(con, model, features, fit=True, progress=progress)
                db.set_meta(con, **model.meta())
                del features
                report.timings["embed"] = time.perf_counter() - t
            t = time.perf_counter()
            phase("writing")
            for write in after:
                write(con)
            con.execute(words_sql("TRUE"))
            insert_rows(con, "files", file_rows)
            insert_rows(con, "files", lib_files, schema_name=LIBRARY_SCHEMA)
            insert_rows(con, "skipped_files", [skip_row(s, by_path) for s in skips])
            if library is not None:
                db.set_meta(con, **library.meta(), library_identity=library.identity(),
                            library_imports=json.dumps(direct), library_layer=str(reused) if reused is not None else "")
            term_stats(con)
            db.set_meta(con, indexed_at=time.strftime("%Y-%m-%dT%H:%M:%S"))
            side.close()
            report.timings["write"] = time.perf_counter() - t
            if model is not None:
                phase("vector cache")
                t = time.perf_counter()
                give_back_memory()
                report.vectors = build_vector_cache(con, target)
                report.timings["vectors"] = time.perf_counter() - t
            else:
                vectors_path(target).unlink(missing_ok=True)
            summarise(report, con)
            if library is not None and reused is None:
                write_layer(layer, con, LIBRARY_SCHEMA)
        finally:
            con.close()
        target.with_name(target.name + ".wal").unlink(missing_ok=True)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
        raise



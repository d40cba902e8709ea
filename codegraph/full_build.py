"""A full build: every file parsed and resolved, written to a new file beside the database and
swapped in with os.replace, so a crash leaves the previous database as it was."""

from __future__ import annotations

import json
import os
import time

import pyarrow as pa

from . import db
from .build import (Build, Chunk, Writer, concat, external_imports, extract_chunks, give_back_memory,
                    library_chunks, skip_row, summarise, term_stats, write_embeddings)
from .resolution import (RESOLVED_TABLES, build_resolver, class_bases, definition_rows, for_resolution, resolve_tables,
                         returns_of_tables, set_class_bases)
from .schema import BY_NAME, EXTRACTED, LIBRARY_SCHEMA
from .semantic.models import HashingModel
from .semantic.store import DEFAULT_DIM, build_vector_cache, merge_sparse, model_meta, vectors_path

def full_build(build: Build) -> None:
    root, target, found, jobs, progress, report = (build.root, build.target, build.found, build.jobs, build.progress,
                                                   build.report)
    embed, library, resolve_jobs = build.embed, build.library, build.resolve_jobs
    report.mode = "full"
    tmp = target.with_name(target.name + f".building-{os.getpid()}")
    by_path = {f.path: f for f in found.files}
    skips, file_rows = list(found.skipped), []
    chunks: list[Chunk] = []
    t = time.perf_counter()
    for chunk in extract_chunks(found.files, jobs, progress, DEFAULT_DIM if embed else 0):
        chunks.append(chunk)
        skips.extend(chunk.skips)
        file_rows.extend(chunk.file_rows)
    report.timings["extract"] = time.perf_counter() - t
    report.parsed = len(file_rows)
    direct: list[str] = []
    lib_chunks: list[Chunk] = []
    if library is not None:
        t = time.perf_counter()
        project_modules = {f.module for f in found.files}
        direct = sorted(external_imports(library, project_modules, chunks))
        lib_chunks = library_chunks(project_modules, direct, library, jobs, progress)
        report.library_files = sum(len(c.file_rows) for c in lib_chunks)
        report.timings["library"] = time.perf_counter() - t
    t = time.perf_counter()
    tables = {name: concat(name, [c.tables[name] for c in chunks]) for name in EXTRACTED}
    lib_tables = {name: concat(name, [c.tables[name] for c in lib_chunks]) for name in EXTRACTED}
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
            writer = Writer(side, unresolved)
            del unresolved
            try:
                resolver = build_resolver(
                    [*definition_rows(tables), *definition_rows(lib_tables)],
                    concat("imports", [tables["imports"], lib_tables["imports"]]),
                    concat("inheritance", [tables["inheritance"], lib_tables["inheritance"]]),
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
                give_back_memory()
                if embed:
                    model = HashingModel(DEFAULT_DIM).fit_sparse(sparse[2], sparse[3])
            except BaseException:
                writer.abandon()
                raise
            writer.finish()
            if embed:
                phase("embedding")
                write_embeddings(con, model, sparse)
                db.set_meta(con, **model_meta(model))
                del sparse
            report.timings["resolve"] = time.perf_counter() - t
            phase("writing")
            set_class_bases(con, bases[0])
            set_class_bases(con, bases[1], f"{LIBRARY_SCHEMA}.classes")
            db.insert_rows(con, "files", file_rows)
            db.insert_rows(con, "files", lib_files, schema_name=LIBRARY_SCHEMA)
            db.insert_rows(con, "skipped_files", [skip_row(s, by_path) for s in skips])
            if library is not None:
                db.set_meta(con, **library.meta(), library_imports=json.dumps(direct))
            term_stats(con)
            db.set_meta(con, indexed_at=time.strftime("%Y-%m-%dT%H:%M:%S"))
            side.close()
            report.timings["write"] = time.perf_counter() - t
            if embed:
                phase("vector cache")
                t = time.perf_counter()
                give_back_memory()
                report.vectors = build_vector_cache(con, target)
                report.timings["vectors"] = time.perf_counter() - t
            else:
                vectors_path(target).unlink(missing_ok=True)
            summarise(report, con)
        finally:
            con.close()
        target.with_name(target.name + ".wal").unlink(missing_ok=True)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
        raise



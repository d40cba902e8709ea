"""The library layer kept in the user's cache folder: per environment, each library file's
extracted rows at its size and modification time (a package upgraded or edited is parsed again),
one DuckDB file per environment (Library.identity); and each resolved library layer a build made
(a layer is a set of library files at their contents: one project's imports and what they
import; the library's rows are resolved from the library alone, so every project with the same
layer has the same rows), as Parquet files the graphs of that layer read in place. A full build
then parses only the library files it has not seen, and resolves and writes no library row of a
layer it finds. Both per version of the code that makes the rows (schema.SCHEMA_VERSION), so rows
of another extractor or resolver are never read. A build that cannot use the cache (another build
holds it, a read-only home) parses, resolves and writes everything, as without one.

    $CODEGRAPH_CACHE          the folder (default: $XDG_CACHE_HOME/codegraph, else ~/.cache/codegraph)
    CODEGRAPH_CACHE=off       no cache
"""

from __future__ import annotations

import collections
import hashlib
import os
import shutil
import time
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .cachedir import cache_folder, layers_folder
from .columns import arrow_schema, insert_arrow, insert_rows, sql_string
from .schema import BY_NAME, EXTRACTED, SCHEMA_VERSION
from .sources import SourceFile

_SEQ = "_seq"  # a row's place in its file's extraction: rows come back in the order they were made


def layer_key(file_rows: list[tuple]) -> str:
    """What a library layer's resolution reads: its files, each as the module it is and at its
    contents (a file added, gone or changed makes another layer)."""
    digest = hashlib.sha256()
    for row in sorted((r.path, r.module, r.sha256, r.layer) for r in file_rows):
        digest.update("\0".join(map(str, row)).encode() + b"\n")
    return digest.hexdigest()[:32]


class LibraryCache:
    """Open with `LibraryCache.open(identity)`; None when there is no cache to use."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path) -> None:
        self.con, self.path = con, path

    @classmethod
    def open(cls, identity: str) -> "LibraryCache | None":
        folder = cache_folder()
        if folder is None:
            return None
        digest = hashlib.sha256(f"{identity}\0{SCHEMA_VERSION}".encode()).hexdigest()[:20]
        path = folder / f"library-{digest}.duckdb"
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            con = duckdb.connect(str(path))
        except (OSError, duckdb.Error):  # locked by another build, a read-only home, a damaged file
            return None
        try:
            files = BY_NAME["files"]
            con.execute(files.ddl(if_not_exists=True))
            for name in EXTRACTED:
                columns = ", ".join(f'"{c.name}" {c.sql_type()}' for c in BY_NAME[name].columns if c.stage != "resolve")
                con.execute(f'CREATE TABLE IF NOT EXISTS "{name}" ({columns}, {_SEQ} BIGINT)')
        except duckdb.Error:
            con.close()
            return None
        return cls(con, path)

    def known(self, files: list[tuple[SourceFile, str]]) -> tuple[list[tuple], pa.Table, list[tuple[SourceFile, str]]]:
        """Of (file, layer) pairs: the file rows and imports rows of the files held at their size
        and modification time, and the pairs to parse. The imports are what a walk of the layer
        reads next; the other rows come in one go at its end (rows)."""
        wanted = pa.table({"path": [f.path for f, _ in files], "module": [f.module for f, _ in files],
                           "size": pa.array([f.size for f, _ in files], pa.int64()),
                           "mtime_ns": pa.array([f.mtime_ns for f, _ in files], pa.int64()),
                           "layer": [layer for _, layer in files]})
        self.con.register("_wanted", wanted)
        try:
            columns = BY_NAME["files"].names()
            held = self.con.execute(
                f"""SELECT {', '.join(f'f."{c}"' for c in columns)} FROM files f JOIN _wanted w
                    ON f.path = w.path AND f.module = w.module AND f.size = w.size AND f.mtime_ns = w.mtime_ns
                    AND f.layer = w.layer ORDER BY f.path""").fetchall()
        finally:
            self.con.unregister("_wanted")
        row = BY_NAME["files"].row
        file_rows = [row(*values) for values in held]
        found = {(r.path, r.layer) for r in file_rows}
        return file_rows, self.rows([r.file_id for r in file_rows], ("imports",))["imports"], \
            [(f, layer) for f, layer in files if (f.path, layer) not in found]

    def rows(self, file_ids: list[int], names: tuple[str, ...] = EXTRACTED) -> dict[str, pa.Table]:
        """The extracted rows held of these files, in each file's order."""
        self.con.register("_ids", pa.table({"file_id": pa.array(file_ids, pa.int64())}))
        try:
            tables = {}
            for name in names:
                schema = arrow_schema(BY_NAME[name], "extract")
                tables[name] = self.con.execute(
                    f'SELECT {", ".join(f"t.{c}" for c in schema.names)} FROM "{name}" t JOIN _ids USING (file_id) '
                    f"ORDER BY t.file_id, t.{_SEQ}").to_arrow_table().cast(schema)
            return tables
        finally:
            self.con.unregister("_ids")

    def keep(self, file_rows: list[tuple], tables: dict[str, pa.Table]) -> None:
        """Hold the rows of freshly parsed files (replacing what was held of them)."""
        seen = collections.Counter(r.file_id for r in file_rows)
        if any(n > 1 for n in seen.values()):  # one file read as two modules (a symlink): its rows cannot be told apart
            file_rows = [r for r in file_rows if seen[r.file_id] == 1]
            keep = pa.array([r.file_id for r in file_rows], pa.int64())
            tables = {name: t.filter(pc.is_in(t.column("file_id"), value_set=keep)) for name, t in tables.items()}
        if not file_rows:
            return
        ids = pa.table({"file_id": pa.array([r.file_id for r in file_rows], pa.int64())})
        try:
            self.con.execute("BEGIN")
            self.con.register("_ids", ids)
            if self.con.execute("SELECT count(*) FROM files WHERE file_id IN (SELECT file_id FROM _ids)").fetchone()[0]:
                for name in ("files", *EXTRACTED):  # parsed again: changed since it was kept
                    self.con.execute(f'DELETE FROM "{name}" WHERE file_id IN (SELECT file_id FROM _ids)')
            self.con.unregister("_ids")
            insert_rows(self.con, "files", file_rows)
            for name, table in tables.items():
                insert_arrow(self.con, name, table.append_column(_SEQ, pa.array(range(table.num_rows), pa.int64())))
            self.con.execute("COMMIT")
        except duckdb.Error:  # a full disk: the cache is not needed, the build goes on
            try:
                self.con.execute("ROLLBACK")
            except duckdb.Error:
                pass

    def close(self) -> None:
        self.con.close()


# -- resolved layers ------------------------------------------------------------------------------
# A layer's rows as a graph holds them (the EXTRACTED tables, resolved), one Parquet file per table
# in a folder of its own under cachedir.layers_folder(): written once, never changed, read in place
# by every graph whose library layer it is (the graph's `library` tables are views of these files),
# so a build that finds its layer writes none of the library's rows. Not its `files`: their sizes
# and modification times are each build's own (a file touched, its contents the same, is the same
# layer), and an update compares them with the disk.

MAX_LAYERS = 16  # layers kept of this codegraph version, the least recently used dropped first (not today's)
_STALE_DAYS = 30  # another version's layers are dropped once none was used for this long
_USED = "used"  # a file in the layer's folder touched by each build that reads it


def _layers_here() -> Path:
    return layers_folder() / SCHEMA_VERSION


def layer_files(folder: Path) -> dict[str, Path]:
    return {name: folder / f"{name}.parquet" for name in EXTRACTED}


def find_layer(key: str) -> Path | None:
    """The folder of the resolved layer `key`, if a build wrote it (and marked as used now)."""
    if cache_folder() is None:
        return None
    folder = _layers_here() / key
    if not all(path.is_file() for path in layer_files(folder).values()):
        return None
    try:
        (folder / _USED).touch()
    except OSError:  # a read-only cache: still readable
        pass
    return folder


def write_layer(key: str, con: duckdb.DuckDBPyConnection, schema_name: str) -> None:
    """Keep the library layer `key` as the build's database `con` holds it in `schema_name`: its
    files written into a folder of their own, renamed into place whole (a concurrent build that
    wrote it first wins); then past MAX_LAYERS the least recently used go. A cache that cannot be
    written (a full disk, a read-only home) is left out."""
    if cache_folder() is None:
        return
    here = _layers_here()
    partial = here / f"{key}.partial-{os.getpid()}"
    try:
        partial.mkdir(parents=True, mode=0o700)
        for name, path in layer_files(partial).items():
            con.execute(f'COPY (SELECT * FROM {schema_name}."{name}") TO {sql_string(path)} (FORMAT parquet)')
        (partial / _USED).touch()
        try:
            os.rename(partial, here / key)
        except OSError:  # there already
            shutil.rmtree(partial, ignore_errors=True)
        _evict(here)
    except (OSError, duckdb.Error):
        shutil.rmtree(partial, ignore_errors=True)


def _used_at(folder: Path) -> float:
    try:
        return (folder / _USED).stat().st_mtime
    except OSError:
        return 0.0


def _evict(here: Path) -> None:
    layers = sorted((p for p in here.iterdir() if p.is_dir() and ".partial-" not in p.name), key=_used_at,
                    reverse=True)
    recent = time.time() - 86400  # a layer used today may be a graph's that is still open: kept
    for folder in layers[MAX_LAYERS:]:
        if _used_at(folder) < recent:
            shutil.rmtree(folder, ignore_errors=True)
    cutoff = time.time() - _STALE_DAYS * 86400
    for version in here.parent.iterdir():
        if version != here and version.is_dir() and not version.is_symlink() \
                and all(_used_at(p) < cutoff for p in version.iterdir()):
            shutil.rmtree(version, ignore_errors=True)


def view_layer(con: duckdb.DuckDBPyConnection, folder: Path, schema_name: str) -> None:
    """Make the tables of `schema_name` views of the layer in `folder`."""
    for name, path in layer_files(folder).items():
        con.execute(f'DROP TABLE {schema_name}."{name}"')
        con.execute(f'CREATE VIEW {schema_name}."{name}" AS SELECT * FROM read_parquet({sql_string(path)})')


def read_layer(folder: Path, names: tuple[str, ...]) -> dict[str, pa.Table]:
    """The extracted columns of the layer's tables `names` (what resolving the project reads). In
    this thread: Arrow's pool of readers takes longer to start than the files take to read."""
    out = {}
    for name in names:
        schema = arrow_schema(BY_NAME[name], "extract")
        out[name] = pq.read_table(layer_files(folder)[name], columns=schema.names, use_threads=False).cast(schema)
    return out

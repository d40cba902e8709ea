"""The library layer kept per environment in the user's cache folder: each library file's
extracted rows, at its size and modification time (a package upgraded or edited is parsed again),
and the resolved rows of each library layer a build made (a layer is a set of library files at
their contents: one project's imports and what they import; the library's rows are resolved from
the library alone, so every project with the same layer reads the same rows). A full build then
parses only the library files it has not seen, and resolves no library row it has. One DuckDB
file per environment (Library.identity) and per version of the code that makes the rows
(schema.SCHEMA_VERSION), so rows of another extractor or resolver are never read. A build that
cannot open it (another build holds it, a read-only home) parses and resolves everything, as
without a cache; nothing in it is required.

    $CODEGRAPH_CACHE          the folder (default: $XDG_CACHE_HOME/codegraph, else ~/.cache/codegraph)
    CODEGRAPH_CACHE=off       no cache
"""

from __future__ import annotations

import collections
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from .cachedir import cache_folder
from .columns import arrow_schema, insert_arrow, insert_rows
from .schema import BY_NAME, EXTRACTED, RESOLVED_LATER, RESOLVED_TABLES, SCHEMA_VERSION
from .sources import SourceFile

_SEQ = "_seq"  # a row's place in its file's extraction: rows come back in the order they were made
_LAYER_KEY = "_layer"  # the layer (layer_key) a resolved row belongs to
MAX_LAYERS = 8  # resolved layers kept, the least recently used dropped first


def layer_key(file_rows: list[tuple]) -> str:
    """What a library layer's resolution reads: its files, each as the module it is and at its
    contents (a file added, gone or changed makes another layer)."""
    digest = hashlib.sha256()
    for row in sorted((r.path, r.module, r.sha256, r.layer) for r in file_rows):
        digest.update("\0".join(map(str, row)).encode() + b"\n")
    return digest.hexdigest()[:32]


@dataclass
class ResolvedLayer:
    """A library layer's resolution: the RESOLVED_TABLES' rows, and the RESOLVED_LATER columns
    (with the id of their row) of the other tables."""

    tables: dict[str, pa.Table]
    later: dict[str, pa.Table]


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
            con.execute("CREATE TABLE IF NOT EXISTS layers (key VARCHAR PRIMARY KEY, used_at TIMESTAMP)")
            for name, columns in _resolved_columns().items():
                declared = ", ".join(f'"{c.name}" {c.sql_type()}' for c in columns)
                con.execute(f'CREATE TABLE IF NOT EXISTS "resolved_{name}" ({_LAYER_KEY} VARCHAR, {declared}, {_SEQ} BIGINT)')
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

    def resolved(self, key: str) -> ResolvedLayer | None:
        """The resolved rows of the layer `key` (layer_key), if a build kept them."""
        try:
            if self.con.execute("SELECT count(*) FROM layers WHERE key = ?", [key]).fetchone()[0] == 0:
                return None
            out = {}
            for name, columns in _resolved_columns().items():
                schema = pa.schema([(c.name, arrow_schema(BY_NAME[name]).field(c.name).type) for c in columns])
                names = ", ".join(f'"{n}"' for n in schema.names)
                out[name] = self.con.execute(f'SELECT {names} FROM "resolved_{name}" WHERE {_LAYER_KEY} = ? '
                                             f"ORDER BY {_SEQ}", [key]).to_arrow_table().cast(schema)
            self.con.execute("UPDATE layers SET used_at = now() WHERE key = ?", [key])
        except duckdb.Error:  # a damaged cache: resolve as without one
            return None
        return ResolvedLayer({n: out[n] for n in RESOLVED_TABLES}, {n: out[n] for n in RESOLVED_LATER})

    def keep_resolved(self, key: str, layer: ResolvedLayer) -> None:
        """Hold a layer's resolution; past MAX_LAYERS, drop the least recently used."""
        try:
            self.con.execute("BEGIN")
            stale = [key, *(k for (k,) in self.con.execute(
                "SELECT key FROM layers WHERE key <> ? ORDER BY used_at DESC OFFSET ?", [key, MAX_LAYERS - 1]).fetchall())]
            for name in _resolved_columns():
                self.con.execute(f'DELETE FROM "resolved_{name}" WHERE {_LAYER_KEY} IN (SELECT unnest(?))', [stale])
            self.con.execute("DELETE FROM layers WHERE key IN (SELECT unnest(?))", [stale])
            for name, table in {**layer.tables, **layer.later}.items():
                table = table.select([c.name for c in _resolved_columns()[name]])
                insert_arrow(self.con, f"resolved_{name}", table.append_column(
                    _LAYER_KEY, pa.array([key] * table.num_rows, pa.string())).append_column(
                    _SEQ, pa.array(range(table.num_rows), pa.int64())))
            self.con.execute("INSERT INTO layers VALUES (?, now())", [key])
            self.con.execute("COMMIT")
        except duckdb.Error:  # a full disk: the cache is not needed
            try:
                self.con.execute("ROLLBACK")
            except duckdb.Error:
                pass

    def close(self) -> None:
        self.con.close()


def keep_layer(identity: str, key: str, made: dict[str, list[pa.Table]], con: duckdb.DuckDBPyConnection,
               schema_name: str) -> None:
    """Keep the resolution a build made of its library layer `key`: the tables resolution
    emitted (made), and the RESOLVED_LATER columns as the build's database `con` holds them in
    `schema_name`."""
    cache = LibraryCache.open(identity)
    if cache is None:
        return
    try:
        tables = {}
        for name in RESOLVED_TABLES:
            schema = arrow_schema(BY_NAME[name])
            parts = [t.select(schema.names).cast(schema) for t in made.get(name, ()) if t.num_rows]
            tables[name] = pa.concat_tables(parts) if parts else schema.empty_table()
        later = {name: con.execute(f'SELECT id, {", ".join(columns)} FROM {schema_name}."{name}"').to_arrow_table()
                 for name, columns in RESOLVED_LATER.items()}
        cache.keep_resolved(key, ResolvedLayer(tables, later))
    finally:
        cache.close()


def _resolved_columns() -> dict:
    """The columns a resolved layer keeps of each table: every column of RESOLVED_TABLES, the id
    and the RESOLVED_LATER columns of the others."""
    out = {name: list(BY_NAME[name].columns) for name in RESOLVED_TABLES}
    for name, later in RESOLVED_LATER.items():
        out[name] = [c for c in BY_NAME[name].columns if c.name == "id" or c.name in later]
    return out


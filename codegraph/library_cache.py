"""The library layer's extracted rows, kept per environment in the user's cache folder: a project's
full build parses only the library files it has not seen at their size and modification time (a
package upgraded or edited is parsed again). One DuckDB file per environment (Library.identity)
and per version of the code that makes the rows (schema.SCHEMA_VERSION), so rows of another
extractor are never read. A build that cannot open it (another build holds it, a read-only
home) parses everything, as without a cache; nothing in it is required.

    $CODEGRAPH_CACHE          the folder (default: $XDG_CACHE_HOME/codegraph, else ~/.cache/codegraph)
    CODEGRAPH_CACHE=off       no cache
"""

from __future__ import annotations

import collections
import hashlib
import os
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from .columns import arrow_schema, insert_arrow, insert_rows
from .schema import BY_NAME, EXTRACTED, SCHEMA_VERSION
from .sources import SourceFile

_SEQ = "_seq"  # a row's place in its file's extraction: rows come back in the order they were made


def cache_folder() -> Path | None:
    """Where the caches live, or None when CODEGRAPH_CACHE=off."""
    setting = os.environ.get("CODEGRAPH_CACHE")
    if setting == "off":
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "codegraph"


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

    def known(self, files: list[SourceFile], layer: str) -> tuple[list[tuple], dict[str, pa.Table], list[SourceFile]]:
        """(file rows, tables) of the files held at their size and modification time, and the
        files to parse."""
        wanted = pa.table({"path": [f.path for f in files], "module": [f.module for f in files],
                           "size": pa.array([f.size for f in files], pa.int64()),
                           "mtime_ns": pa.array([f.mtime_ns for f in files], pa.int64())})
        self.con.register("_wanted", wanted)
        try:
            columns = BY_NAME["files"].names()
            held = self.con.execute(
                f"""SELECT {', '.join(f'f."{c}"' for c in columns)} FROM files f JOIN _wanted w
                    ON f.path = w.path AND f.module = w.module AND f.size = w.size AND f.mtime_ns = w.mtime_ns
                    WHERE f.layer = $layer ORDER BY f.path""", {"layer": layer}).fetchall()
        finally:
            self.con.unregister("_wanted")
        row = BY_NAME["files"].row
        file_rows = [row(*values) for values in held]
        ids = pa.table({"file_id": pa.array([r.file_id for r in file_rows], pa.int64())})
        tables = {}
        self.con.register("_ids", ids)
        try:
            for name in EXTRACTED:
                schema = arrow_schema(BY_NAME[name], "extract")
                tables[name] = self.con.execute(
                    f'SELECT {", ".join(f"t.{c}" for c in schema.names)} FROM "{name}" t JOIN _ids USING (file_id) '
                    f"ORDER BY t.file_id, t.{_SEQ}").to_arrow_table().cast(schema)
        finally:
            self.con.unregister("_ids")
        found = {r.path for r in file_rows}
        return file_rows, tables, [f for f in files if f.path not in found]

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


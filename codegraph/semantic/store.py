"""Vectors in the graph database, an int8 cache beside it, and search over both.

The `embeddings` table (id, file_id, vector FLOAT[N]) is the truth; the model id, N and the
IDF weights are in `meta`. `codegraph index` keeps `graph.duckdb.vectors` (VectorCache) in step
with it; search only reads, and falls back to exact search over the table when the cache is
missing, damaged or from another state.
"""

from __future__ import annotations


import hashlib
import json
import mmap
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from ..columns import insert_arrow
from ..db import get_meta, set_meta
from ..schema import BY_NAME
from .models import EmbeddingError, EmbeddingModel, HashingModel, get_model

DEFAULT_DIM = 512


def write_vectors(con: duckdb.DuckDBPyConnection, ids: np.ndarray, file_ids: np.ndarray, matrix: np.ndarray) -> None:
    dim = matrix.shape[1]
    con.execute(BY_NAME["embeddings"].ddl(dim, if_not_exists=True))
    if not len(ids):
        return
    flat = pa.array(matrix.reshape(-1), pa.float32())
    insert_arrow(con, "embeddings", pa.table({
        "id": pa.array(ids, pa.int64()), "file_id": pa.array(file_ids, pa.int64()),
        "vector": pa.FixedSizeListArray.from_arrays(flat, dim)}))


def model_from_meta(meta: dict[str, str]) -> EmbeddingModel:
    """The model the database's vectors were made with (and its IDF), or a clear error."""
    model_id = meta.get("embedding_model")
    if not model_id:
        raise EmbeddingError("this database has no embeddings: run `codegraph index` without --no-embed")
    if model_id.startswith("hash-v1-"):
        return HashingModel(int(meta["embedding_dim"]), json.loads(meta["embedding_idf"]))
    if model_id.startswith("openai:"):
        return get_model("openai", model=model_id.split(":", 1)[1], dim=int(meta["embedding_dim"]))
    if "@" in model_id:
        max_tokens = model_id.rpartition("-")[2]
        here = get_model("minilm", **({"max_tokens": int(max_tokens)} if max_tokens.isdigit() else {}))
        if here.id != model_id:
            raise EmbeddingError(f"the database's vectors come from {model_id!r}, but the learned model here is "
                                 f"{here.id!r}: install the one it was built with, or re-index with --full")
        return here
    raise EmbeddingError(f"the database was embedded with {model_id!r}, which this codegraph does not know")


def check_model(meta: dict[str, str], model: EmbeddingModel) -> None:
    stored = meta.get("embedding_model")
    if stored and stored != model.id:
        raise EmbeddingError(f"the database's vectors come from {stored!r}, not {model.id!r}: vectors of two "
                             f"models never mix; search with {stored!r} or re-index with the other model")


def register_embed(con: duckdb.DuckDBPyConnection, model: EmbeddingModel, dim: int) -> None:
    """embed('text') -> FLOAT[N] inside SQL, so one statement can join graph and vectors."""
    def embed(text: str) -> list[float]:
        return model.embed([text or ""])[0].tolist()

    con.create_function("embed", embed, ["VARCHAR"], f"FLOAT[{dim}]", side_effects=False)


@dataclass
class Hit:
    id: int
    score: float


_MAGIC = b"CGVEC001"
_RERANK = 64


def vectors_path(db_path: str | Path) -> Path:
    return Path(str(db_path) + ".vectors")


class VectorCache:
    """Every vector quantised to int8 (a scale per row) in one file beside the database: exact
    search over it is a few tens of milliseconds for 100k definitions, the top candidates are then
    re-ranked with the float vectors of the table, and it installs with numpy alone (no compiler,
    no approximate index to build). The table stays the truth: the file names the database
    state it was made from (`vectors_token` in meta) and is ignored unless it matches exactly.

    Layout: magic, header length (4 bytes, little endian), a JSON header (model, dim, count,
    token, payload sha256), then ids int64[n], file_ids int64[n], scales float32[n], int8[n x dim].
    """

    def __init__(self, ids: np.ndarray, file_ids: np.ndarray, scales: np.ndarray, codes: np.ndarray,
                 header: dict) -> None:
        self.ids, self.file_ids, self.scales, self.codes, self.header = ids, file_ids, scales, codes, header

    @classmethod
    def quantise(cls, ids: np.ndarray, file_ids: np.ndarray, matrix: np.ndarray, model_id: str) -> "VectorCache":
        dim = matrix.shape[1] if matrix.ndim == 2 and matrix.shape[1] else 0
        peak = np.abs(matrix).max(axis=1) if len(matrix) else np.zeros(0, np.float32)
        peak[peak == 0] = 1.0
        codes = np.round(matrix / peak[:, None] * 127).astype(np.int8) if len(matrix) else \
            np.zeros((0, dim), np.int8)
        return cls(ids.astype(np.int64), file_ids.astype(np.int64), (peak / 127).astype(np.float32), codes,
                   {"model": model_id, "dim": dim, "count": int(len(ids))})

    def without_files(self, file_ids: Sequence[int]) -> "VectorCache":
        keep = ~np.isin(self.file_ids, np.asarray(list(file_ids), np.int64))
        return VectorCache(self.ids[keep], self.file_ids[keep], self.scales[keep], self.codes[keep],
                           {**self.header, "count": int(keep.sum())})

    def plus(self, *others: "VectorCache") -> "VectorCache":
        parts = [self, *(other for other in others if len(other.ids))]
        if len(parts) == 1:
            return self
        return VectorCache(*(np.concatenate([getattr(part, name) for part in parts])
                             for name in ("ids", "file_ids", "scales", "codes")),
                           {**self.header, "count": int(sum(len(part.ids) for part in parts))})

    def _payload(self) -> list[bytes]:
        return [self.ids.tobytes(), self.file_ids.tobytes(), self.scales.tobytes(),
                np.ascontiguousarray(self.codes).tobytes()]

    def write(self, path: Path, token: str) -> None:
        """Atomically: a reader sees the old file or the new one, never half of one."""

        payload = self._payload()
        digest = hashlib.sha256()
        for part in payload:
            digest.update(part)
        header = json.dumps({**self.header, "token": token, "sha256": digest.hexdigest()}).encode()
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        try:
            with open(tmp, "wb") as fh:
                fh.write(_MAGIC + len(header).to_bytes(4, "little") + header)
                for part in payload:
                    fh.write(part)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)

    @classmethod
    def read(cls, path: Path, *, token: str | None = None, verify: bool = False) -> "VectorCache | None":
        """The cache at `path` when it is whole and (with `token`) made from that database state;
        None otherwise. `verify` also checks the payload's checksum (what `index` does)."""

        try:
            data = _map(path)
        except (OSError, ValueError):
            return None
        try:
            if data[:8] != _MAGIC:
                return None
            size = int.from_bytes(data[8:12], "little")
            header = json.loads(data[12:12 + size])
            n, dim = int(header["count"]), int(header["dim"])
            start = 12 + size
            if len(data) != start + n * (8 + 8 + 4 + dim):
                return None
            if token is not None and header.get("token") != token:
                return None
            if verify and hashlib.sha256(memoryview(data)[start:]).hexdigest() != header.get("sha256"):
                return None
            ids = np.frombuffer(data, np.int64, n, start)
            file_ids = np.frombuffer(data, np.int64, n, start + 8 * n)
            scales = np.frombuffer(data, np.float32, n, start + 16 * n)
            codes = np.frombuffer(data, np.int8, n * dim, start + 20 * n).reshape(n, dim)
        except (ValueError, KeyError, TypeError, json.JSONDecodeError):
            return None
        return cls(ids, file_ids, scales, codes, header)

    def candidates(self, vector: np.ndarray, k: int, chunk: int = 16384) -> np.ndarray:
        """Indices of the k best rows by the quantised inner product."""
        n = len(self.ids)
        if n == 0:
            return np.zeros(0, np.int64)
        query = vector.astype(np.float32)
        scores = np.empty(n, np.float32)
        for start in range(0, n, chunk):
            block = self.codes[start : start + chunk].astype(np.float32)
            scores[start : start + chunk] = (block @ query) * self.scales[start : start + chunk]
        k = min(k, n)
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top])]


def _map(path: Path):
    """The file's bytes without copying them (a memory map), or read whole where mapping would
    stop the indexer from replacing the file (Windows)."""
    if os.name == "nt":
        return path.read_bytes()

    with open(path, "rb") as fh:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def build_vector_cache(con: duckdb.DuckDBPyConnection, db_path: str | Path, *, previous_token: str | None = None,
                       changed_files: Sequence[int] | None = None) -> dict:
    """Write the cache for the database's current vectors and record its token in meta. With
    `changed_files` (an update), the previous cache is reused for the files that did not change,
    when it is intact and was made from the previous state."""

    meta = get_meta(con)
    model_id, dim = meta.get("embedding_model"), int(meta.get("embedding_dim") or 0)
    path = vectors_path(db_path)
    started = time.perf_counter()
    old = VectorCache.read(path, token=previous_token, verify=True) if changed_files is not None else None
    if old is not None and old.header.get("model") == model_id and old.header.get("dim") == dim:
        changed = list(changed_files)
        fresh = _quantised(con, model_id, dim, "WHERE list_contains($f::BIGINT[], file_id)", {"f": changed})
        cache = old.without_files(changed).plus(fresh)
        action = "updated"
    else:
        cache = _quantised(con, model_id, dim)
        action = "rebuilt"
    token = uuid.uuid4().hex
    cache.write(path, token)
    set_meta(con, vectors_token=token)
    return {action: int(len(cache.ids)), "seconds": round(time.perf_counter() - started, 3)}


def _quantised(con: duckdb.DuckDBPyConnection, model_id: str, dim: int, where: str = "",
               params: dict | None = None, batch: int = 8192) -> VectorCache:
    """The int8 cache of the stored vectors, read a batch at a time: the float matrix of a large
    repository, several hundred MB, never exists whole (quantising is row by row)."""
    reader = con.execute(f"SELECT id, file_id, vector FROM embeddings {where} ORDER BY id",
                         params or {}).to_arrow_reader(batch)
    parts = [VectorCache.quantise(rows.column(0).to_numpy(), rows.column(1).to_numpy(),
                                  _matrix(rows.column(2), rows.num_rows), model_id) for rows in reader if rows.num_rows]
    if not parts:
        return VectorCache.quantise(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, dim), np.float32),
                                    model_id)
    return parts[0].plus(*parts[1:])


def load_vectors(con: duckdb.DuckDBPyConnection, where: str = "", params: dict | None = None,
                 with_files: bool = False):
    """(ids, matrix) straight from Arrow buffers: no Python object per number. With
    `with_files`, ids is the pair (ids, file_ids)."""
    columns = "id, file_id, vector" if with_files else "id, vector"
    table = con.execute(f"SELECT {columns} FROM embeddings {where} ORDER BY id", params or {}).to_arrow_table()
    ids = table.column("id").to_numpy()
    keys = (ids, table.column("file_id").to_numpy()) if with_files else ids
    if not len(ids):
        dim = 0
        return keys, np.zeros((0, dim), np.float32)
    return keys, _matrix(table.column("vector").combine_chunks(), len(ids))


def _matrix(vectors: pa.Array, rows: int) -> np.ndarray:
    """A column of fixed-size float lists as a rows x dim float32 matrix, without a Python object per number."""
    return vectors.flatten().to_numpy(zero_copy_only=False).reshape(rows, -1).astype(np.float32, copy=False)


def exact_search(con: duckdb.DuckDBPyConnection, vector: np.ndarray, k: int) -> list[Hit]:
    """The reference: cosine over every stored vector (they are normalised, so a dot product)."""
    ids, matrix = load_vectors(con)
    if not len(ids):
        return []
    scores = matrix @ vector.astype(np.float32)
    top = np.argsort(-scores)[:k]
    return [Hit(int(ids[i]), float(scores[i])) for i in top]


def cached_search(con: duckdb.DuckDBPyConnection, cache: VectorCache, vector: np.ndarray, k: int,
                  also: Sequence[int] = ()) -> list[Hit]:
    """Candidates from the int8 cache, re-ranked by the exact vectors of the table. The ids in
    `also` (another ranking's candidates) are scored in the same read and returned after the
    top k, so a hybrid search reads the table once."""
    rows = cache.candidates(vector, max(k, _RERANK))
    wanted = sorted({*cache.ids[rows].tolist(), *also}) if len(rows) else sorted(set(also))
    if not wanted:
        return []
    ids, matrix = load_vectors(con, "WHERE list_contains($ids::BIGINT[], id)",  # 4x faster than IN (unnest)
                               {"ids": wanted})
    if not len(ids):
        return []
    scores = matrix @ vector.astype(np.float32)
    ranked = set(cache.ids[rows].tolist())
    order = [i for i in np.argsort(-scores) if int(ids[i]) in ranked][:k]
    extra = set(also) - {int(ids[i]) for i in order}
    return [Hit(int(ids[i]), float(scores[i])) for i in order] + \
        [Hit(int(i), float(s)) for i, s in zip(ids, scores) if int(i) in extra]

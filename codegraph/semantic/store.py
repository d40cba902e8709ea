"""Vectors in the graph database, an hnswlib index beside it, and search over both.

The `embeddings` table (id, file_id, vector FLOAT[N]) is the truth; the model id, N and the
IDF weights are in `meta`. The HNSW index (`graph.duckdb.hnsw` + `.hnsw.json`) is a cache: it is
rebuilt when missing, updated in place (adds, replacements, deletions) when the graph changed,
and exact search (numpy over the table) is the fallback and the reference.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import duckdb
import numpy as np
import pyarrow as pa

from ..db import get_meta, insert_arrow
from .models import EmbeddingError, EmbeddingModel, HashingModel, get_model

EMBEDDINGS_DDL = "CREATE TABLE IF NOT EXISTS embeddings (id BIGINT NOT NULL, file_id BIGINT NOT NULL, vector FLOAT[{dim}])"
DEFAULT_DIM = 512


def merge_sparse(parts: Sequence[tuple]) -> tuple:
    """Concatenate (ids, file_ids, indptr, indices, values) blocks from several workers."""
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64),
                np.zeros(0, np.int32), np.zeros(0, np.float32))
    ids = np.concatenate([p[0] for p in parts])
    file_ids = np.concatenate([p[1] for p in parts])
    indptr, offset = [np.zeros(1, np.int64)], 0
    for p in parts:
        indptr.append(p[2][1:] + offset)
        offset += p[2][-1]
    return (ids, file_ids, np.concatenate(indptr), np.concatenate([p[3] for p in parts]),
            np.concatenate([p[4] for p in parts]))


def write_vectors(con: duckdb.DuckDBPyConnection, ids: np.ndarray, file_ids: np.ndarray, matrix: np.ndarray) -> None:
    dim = matrix.shape[1]
    con.execute(EMBEDDINGS_DDL.format(dim=dim))
    if not len(ids):
        return
    flat = pa.array(matrix.reshape(-1), pa.float32())
    insert_arrow(con, "embeddings", pa.table({
        "id": pa.array(ids, pa.int64()), "file_id": pa.array(file_ids, pa.int64()),
        "vector": pa.FixedSizeListArray.from_arrays(flat, dim)}))


def model_meta(model: HashingModel) -> dict[str, str]:
    return {"embedding_model": model.id, "embedding_dim": str(model.dim),
            "embedding_idf": json.dumps([round(float(x), 5) for x in model.idf])}


def model_from_meta(meta: dict[str, str]) -> EmbeddingModel:
    """The model the database's vectors were made with (and its IDF), or a clear error."""
    model_id = meta.get("embedding_model")
    if not model_id:
        raise EmbeddingError("this database has no embeddings: run `codegraph index` without --no-embed")
    if model_id.startswith("hash-v1-"):
        return HashingModel(int(meta["embedding_dim"]), json.loads(meta["embedding_idf"]))
    if model_id.startswith("openai:"):
        return get_model("openai", model=model_id.split(":", 1)[1], dim=int(meta["embedding_dim"]))
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


class VectorIndex:
    """hnswlib over the embeddings table, keyed by symbol id; a rebuildable cache."""

    def __init__(self, db_path: str | Path, space_dim: int, model_id: str, m: int = 16, ef_construction: int = 200):
        self.path = Path(str(db_path) + ".hnsw")
        self.meta_path = Path(str(db_path) + ".hnsw.json")
        self.dim, self.model_id = space_dim, model_id
        self.m, self.ef_construction = m, ef_construction
        self.index = None
        self.stamp: dict = {}

    def _load(self):
        import hnswlib

        if not (self.path.exists() and self.meta_path.exists()):
            return None
        stamp = json.loads(self.meta_path.read_text())
        if stamp.get("model") != self.model_id or stamp.get("dim") != self.dim:
            return None
        index = hnswlib.Index(space="ip", dim=self.dim)
        index.load_index(str(self.path), max_elements=stamp["capacity"], allow_replace_deleted=True)
        self.stamp = stamp
        return index

    def sync(self, con: duckdb.DuckDBPyConnection) -> dict:
        """Bring the index in line with the table; returns what was done."""
        import hnswlib

        files = dict(con.execute("SELECT file_id::VARCHAR, sha256 FROM files").fetchall())
        index = self._load()
        started = time.perf_counter()
        if index is None:
            ids, matrix = load_vectors(con)
            capacity = max(1024, int(len(ids) * 1.25))
            index = hnswlib.Index(space="ip", dim=self.dim)
            index.init_index(max_elements=capacity, ef_construction=self.ef_construction, M=self.m,
                             allow_replace_deleted=True)
            if len(ids):
                index.add_items(matrix, ids)
            action = {"rebuilt": len(ids)}
        else:
            old_files = self.stamp.get("files", {})
            changed = [f for f, sha in files.items() if old_files.get(f) != sha]
            gone = [f for f in old_files if f not in files]
            live = set(index.get_ids_list())
            new_ids, new_matrix = load_vectors(
                con, "WHERE file_id::VARCHAR IN (SELECT unnest($f::VARCHAR[]))", {"f": changed})
            keep_ids = set(new_ids.tolist())
            removed = 0
            for f in changed + gone:
                for label in self.stamp.get("ids_by_file", {}).get(f, []):
                    if label in live and label not in keep_ids:
                        index.mark_deleted(label)
                        removed += 1
            if len(new_ids):
                need = index.get_current_count() + len(new_ids)
                if need > index.get_max_elements():
                    index.resize_index(int(need * 1.25))
                index.add_items(new_matrix, new_ids, replace_deleted=True)
            action = {"updated": len(new_ids), "deleted": removed}
        ids_by_file: dict[str, list[int]] = {}
        for label, file_id in con.execute("SELECT id, file_id::VARCHAR FROM embeddings").fetchall():
            ids_by_file.setdefault(file_id, []).append(label)
        index.save_index(str(self.path))
        self.stamp = {"model": self.model_id, "dim": self.dim, "capacity": index.get_max_elements(),
                      "files": files, "ids_by_file": ids_by_file}
        self.meta_path.write_text(json.dumps(self.stamp))
        self.index = index
        action["seconds"] = round(time.perf_counter() - started, 3)
        return action

    def is_current(self, con: duckdb.DuckDBPyConnection) -> bool:
        if not self.meta_path.exists():
            return False
        stamp = json.loads(self.meta_path.read_text())
        files = dict(con.execute("SELECT file_id::VARCHAR, sha256 FROM files").fetchall())
        return stamp.get("model") == self.model_id and stamp.get("dim") == self.dim and stamp.get("files") == files

    def query(self, vector: np.ndarray, k: int, ef: int = 512) -> list[Hit]:
        k = min(k, self.index.get_current_count())
        if k <= 0:
            return []
        self.index.set_ef(max(ef, k))
        while True:
            try:
                labels, distances = self.index.knn_query(vector.reshape(1, -1).astype(np.float32), k=k)
                break
            except RuntimeError:  # fewer live elements than k after deletions
                k -= 1
                if k <= 0:
                    return []
        return [Hit(int(label), float(1.0 - d)) for label, d in zip(labels[0], distances[0])]


def load_vectors(con: duckdb.DuckDBPyConnection, where: str = "", params: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(ids, matrix) straight from Arrow buffers: no Python object per number."""
    table = con.execute(f"SELECT id, vector FROM embeddings {where}", params or {}).to_arrow_table()
    ids = table.column("id").to_numpy()
    if not len(ids):
        return ids, np.zeros((0, 0), np.float32)
    vectors = table.column("vector").combine_chunks()
    matrix = vectors.flatten().to_numpy(zero_copy_only=False).reshape(len(ids), -1).astype(np.float32, copy=False)
    return ids, matrix


def exact_search(con: duckdb.DuckDBPyConnection, vector: np.ndarray, k: int) -> list[Hit]:
    """The reference: cosine over every stored vector (they are normalised, so a dot product)."""
    ids, matrix = load_vectors(con)
    if not len(ids):
        return []
    scores = matrix @ vector.astype(np.float32)
    top = np.argsort(-scores)[:k]
    return [Hit(int(ids[i]), float(scores[i])) for i in top]


def search(con: duckdb.DuckDBPyConnection, db_path: str | Path, query: str, k: int = 10, *,
           exact: bool = False, model: EmbeddingModel | None = None) -> list[dict]:
    meta = get_meta(con)
    stored = model_from_meta(meta)
    if model is not None:
        check_model(meta, model)
    model = model or stored
    vector = model.embed([query])[0]
    if exact:
        hits = exact_search(con, vector, k)
    else:
        index = VectorIndex(db_path, int(meta["embedding_dim"]), meta["embedding_model"])
        if not index.is_current(con):
            index.sync(con)
        else:
            index.index = index._load()
        hits = index.query(vector, k)
    if not hits:
        return []
    scores = {h.id: h.score for h in hits}
    rows = con.execute("""SELECT id, kind, qualname, signature, path, start_line, docstring FROM symbols
                          WHERE id IN (SELECT unnest($ids::BIGINT[]))""", {"ids": list(scores)}).fetchall()
    out = [{"qualname": r[2], "kind": r[1], "signature": r[3], "path": r[4], "start_line": r[5],
            "docstring": (r[6] or "").strip().split("\n")[0] or None, "score": round(scores[r[0]], 4), "id": r[0]}
           for r in rows]
    return sorted(out, key=lambda r: -r["score"])

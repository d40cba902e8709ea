"""Search for definitions by what they do: BM25 over the `terms` table and the embedding, blended,
with priors a person expects (public code before private helpers and tests, callables before
attributes) unless the question asks for them.

BM25 finds the words a person uses when a docstring uses them too ("parse a URL into its
components" -> urlparse); the hashing embedding adds sub-word and identifier matches; either
alone misses what the other finds (docs/benchmarks.md, the search benchmark).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from ..db import get_meta
from ..errors import CodegraphError
from . import MODES
from .models import EmbeddingError, EmbeddingModel
from .store import VectorCache, cached_search, check_model, exact_search, load_vectors, model_from_meta, vectors_path
from .texts import tokens

_POOL = 100  # candidates taken from each side before blending
_BM25_SQL = """
WITH hits AS (
    SELECT id, term, weight, length FROM terms WHERE list_contains($terms::VARCHAR[], term)
), df AS (
    SELECT term, count(*) AS df FROM hits GROUP BY term
)
SELECT h.id, sum(ln(1 + ($n - df.df + 0.5) / (df.df + 0.5))
                 * h.weight * 2.2 / (h.weight + 1.2 * (0.25 + 0.75 * h.length / $avglen))) AS score
FROM hits h JOIN df USING (term)
GROUP BY h.id ORDER BY score DESC LIMIT $limit
"""
_TEST_PART = re.compile(r"(^|[./])(tests?|testing|test_\w*|\w*_tests?|Test\w*)($|[./])")


@dataclass
class Weights:
    bm25: float = 0.7  # 0.6-0.8 all do about as well on the question set (docs/benchmarks.md)
    vector: float = 0.3
    test: float = 0.4  # test code, unless the question mentions tests
    private: float = 0.75  # a _private name, unless the question asks for internals
    private_module: float = 0.85
    attribute: float = 0.75  # variables and attributes: a person asking "how to" wants callables and classes
    module: float = 0.9


def bm25(con: duckdb.DuckDBPyConnection, terms: list[str], limit: int = _POOL) -> dict[int, float]:
    if not terms:
        return {}
    meta = get_meta(con)
    n, avglen = int(meta.get("bm25_documents") or 0), float(meta.get("bm25_average_length") or 0)
    if not n or not avglen:
        return {}
    rows = con.execute(_BM25_SQL, {"terms": sorted(set(terms)), "n": n, "avglen": avglen, "limit": limit}).fetchall()
    return {int(i): float(s) for i, s in rows}


def _vector_scores(con, db_path, model: EmbeddingModel, query: str, exact: bool, meta: dict,
                   extra_ids: list[int]) -> dict[int, float]:
    """The embedding's best candidates, and the similarity of every id in `extra_ids` (the BM25
    candidates), so every candidate has both parts."""
    vector = model.embed([query])[0]
    cache = None if exact else VectorCache.read(vectors_path(db_path), token=meta.get("vectors_token") or "-")
    if cache is not None:
        return {h.id: h.score for h in cached_search(con, cache, vector, _POOL, also=extra_ids)}
    scores = {h.id: h.score for h in exact_search(con, vector, _POOL)}
    missing = [i for i in extra_ids if i not in scores]
    if missing:
        ids, matrix = load_vectors(con, "WHERE list_contains($ids::BIGINT[], id)", {"ids": missing})
        if len(ids):
            scores.update(zip(ids.tolist(), (matrix @ vector.astype(np.float32)).tolist()))
    return scores


def _prior(row: tuple, asked: set[str], weights: Weights) -> float:
    qualname, kind, module, path = row[1], row[2], row[3], row[4] or ""
    factor = 1.0
    if "test" not in asked and (_TEST_PART.search(path.replace("\\", "/")) or _TEST_PART.search(qualname)):
        factor *= weights.test
    if not asked & {"private", "internal", "helper"}:
        local = qualname[len(module) + 1:] if qualname.startswith(module + ".") else qualname.rpartition(".")[2]
        if any(p.startswith("_") and not p.startswith("__") for p in local.split(".") if p != "<locals>"):
            factor *= weights.private
        if any(p.startswith("_") and not p.startswith("__") for p in module.split(".")):
            factor *= weights.private_module
    if kind in ("variable", "class_attribute", "instance_attribute"):
        factor *= weights.attribute
    elif kind == "module":
        factor *= weights.module
    return factor


def vectors_unavailable(meta: dict[str, str]) -> str | None:
    """Why the database's vectors cannot be searched here (the model they come from is missing), or None."""
    if not meta.get("embedding_model"):
        return None
    try:
        model_from_meta(meta)
    except EmbeddingError as exc:
        return f"{exc}; searching by words alone"
    return None


def search(con: duckdb.DuckDBPyConnection, db_path: str | Path, query: str, k: int = 10, *,
           mode: str = "hybrid", exact: bool = False, model: EmbeddingModel | None = None,
           weights: Weights | None = None, priors: bool = True, exclude: set[int] | frozenset = frozenset()) -> list[dict]:
    """The k definitions that best answer `query`, best first, each with its score and why.
    Reads only (the int8 cache when current, else the table)."""
    if mode not in MODES:
        raise CodegraphError(f"unknown search mode {mode!r}: choose {', '.join(MODES)}")
    terms = tokens(query)
    if not terms and not re.search(r"\w", query):
        raise CodegraphError("the question has no words to search for: ask in words, e.g. \"parse a url\"")
    weights = weights or Weights()
    meta = get_meta(con)
    lexical = bm25(con, terms) if mode in ("hybrid", "bm25") else {}
    vector: dict[int, float] = {}
    if mode in ("hybrid", "vector") and meta.get("embedding_model"):
        if model is not None:
            check_model(meta, model)
        else:
            try:
                model = model_from_meta(meta)
            except EmbeddingError:  # the learned model the vectors come from is not installed here
                if mode == "vector":
                    raise
        if model is not None:  # else words alone (vectors_unavailable says why)
            vector = _vector_scores(con, db_path, model, query, exact, meta, list(lexical))
    elif mode == "vector":
        model_from_meta(meta)  # raises the clear "no embeddings" error
    top_lexical = max(lexical.values(), default=0.0) or 1.0
    top_vector = max(vector.values(), default=0.0) or 1.0
    ids = [i for i in {*lexical, *vector} if i not in exclude]
    if not ids:
        return []
    rows = con.execute("""SELECT id, qualname, kind, module, path, signature, start_line, docstring, name FROM symbols
                          WHERE list_contains($ids::BIGINT[], id)""", {"ids": ids}).fetchall()
    asked = set(terms) | {w.lower() for w in re.findall(r"[A-Za-z]+", query)}
    out = []
    for row in rows:
        i = row[0]
        b, v = lexical.get(i, 0.0) / top_lexical, max(vector.get(i, 0.0), 0.0) / top_vector
        blend = {"hybrid": weights.bm25 * b + weights.vector * v, "bm25": b, "vector": v}[mode]
        prior = _prior(row, asked, weights) if priors else 1.0
        why = [part for part, value in (("words", b), ("meaning", v)) if value >= 0.5]
        out.append({"qualname": row[1], "name": row[8], "kind": row[2], "signature": row[5], "path": row[4], "start_line": row[6],
                    "docstring": (row[7] or "").strip().split("\n")[0] or None, "score": round(blend * prior, 4),
                    "id": i, "why": ", ".join(why) or "partial match"})
    out.sort(key=lambda r: (-r["score"], r["qualname"]))
    return out[:k]

"""Semantic retrieval benchmark: find a function from the first line of its docstring.

    python -m benchmarks.semantic_bench [--out benchmarks/results/semantic.json]

Corpora: the running Python's standard library (tests excluded) and the click sdist. Every
function and method is embedded *without* its docstring; each one whose docstring's first line
has at least four words is a query; the answer is the function itself. Reported per model (the
hashing model, and the learned one where installed): MRR@10 and recall@10 alone and blended with
BM25 as search blends them, embedding throughput; plus a plain BM25 baseline over the same texts,
the int8 vector cache's recall@10 against exact search and its latency, at the corpus size and at
100k vectors; and the time to index click with each model, side by side.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import duckdb
import numpy as np

from benchmarks.retrieval_bench import SDIST_SKIP, STDLIB_SKIP, prepare
from codegraph.indexer import index_repository
from codegraph.semantic.models import EmbeddingError, HashingModel, get_model
from codegraph.semantic.search import Weights
from codegraph.semantic.store import VectorCache
from codegraph.semantic.texts import _strip_docstring, tokens as codegraph_tokens

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def corpus(db_path: Path, skip: re.Pattern) -> tuple[list[str], list[str], list[str], list[tuple]]:
    con = duckdb.connect(str(db_path), read_only=True)
    rows = con.execute("""
        SELECT qualname, name, signature, docstring, source, path FROM members WHERE kind IN ('method', 'classmethod', 'staticmethod', 'property')
        UNION ALL SELECT qualname, name, signature, docstring, source, path FROM globals WHERE kind = 'function'
        ORDER BY 1""").fetchall()
    con.close()
    names, texts, queries, fields = [], [], [], []
    for qualname, name, signature, docstring, source, path in rows:
        if skip.search(path):
            continue
        body = _strip_docstring(source or "", docstring) if docstring else (source or "")
        names.append(qualname)
        texts.append(f"{qualname} {signature or ''}\n{body}")
        fields.append((name, qualname, signature or "", body))
        first = (docstring or "").strip().split("\n")[0].strip()
        queries.append(first if len(first.split()) >= 4 else "")
    return names, texts, queries, fields


def tokens(text: str) -> list[str]:
    out = []
    for word in _WORD.findall(text):
        out.append(word.lower())
        out += [p.lower() for chunk in word.split("_") for p in _PART.findall(chunk) if len(p) > 1]
    return out


class BM25:
    """Plain BM25 over texts, or BM25F-like over fields (tuples of texts) with `weights`."""

    def __init__(self, texts: list, k1: float = 1.2, b: float = 0.75, tokenize=tokens, weights=None) -> None:
        self.k1, self.b, self.tokenize = k1, b, tokenize
        self.postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
        self.lengths = np.zeros(len(texts), np.float32)
        for i, text in enumerate(texts):
            counts: Counter = Counter()
            for part, weight in (zip(text, weights) if weights else [(text, 1.0)]):
                for term in tokenize(part):
                    counts[term] += weight
            self.lengths[i] = sum(counts.values())
            for term, tf in counts.items():
                self.postings[term].append((i, tf))
        self.avg = float(self.lengths.mean()) if len(texts) else 1.0
        self.n = len(texts)

    def top(self, query: str, k: int = 10) -> list[int]:
        return list(np.argsort(-self.scores(query))[:k])

    def scores(self, query: str) -> np.ndarray:
        scores = np.zeros(self.n, np.float32)
        for term in set(self.tokenize(query)):
            plist = self.postings.get(term)
            if not plist:
                continue
            idf = math.log(1 + (self.n - len(plist) + 0.5) / (len(plist) + 0.5))
            idx = np.fromiter((p[0] for p in plist), np.int64, len(plist))
            tf = np.fromiter((p[1] for p in plist), np.float32, len(plist))
            norm = self.k1 * (1 - self.b + self.b * self.lengths[idx] / self.avg)
            scores[idx] += idf * tf * (self.k1 + 1) / (tf + norm)
        return scores


def rank_metrics(rankings: list[list[int]], answers: list[int]) -> dict:
    rr, hits = [], 0
    for ranked, answer in zip(rankings, answers):
        position = next((i for i, r in enumerate(ranked[:10], 1) if r == answer), None)
        rr.append(1 / position if position else 0.0)
        hits += position is not None
    return {"mrr@10": round(float(np.mean(rr)), 3), "recall@10": round(hits / len(answers), 3)}


def evaluate(names, texts, queries, fields=None, learned=None) -> dict:
    asked = [i for i, q in enumerate(queries) if q]
    out = {"documents": len(texts), "queries": len(asked)}
    model = HashingModel(512)
    started = time.perf_counter()
    tf = model.dense([model.sparse(t) for t in texts])
    model.fit(tf)
    matrix = model.finish(tf)
    embed_s = time.perf_counter() - started
    q = model.embed([queries[i] for i in asked])
    ranked = np.argsort(-(q @ matrix.T), axis=1)[:, :10]
    out[model.id] = {**rank_metrics([list(r) for r in ranked], asked),
                          "embed_per_s": round(len(texts) / embed_s)}
    started = time.perf_counter()
    bm25 = BM25(texts)
    rankings = [bm25.top(queries[i]) for i in asked]
    out["bm25"] = {**rank_metrics(rankings, asked), "index_s": round(time.perf_counter() - started, 2)}
    # codegraph's search: BM25 over its own terms (identifiers split, plurals and -ing normalised)
    # blended with the embedding as semantic.search.Weights does
    ours = BM25(texts, tokenize=codegraph_tokens)
    out["bm25 (codegraph terms)"] = rank_metrics([ours.top(queries[i]) for i in asked], asked)
    if fields:  # weighted like the terms table: the name counts most (the docstring is the query here)
        ours = BM25(fields, tokenize=codegraph_tokens, weights=(3.0, 1.0, 0.5, 0.3))
        out["bm25 (codegraph terms, weighted fields)"] = rank_metrics([ours.top(queries[i]) for i in asked], asked)
    weights = Weights()  # with `ours` as weighted above
    out["hybrid (codegraph search, no priors)"] = rank_metrics(hybrid(ours, queries, asked, q, matrix, weights.vector), asked)
    if learned is not None:
        started, cpu = time.perf_counter(), time.process_time()
        dense = learned.embed(texts)
        seconds = time.perf_counter() - started
        lq = learned.embed([queries[i] for i in asked])
        ranked = np.argsort(-(lq @ dense.T), axis=1)[:, :10]
        out[learned.id] = {**rank_metrics([list(r) for r in ranked], asked), "embed_per_s": round(len(texts) / seconds, 1),
                           "embed_cpu_per_wall": round((time.process_time() - cpu) / seconds, 2)}
        for vector_weight in sorted({weights.vector, 0.5, 0.7}):
            out[f"hybrid with {learned.id}, vector weight {vector_weight}"] = rank_metrics(
                hybrid(ours, queries, asked, lq, dense, vector_weight), asked)
        if fields and len(texts) > 2 * SAMPLE:
            out[f"samples of {SAMPLE}"] = sampled(texts, queries, fields, dense, lq, asked)
    out["_matrix"], out["_queries"] = matrix, q
    return out


SAMPLE = 2000  # the size of the brief's test (MiniLM with torch 0.556 there): MRR falls as the corpus grows


def sampled(texts, queries, fields, dense, query_vectors, asked, rounds: int = 5) -> dict:
    """MRR@10 over random corpora of SAMPLE functions (their own queries only), mean of `rounds`:
    the hashing model (fitted on the sample), weighted BM25, the learned model, and the blend."""
    row_of = {i: row for row, i in enumerate(asked)}
    scores: dict[str, list[float]] = {"hash": [], "bm25": [], "learned": [], "hybrid, vector weight 0.7": []}
    for seed in range(rounds):
        keep = sorted(np.random.default_rng(seed).choice(len(texts), SAMPLE, replace=False))
        position = {d: j for j, d in enumerate(keep)}
        ask = [i for i in keep if queries[i]]
        answers = [position[i] for i in ask]
        vectors, questions = dense[keep], query_vectors[[row_of[i] for i in ask]]
        hashing = HashingModel(512)
        tf = hashing.dense([hashing.sparse(texts[i]) for i in keep])
        hashing.fit(tf)
        hashed = hashing.finish(tf)
        lexical = BM25([fields[i] for i in keep], tokenize=codegraph_tokens, weights=(3.0, 1.0, 0.5, 0.3))
        top = lambda q, m: [list(r) for r in np.argsort(-(q @ m.T), axis=1)[:, :10]]  # noqa: E731
        scores["hash"].append(rank_metrics(top(hashing.embed([queries[i] for i in ask]), hashed), answers)["mrr@10"])
        scores["bm25"].append(rank_metrics([lexical.top(queries[i]) for i in ask], answers)["mrr@10"])
        scores["learned"].append(rank_metrics(top(questions, vectors), answers)["mrr@10"])
        sample_queries = [queries[i] for i in keep]
        blended = hybrid(lexical, sample_queries, [position[i] for i in ask], questions, vectors, 0.7)
        scores["hybrid, vector weight 0.7"].append(rank_metrics(blended, answers)["mrr@10"])
    return {"rounds": rounds, **{name: round(float(np.mean(v)), 3) for name, v in scores.items()}}


def hybrid(lexical_index: BM25, queries: list[str], asked: list[int], query_vectors: np.ndarray, matrix: np.ndarray,
           vector_weight: float) -> list[list[int]]:
    """The top 10 per question as codegraph's search blends BM25 and cosine (each scaled to its best)."""
    out = []
    for row, i in enumerate(asked):
        lexical = lexical_index.scores(queries[i])
        cosine = np.maximum(query_vectors[row] @ matrix.T, 0)
        score = (1 - vector_weight) * lexical / (lexical.max() or 1) + vector_weight * cosine / (cosine.max() or 1)
        out.append(list(np.argsort(-score)[:10]))
    return out


def cache_check(matrix: np.ndarray, queries: np.ndarray, label: str) -> dict:
    """codegraph's int8 vector cache (what `search` scans) against exact float search."""
    started = time.perf_counter()
    ids = np.arange(len(matrix), dtype=np.int64)
    cache = VectorCache.quantise(ids, ids, matrix, "bench")
    build_s = time.perf_counter() - started
    exact = np.argsort(-(queries @ matrix.T), axis=1)[:, :10]
    out = {"label": label, "vectors": len(matrix), "build_s": round(build_s, 2), "by_rerank": {}}
    for rerank in (10, 32, 64):
        latencies, recalls = [], []
        for qv, truth in zip(queries, exact):
            t = time.perf_counter()
            rows = cache.candidates(qv, rerank)
            top = rows[np.argsort(-(matrix[rows] @ qv))][:10]
            latencies.append((time.perf_counter() - t) * 1000)
            recalls.append(len(set(top.tolist()) & set(truth.tolist())) / 10)
        out["by_rerank"][rerank] = {"recall@10_vs_exact": round(float(np.mean(recalls)), 4),
                                    "query_ms_p50": round(statistics.median(latencies), 3),
                                    "query_ms_p95": round(float(np.percentile(latencies, 95)), 3)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "semantic.json")
    args = parser.parse_args()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="codegraph-semantic-") as scratch:
        roots = prepare(Path(scratch))
        try:
            learned = get_model("minilm")
        except EmbeddingError as exc:
            learned = None
            print(f"the learned model is left out: {exc}", flush=True)
        mats = []
        for name in ("stdlib", "click"):
            started = time.perf_counter()
            report = index_repository(roots[name], Path(scratch) / f"{name}.duckdb", embed="hash")
            index_s = time.perf_counter() - started
            names, texts, queries, fields = corpus(report.db_path, STDLIB_SKIP if name == "stdlib" else SDIST_SKIP)
            result = evaluate(names, texts, queries, fields, learned)
            mats.append((result.pop("_matrix"), result.pop("_queries")))
            result["index_with_embeddings_s"] = round(index_s, 2)
            results[name] = result
            print(name, json.dumps(result), flush=True)
        if learned is not None:  # a whole build with each model, interleaved (the machine is noisy)
            times: dict[str, list] = {"hash": [], "minilm": []}
            for _ in range(2):
                for model in times:
                    started, cpu = time.perf_counter(), time.process_time()
                    report = index_repository(roots["click"], Path(scratch) / f"click-{model}.duckdb", embed=model,
                                              full=True)
                    times[model].append({"wall_s": round(time.perf_counter() - started, 2),
                                         "embed_s": round(report.timings["embed"], 2),
                                         "definitions": report.counts.get("embeddings", 0)})
            results["index_click"] = {model: min(runs, key=lambda r: r["wall_s"]) for model, runs in times.items()}
            print(json.dumps(results["index_click"]), flush=True)
        matrix, queries = mats[0]
        results["vector_cache"] = [cache_check(matrix, queries[:500], "stdlib functions")]
        rng = np.random.default_rng(0)
        reps = int(math.ceil(100_000 / len(matrix)))
        big = np.concatenate([matrix + rng.normal(0, 0.02, matrix.shape).astype(np.float32) for _ in range(reps)])[:100_000]
        big /= np.linalg.norm(big, axis=1, keepdims=True)
        results["vector_cache"].append(cache_check(big, queries[:500], "100k (stdlib vectors, jittered copies)"))
        print(json.dumps(results["vector_cache"], indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

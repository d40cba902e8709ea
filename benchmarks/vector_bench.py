"""Vector index comparison on the real embeddings of an indexed repository.

    python -m benchmarks.vector_bench --db /tmp/stdlib.duckdb [--queries 300] [--install]

Reads the `embeddings` table of a codegraph database (by default the stdlib index the README
builds), then side by side in one process: exact search with numpy (float32 and float16),
hnswlib, usearch (float32, float16, int8) and faiss (HNSW), each built over the same vectors and
asked the same queries: the embedded first docstring lines of randomly chosen definitions, as
`codegraph search` embeds a question. Reported: build time, query p50/p95 (one query at a time,
as the CLI asks), recall@10 against exact float32 search, and the size of the saved index.
`codegraph` is the int8 cache that `codegraph index` writes and `codegraph search` reads (each
query re-reads the file, as a CLI run does). With --install, each library is also installed into a fresh virtualenv with `pip --no-cache-dir`
to time it and to see whether pip had to compile it (no wheel for this platform).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np

from codegraph.semantic.store import load_vectors, model_from_meta

K = 10


def _queries(con: duckdb.DuckDBPyConnection, n: int, seed: int = 7) -> np.ndarray:
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    model = model_from_meta(meta)
    docs = [r[0] for r in con.execute(
        "SELECT split_part(trim(docstring), chr(10), 1) FROM symbols WHERE docstring IS NOT NULL "
        "AND length(docstring) > 20 ORDER BY hash(id + $s) LIMIT $n", {"s": seed, "n": n}).fetchall()]
    return model.embed(docs)


def _timed(fn):
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def _query_stats(search, queries: np.ndarray) -> tuple[list[np.ndarray], dict]:
    found, times = [], []
    for q in queries:
        started = time.perf_counter()
        found.append(np.asarray(search(q)))
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return found, {"query_p50_ms": round(statistics.median(times), 3),
                   "query_p95_ms": round(times[int(0.95 * (len(times) - 1))], 3)}


def _recall(found: list[np.ndarray], truth: list[np.ndarray]) -> float:
    return round(float(np.mean([len(set(f[:K].tolist()) & set(t[:K].tolist())) / K
                                for f, t in zip(found, truth)])), 4)


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def bench(ids: np.ndarray, matrix: np.ndarray, queries: np.ndarray, folder: Path, db: str,
          which: set[str]) -> list[dict]:
    n, dim = matrix.shape
    rows = []

    def exact(mat):
        def search(q):
            scores = mat @ q.astype(mat.dtype)
            top = np.argpartition(-scores, K)[:K]
            return ids[top[np.argsort(-scores[top])]]
        return search

    truth, stats = _query_stats(exact(matrix), queries)
    np.save(folder / "exact32.npy", matrix)
    rows.append({"index": "numpy exact, float32", "build_s": 0.0, **stats, "recall_at_10": 1.0,
                 "file_bytes": _size(folder / "exact32.npy")})

    if "codegraph" in which:
        from codegraph.semantic.store import VectorCache, cached_search

        con = duckdb.connect(db, read_only=True)
        model_id = con.execute("SELECT value FROM meta WHERE key = 'embedding_model'").fetchone()[0]
        started = time.perf_counter()
        cache = VectorCache.quantise(ids, np.zeros(len(ids), np.int64), matrix, model_id)
        cache.write(folder / "codegraph.vectors", "bench")
        built = time.perf_counter() - started

        def search(q):
            loaded = VectorCache.read(folder / "codegraph.vectors", token="bench")  # as each CLI search does
            return np.asarray([h.id for h in cached_search(con, loaded, q, K)])
        found, stats = _query_stats(search, queries)
        con.close()
        rows.append({"index": "codegraph: int8 exact + re-rank of 64 from the table (numpy)",
                     "build_s": round(built, 2), **stats, "recall_at_10": _recall(found, truth),
                     "file_bytes": _size(folder / "codegraph.vectors")})
    if "others" not in which:
        return rows

    half = matrix.astype(np.float16)
    found, stats = _query_stats(exact(half), queries)
    np.save(folder / "exact16.npy", half)
    rows.append({"index": "numpy exact, float16", "build_s": 0.0, **stats, "recall_at_10": _recall(found, truth),
                 "file_bytes": _size(folder / "exact16.npy")})

    try:
        import hnswlib

        def build_hnswlib():
            index = hnswlib.Index(space="ip", dim=dim)
            index.init_index(max_elements=n, ef_construction=128, M=16)
            index.add_items(matrix, ids)
            index.set_ef(128)
            return index
        index, built = _timed(build_hnswlib)
        found, stats = _query_stats(lambda q: index.knn_query(q.reshape(1, -1), k=K)[0][0], queries)
        index.save_index(str(folder / "hnswlib.bin"))
        rows.append({"index": "hnswlib (M=16, ef=128)", "build_s": round(built, 2), **stats,
                     "recall_at_10": _recall(found, truth), "file_bytes": _size(folder / "hnswlib.bin")})
    except ImportError:
        rows.append({"index": "hnswlib", "error": "not installed"})

    try:
        from usearch.index import Index

        for dtype in ("f32", "f16", "i8"):
            def build_usearch(dtype=dtype):
                index = Index(ndim=dim, metric="ip", dtype=dtype, connectivity=16, expansion_add=128,
                              expansion_search=128)
                index.add(ids.astype(np.uint64), matrix, threads=2)
                return index
            index, built = _timed(build_usearch)
            found, stats = _query_stats(lambda q, index=index: index.search(q, K).keys, queries)
            path = folder / f"usearch-{dtype}.bin"
            index.save(str(path))
            print(f"usearch {dtype} built in {built:.1f} s", file=sys.stderr)
            rows.append({"index": f"usearch {dtype} (M=16, ef=128)", "build_s": round(built, 2), **stats,
                         "recall_at_10": _recall(found, truth), "file_bytes": _size(path)})
    except ImportError:
        rows.append({"index": "usearch", "error": "not installed"})

    try:
        import faiss

        faiss.omp_set_num_threads(2)

        def build_faiss():
            hnsw = faiss.IndexHNSWFlat(dim, 16, faiss.METRIC_INNER_PRODUCT)
            hnsw.hnsw.efConstruction = 128
            hnsw.hnsw.efSearch = 128
            index = faiss.IndexIDMap(hnsw)
            index.add_with_ids(matrix, ids)
            return index
        index, built = _timed(build_faiss)
        found, stats = _query_stats(lambda q: index.search(q.reshape(1, -1), K)[1][0], queries)
        faiss.write_index(index, str(folder / "faiss.bin"))
        rows.append({"index": "faiss HNSWFlat (M=16, ef=128)", "build_s": round(built, 2), **stats,
                     "recall_at_10": _recall(found, truth), "file_bytes": _size(folder / "faiss.bin")})
    except ImportError:
        rows.append({"index": "faiss-cpu", "error": "not installed"})
    return rows


def install_costs(packages: list[str]) -> list[dict]:
    """Install each package into a fresh venv without pip's cache: time, size, compiled or not."""
    out = []
    for package in packages:
        with tempfile.TemporaryDirectory() as tmp:
            venv = Path(tmp) / "venv"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-cache-dir", "-v", package]
            started = time.perf_counter()
            proc = subprocess.run(pip, capture_output=True, text=True)
            seconds = time.perf_counter() - started
            site = next((venv / "lib").glob("python*/site-packages"))
            size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file() and "pip" not in p.parts[len(site.parts)])
            out.append({"package": package, "ok": proc.returncode == 0, "seconds": round(seconds, 1),
                        "compiled": "Building wheel" in proc.stdout or "running build_ext" in proc.stdout,
                        "site_packages_mb": round(size / 1e6, 1)})
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default="/tmp/stdlib.duckdb")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--install", action="store_true", help="also time a fresh install of each library")
    parser.add_argument("--only", choices=["codegraph", "others"], help="run only codegraph's cache, or only the others")
    parser.add_argument("--out", default="benchmarks/results/vectors.json")
    args = parser.parse_args(argv)
    con = duckdb.connect(args.db, read_only=True)
    ids, matrix = load_vectors(con)
    ids, first = np.unique(ids, return_index=True)  # one vector per key (labels must be unique)
    matrix = matrix[first]
    queries = _queries(con, args.queries)
    con.close()
    with tempfile.TemporaryDirectory() as tmp:
        which = {args.only} if args.only else {"codegraph", "others"}
        rows = bench(ids, matrix, queries, Path(tmp), args.db, which)
    result = {"db": args.db, "vectors": int(len(ids)), "dim": int(matrix.shape[1]), "queries": len(queries),
              "indexes": rows, "measured": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count()}
    if args.install:
        result["install"] = install_costs(["hnswlib", "usearch", "faiss-cpu"])
    out = Path(args.out)
    if args.only and out.exists():  # a partial run replaces its own rows in the full results
        previous = json.loads(out.read_text())
        mine = {r["index"] for r in rows}
        result["indexes"] = [r for r in previous["indexes"] if r["index"] not in mine] + rows
        result["install"] = previous.get("install", result.get("install"))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

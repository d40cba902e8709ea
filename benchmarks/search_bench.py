"""Search benchmark: plain-language questions, answers written by hand.

    python -m benchmarks.search_bench [--out benchmarks/results/search.json] [--embed-model hash|minilm]

`benchmarks/data/questions.json` holds questions a person asks of the standard library, click and
marshmallow ("parse a url into its components"), each with the definitions they would accept,
written from the projects' documentation. Every corpus is indexed whole (the stdlib with its test
suite: tests and private helpers must rank below public definitions unless asked for). Each
question goes through `codegraph.semantic.search.search` in each mode, side by side: the
embedding alone (what search was before), BM25 alone, both blended without priors, and the
default (blended, with priors). Reported per corpus and overall: success@10 (an accepted answer in
the top 10), MRR@10, and the p95 latency of one search.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sysconfig
import tarfile
import tempfile
import time
from pathlib import Path

from benchmarks.retrieval_bench import SDISTS, _sdist
from codegraph.db import connect_readonly
from codegraph.indexer import index_repository
from codegraph.semantic.search import search

QUESTIONS = Path(__file__).parent / "data" / "questions.json"
VARIANTS = {  # name -> search() options
    "vector (before)": {"mode": "vector", "priors": False},
    "bm25": {"mode": "bm25", "priors": False},
    "hybrid, no priors": {"mode": "hybrid", "priors": False},
    "default (hybrid + priors)": {"mode": "hybrid"},
}


def corpora(scratch: Path) -> dict[str, Path]:
    roots = {"stdlib": Path(sysconfig.get_paths()["stdlib"])}
    for name, requirement in SDISTS.items():
        with tarfile.open(_sdist(requirement)) as tar:
            tar.extractall(scratch / name, filter="data")
        (roots[name],) = (scratch / name).iterdir()
    return roots


def evaluate(db_path: Path, questions: list, k: int = 10) -> dict:
    con = connect_readonly(db_path)
    out = {}
    try:
        for variant, options in VARIANTS.items():
            ranks, times, misses = [], [], []
            for question, accepted in questions:
                started = time.perf_counter()
                hits = search(con, db_path, question, k, **options)
                times.append((time.perf_counter() - started) * 1000)
                rank = next((i for i, h in enumerate(hits, 1) if h["qualname"] in accepted), None)
                ranks.append(rank)
                if rank is None:
                    misses.append({"question": question, "top": [h["qualname"] for h in hits[:3]]})
            times.sort()
            out[variant] = {"questions": len(questions),
                            "success_at_10": round(sum(r is not None for r in ranks) / len(ranks), 4),
                            "mrr_at_10": round(sum(1 / r for r in ranks if r) / len(ranks), 4),
                            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
                            "ranks": ranks, "misses": misses}
    finally:
        con.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="benchmarks/results/search.json")
    parser.add_argument("--keep", type=Path, help="index into this folder and reuse what is there")
    parser.add_argument("--embed-model", default="auto", help="the embedding model the corpora are indexed with")
    args = parser.parse_args(argv)
    data = json.loads(QUESTIONS.read_text())["corpora"]
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "embedding_model": args.embed_model}
    with tempfile.TemporaryDirectory(prefix="codegraph-search-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        roots = corpora(folder)
        for name, questions in data.items():
            db_path = folder / f"{name}.duckdb"
            started = time.perf_counter()
            report = index_repository(roots[name], db_path, embed=args.embed_model)
            results[name] = evaluate(db_path, questions)
            results.setdefault("index", {})[name] = {"mode": report.mode, "s": round(time.perf_counter() - started, 1),
                                                     "embed_s": round(report.timings.get("embed", 0.0), 1)}
            print(name, {v: (r["success_at_10"], r["mrr_at_10"]) for v, r in results[name].items()}, flush=True)
    total = sum(len(q) for q in data.values())
    results["all"] = {}
    for variant in VARIANTS:
        ranks = [r for name in data for r in results[name][variant]["ranks"]]
        results["all"][variant] = {"questions": total,
                                   "success_at_10": round(sum(r is not None for r in ranks) / total, 4),
                                   "mrr_at_10": round(sum(1 / r for r in ranks if r) / total, 4),
                                   "p95_ms": max(results[name][variant]["p95_ms"] for name in data)}
    print(json.dumps(results["all"], indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

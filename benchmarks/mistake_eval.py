"""Evaluate retrieval on generated mistakes, with whatever codegraph this interpreter has.

    python benchmarks/mistake_eval.py CASES.json ROOT DB OUT.json

Run by `benchmarks.mistake_bench` once with the current codegraph and once with a baseline
interpreter (an older codegraph installed elsewhere), so both answer the same cases in the same
run. Uses only what every codegraph version has: index_repository, diagnose and Retriever. Indexes
ROOT into DB first when DB does not exist.
"""

import json
import sys
import time
from pathlib import Path


def _rank(rows, truth):
    for i, row in enumerate(rows, 1):
        q = row.get("qualname") or ""
        if q == truth or (truth.startswith(q + ".") and row.get("kind") == "module"):
            return i
    return None


def main(cases_path, root, db_path, out_path):
    from codegraph.indexer import index_repository
    from codegraph.retrieval.diagnose import diagnose
    from codegraph.retrieval.engine import Retriever

    root, db_path = Path(root), Path(db_path)
    if not db_path.exists():
        index_repository(root, db_path)
    cases = json.loads(Path(cases_path).read_text())
    retriever = Retriever(db_path)
    out = []
    try:
        for case in cases:
            target = root / case["path"]
            original = target.read_text(encoding="utf-8")
            try:
                target.write_text(case["text"], encoding="utf-8")
                started = time.perf_counter()
                report = diagnose(target, db_path, lines=(case["first_line"], case["last_line"]),
                                  retriever=retriever)
                seconds = time.perf_counter() - started
            finally:
                target.write_text(original, encoding="utf-8")
            on_line = [r for r in report.retrievals if r.diagnostic.line == case["mutated_line"]
                       or (r.diagnostic.end_line or r.diagnostic.line) == case["mutated_line"]]
            ranks = [rank for rank in (_rank(r.rows, case["ground_truth"]) for r in on_line) if rank]
            out.append({"id": case["id"], "category": case["category"], "detected": bool(on_line),
                        "symbols": sorted({r.diagnostic.symbol for r in on_line}),
                        "rank": min(ranks) if ranks else None,
                        "context_tokens": (len(report.context) + 3) // 4 if report.context else 0,
                        "retrieve_ms": round(report.retrieve_ms, 1), "seconds": round(seconds, 3)})
    finally:
        retriever.close()
    Path(out_path).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])

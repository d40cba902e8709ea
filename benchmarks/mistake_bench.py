"""Retrieval on realistic mistakes, against the retrieval codegraph had before, in one run.

    python -m benchmarks.mistake_bench [--per-category 12] [--baseline-python PY] [--out benchmarks/results/mistakes.json]

Projects: the repair benchmark's pinned source distributions and click. `benchmarks/mistakes.py`
injects one realistic mistake per case (invented names, calls on the wrong object, a missing
`self.`, names used without their import, synonym keywords, stub bodies) into a scratch copy;
`benchmarks/mistake_eval.py` lints each mutated function and retrieves per diagnostic, exactly as
`codegraph diagnose` does, first with this codegraph, then, when --baseline-python names an
interpreter with an older codegraph installed, with that one on the same cases (each indexes the
scratch copy itself). Reported per category: pylint's detection, recall@1 and @5 of the
definition that fixes the mistake, the median context tokens, and retrieval p95 (without pylint).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import duckdb

from benchmarks.mistakes import RealisticGenerator
from benchmarks.repair_bench import PROJECTS
from benchmarks.retrieval_bench import SDIST_SKIP, _sdist
from codegraph.indexer import index_repository

REQUIREMENTS = {**{k: v for k, v in PROJECTS.items() if k != "idna"}, "click": "click==8.1.7"}
EVAL = Path(__file__).with_name("mistake_eval.py")


def summarise(results: list[dict]) -> dict:
    by: dict[str, list[dict]] = {}
    for r in results:
        by.setdefault(r["category"], []).append(r)
    by["all (with a diagnostic to answer)"] = [r for r in results if r["category"] != "stub-body"]
    out = {}
    for category, rows in by.items():
        detected = [r for r in rows if r["detected"]]
        times = sorted(r["retrieve_ms"] for r in detected)
        out[category] = {
            "cases": len(rows), "detected": round(len(detected) / len(rows), 4) if rows else None,
            "recall_at_1": round(sum(1 for r in detected if r["rank"] == 1) / len(detected), 4) if detected else None,
            "recall_at_5": round(sum(1 for r in detected if r["rank"] and r["rank"] <= 5) / len(detected), 4)
            if detected else None,
            "median_context_tokens": statistics.median([r["context_tokens"] for r in detected]) if detected else None,
            "retrieve_p95_ms": times[int(0.95 * (len(times) - 1))] if times else None}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-category", type=int, default=12)
    parser.add_argument("--baseline-python", help="an interpreter with the baseline codegraph installed")
    parser.add_argument("--out", default="benchmarks/results/mistakes.json")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    runs = {"current": sys.executable, **({"baseline": args.baseline_python} if args.baseline_python else {})}
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "per_category": args.per_category, "runs": {}}
    everything = {name: [] for name in runs}
    cases_total = []
    with tempfile.TemporaryDirectory(prefix="codegraph-mistakes-") as tmp:
        tmp = Path(tmp)
        for project, requirement in REQUIREMENTS.items():
            with tarfile.open(_sdist(requirement)) as tar:
                tar.extractall(tmp / project, filter="data")
            (root,) = (tmp / project).iterdir()
            db_path = tmp / f"{project}-generate.duckdb"
            index_repository(root, db_path)
            con = duckdb.connect(str(db_path), read_only=True)
            cases = RealisticGenerator(con, root, project, seed=args.seed, exclude=SDIST_SKIP).generate_realistic(
                args.per_category)
            con.close()
            cases_file = tmp / f"{project}-cases.json"
            cases_file.write_text(json.dumps([{**c.summary(), "text": c.text} for c in cases]))
            cases_total += [c.summary() for c in cases]
            for name, python in runs.items():
                out = tmp / f"{project}-{name}.json"
                subprocess.run([python, str(EVAL), str(cases_file), str(root), str(tmp / f"{project}-{name}.duckdb"),
                                str(out)], check=True, cwd=tmp)
                everything[name] += json.loads(out.read_text())
            print(project, len(cases), "cases", flush=True)
    for name in runs:
        results["runs"][name] = {"python": runs[name], "by_category": summarise(everything[name])}
        print(name, json.dumps(results["runs"][name]["by_category"], indent=1))
    results["cases"] = cases_total
    results["per_case"] = everything
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

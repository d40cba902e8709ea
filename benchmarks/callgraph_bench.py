"""Call-graph precision and recall on hand-written programs, one Python feature each.

    python -m benchmarks.callgraph_bench [--out benchmarks/results/callgraph.json]
    python -m benchmarks.callgraph_bench --baseline-python OLD/bin/python --out benchmarks/results/callgraph_before.json

`benchmarks/callgraph/<program>/` holds a small program and `expected.json`: its feature and the
caller -> callee edges the language's semantics give, written by hand (never copied from the
tool's output). Conventions: the caller is the enclosing function, class body or module; the
callee is the project function or class the call runs (a constructor call `C()` gives two edges:
to the class, and to the `__init__` it runs when the project defines one; `with`, `for` and
`raise` give the `__enter__`/`__exit__`, `__iter__` and `__init__` they run).
The graph's edges are the `calls` rows that resolve to a project function or class. Reported
per feature: precision, recall, and the false edges.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from codegraph.db import connect_readonly
from codegraph.indexer import index_repository
from codegraph.schema import PROJECT_CALL_SQL

from .dynamic_callgraph import _OLD_RESOLUTIONS, index_with

PROGRAMS = Path(__file__).parent / "callgraph"
_EDGES = f"""
SELECT DISTINCT c.caller_qualname, c.resolved_callee FROM calls c
JOIN symbols s ON s.qualname = c.resolved_callee
WHERE c.{PROJECT_CALL_SQL} AND s.kind IN ('function', 'method', 'classmethod', 'staticmethod', 'property',
                                          'nested_function', 'class')
"""


def graph_edges(program: Path, scratch: Path, baseline_python: str | None = None) -> set[tuple[str, str]]:
    db_path = scratch / f"{program.name}.duckdb"
    if baseline_python:  # an older codegraph, in its own interpreter: its own project resolutions
        index_with(baseline_python, program, db_path)
        query = _EDGES.replace(PROJECT_CALL_SQL, "resolution IN (" + ", ".join(f"'{r}'" for r in _OLD_RESOLUTIONS) + ")")
    else:
        index_repository(program, db_path, jobs=1, embed=False, libraries=False)
        query = _EDGES
    con = connect_readonly(db_path)
    try:
        return {(a, b) for a, b in con.execute(query).fetchall()}
    finally:
        con.close()


def evaluate(programs: list[Path], baseline_python: str | None = None) -> dict:
    per_program, by_feature = {}, {}
    with tempfile.TemporaryDirectory(prefix="codegraph-callgraph-") as tmp:
        for program in programs:
            expected_file = json.loads((program / "expected.json").read_text())
            expected = {tuple(e) for e in expected_file["edges"]}
            found = graph_edges(program, Path(tmp), baseline_python)
            feature = expected_file["feature"]
            per_program[program.name] = {"feature": feature, "expected": len(expected),
                                         "found": len(found), "correct": len(found & expected),
                                         "missed": sorted(map(list, expected - found)),
                                         "false": sorted(map(list, found - expected))}
            totals = by_feature.setdefault(feature, {"programs": 0, "expected": 0, "found": 0, "correct": 0})
            totals["programs"] += 1
            for key in ("expected", "found", "correct"):
                totals[key] += per_program[program.name][key]
    everything = {"programs": len(programs), **{k: sum(f[k] for f in by_feature.values())
                                                for k in ("expected", "found", "correct")}}
    for totals in [*by_feature.values(), everything]:
        totals["precision"] = round(totals["correct"] / totals["found"], 4) if totals["found"] else None
        totals["recall"] = round(totals["correct"] / totals["expected"], 4) if totals["expected"] else None
    return {"features": dict(sorted(by_feature.items())), "all": everything, "programs": per_program}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="benchmarks/results/callgraph.json")
    parser.add_argument("--baseline-python", help="evaluate the codegraph installed in this interpreter instead "
                        "(an older one: its calls resolved local, import, self or super count)")
    args = parser.parse_args(argv)
    programs = sorted(p for p in PROGRAMS.iterdir() if (p / "expected.json").is_file())
    result = {"measured": time.strftime("%Y-%m-%d"), **evaluate(programs, args.baseline_python)}
    for feature, totals in [*result["features"].items(), ("all", result["all"])]:
        print(f"{feature:12} programs {totals['programs']:3}  precision {totals['precision']}  recall {totals['recall']}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

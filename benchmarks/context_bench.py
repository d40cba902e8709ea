"""Context recall before generation: does the task-level context hold what the real body uses?

    python -m benchmarks.context_bench [--per-project 150] [--out benchmarks/results/context.json]

For functions and methods of real projects (pinned PyPI source distributions: the repair
benchmark's projects and click), each with a docstring and at least one call that resolves to
another definition of its project: the context is built from the docstring, the signature and
the target's place (file, class) only, with the target's own body left out of the graph
(`exclude_target`). Ground truth: the project definitions the real body calls (the graph's
resolved calls; nobody here chose them). Reported at budgets of 500, 1,000 and 2,000 tokens:
mean dependency recall, against two baselines at the same budget, in the same run: naive RAG
(the embedding's top code chunks, whole sources, until the budget is spent) and its BM25
equivalent. Also the task context's precision (the share of the definitions it shows that the body
calls: calls only, so a floor), recall and precision against everything the body uses (its calls,
and the project definitions it reads or names in an annotation: attributes count), and the
latency of one task-level context.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tarfile
import tempfile
import time
from pathlib import Path

from benchmarks.repair_bench import PROJECTS
from benchmarks.retrieval_bench import _sdist
from codegraph.db import connect_readonly
from codegraph.indexer import index_repository
from codegraph.llm import estimate_tokens
from codegraph.retrieval.context import card
from codegraph.retrieval.task_context import task_context
from codegraph.semantic.search import search

BUDGETS = (500, 1000, 2000)
# The calls whose callee the body names (a name in scope, an import, self or super, a typed receiver,
# an alias, ...), first answers only: not what flows in from callers (a lambda or function passed as
# an argument), an override a subclass may run, a dunder an operator runs, or a guess by name. The
# resolver learning those made them part of "what the body calls" unseen: recall fell from 92 % to
# 72 % with no change to the context (2026-11-27).
_NAMED = ('local', 'import', 'self', 'super', 'type', 'alias', 'return', 'container', 'wrapper', 'partial',
          'getattr')
REQUIREMENTS = {**PROJECTS, "click": "click==8.1.7"}
# What the body uses besides its calls: the project definitions it reads or names in an annotation
# (`self.rows`, `column._cells`, `Column`), for the precision of everything the context shows,
# attributes included (calls alone count every attribute line as noise).
_READS = """
SELECT list(DISTINCT r.resolved_qualname) FROM refs r JOIN symbols d ON d.qualname = r.resolved_qualname
WHERE (r.scope_qualname = $q OR starts_with(r.scope_qualname, $q || '.<locals>.')) AND d.kind <> 'module'
  AND r.resolved_qualname <> $q AND NOT starts_with(r.resolved_qualname, $q || '.')
"""
_DEPENDENCIES = f"""
SELECT s.qualname, s.path, s.module, s.class_qualname, s.signature, s.docstring,
       list(DISTINCT c.resolved_callee) AS deps
FROM symbols s
JOIN calls c ON (c.caller_qualname = s.qualname OR starts_with(c.caller_qualname, s.qualname || '.<locals>.'))
JOIN symbols d ON d.qualname = c.resolved_callee AND d.kind <> 'module'
WHERE s.kind IN ('function', 'method', 'classmethod', 'staticmethod') AND s.docstring IS NOT NULL
  AND length(s.docstring) > 20 AND c.resolution IN {_NAMED}
  AND NOT coalesce(c.alternative, false)
  AND c.resolved_callee <> s.qualname AND NOT starts_with(c.resolved_callee, s.qualname || '.')
  AND NOT regexp_matches(s.path, '(^|/)(tests?|testing|docs|examples)(/|$)|(^|/)test_[^/]*$|conftest')
GROUP BY ALL
"""


def targets(db_path: Path, per_project: int, seed: int = 13) -> list[dict]:
    con = connect_readonly(db_path)
    try:
        rows = con.execute(_DEPENDENCIES).fetchall()
    finally:
        con.close()
    out = [{"qualname": q, "path": p, "module": m, "symbol": q[len(m) + 1:], "signature": sig,
            "description": doc.strip().split("\n\n")[0], "deps": sorted(deps)}
           for q, p, m, cls, sig, doc, deps in rows if "<locals>" not in q]
    random.Random(seed).shuffle(out)
    chosen = sorted(out[:per_project], key=lambda t: t["qualname"])
    con = connect_readonly(db_path)
    try:
        for target in chosen:
            reads = con.execute(_READS, {"q": target["qualname"]}).fetchone()[0] or []
            target["uses"] = sorted(set(target["deps"]) | set(reads))
    finally:
        con.close()
    return chosen


def chunks_recall(con, db_path: Path, target: dict, mode: str, budget: int) -> float:
    """A baseline: the search's top hits as whole code chunks, until the budget is spent."""
    return len(chunks_seen(con, db_path, target, mode, budget) & set(target["deps"])) / len(target["deps"])


def chunks_seen(con, db_path: Path, target: dict, mode: str, budget: int) -> set[str]:
    """The qualnames of the chunks the baseline shows for the target's description."""
    exclude = {r[0] for r in con.execute("SELECT id FROM symbols WHERE qualname = $q OR starts_with(qualname, $q || '.')",
                                         {"q": target["qualname"]}).fetchall()}
    hits = search(con, db_path, target["description"], 40, mode=mode, priors=False, exclude=exclude)
    sources = dict(con.execute("""SELECT s.qualname, coalesce(m.source, g.source, n.source, c.source) FROM symbols s
        LEFT JOIN members m USING (id) LEFT JOIN globals g USING (id) LEFT JOIN nested_functions n USING (id)
        LEFT JOIN classes c USING (id) WHERE list_contains($q, s.qualname)""",
                               {"q": [h["qualname"] for h in hits]}).fetchall())
    used, seen = 0, set()
    for hit in hits:
        text = card({**hit, "name": hit["qualname"].rpartition(".")[2], "source": sources.get(hit["qualname"])})
        cost = estimate_tokens(text + "\n")
        if used + cost > budget:
            continue
        used += cost
        seen.add(hit["qualname"])
    return seen


def evaluate(db_path: Path, chosen: list[dict]) -> dict:
    results = {b: {"task context": [], "naive RAG (embedding)": [], "BM25 chunks": [],
                   "task context precision": [], "task context, uses": [], "task context precision, uses": []}
               for b in BUDGETS}
    times = []
    con = connect_readonly(db_path)
    try:
        for target in chosen:
            deps, uses = set(target["deps"]), set(target["uses"])
            for budget in BUDGETS:
                started = time.perf_counter()
                found = task_context(db_path, target["description"], target["path"], target["symbol"],
                                     signature=target["signature"], budget_tokens=budget, con=con)
                times.append((time.perf_counter() - started) * 1000)
                results[budget]["task context"].append(len(found.qualnames() & deps) / len(deps))
                shown = {i.qualname for i in found.items if i.kind != "import"}  # definitions, not import lines
                results[budget]["task context precision"].append(len(shown & deps) / len(shown) if shown else 0.0)
                results[budget]["task context, uses"].append(len(found.qualnames() & uses) / len(uses))
                results[budget]["task context precision, uses"].append(len(shown & uses) / len(shown) if shown else 0.0)
                results[budget]["naive RAG (embedding)"].append(chunks_recall(con, db_path, target, "vector", budget))
                results[budget]["BM25 chunks"].append(chunks_recall(con, db_path, target, "bm25", budget))
    finally:
        con.close()
    times.sort()
    return {"targets": len(chosen),
            "recall": {b: {k: round(statistics.mean(v), 4) if v else None for k, v in r.items()}
                       for b, r in results.items()},
            "context_ms_p50": round(statistics.median(times), 1) if times else None,
            "context_ms_p95": round(times[int(0.95 * (len(times) - 1))], 1) if times else None,
            "_per_target": {b: r for b, r in results.items()}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-project", type=int, default=150)
    parser.add_argument("--out", default="benchmarks/results/context.json")
    parser.add_argument("--keep", type=Path, help="index into this folder and reuse what is there")
    args = parser.parse_args(argv)
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "budgets": BUDGETS, "projects": {}}
    pooled = {b: {} for b in BUDGETS}
    with tempfile.TemporaryDirectory(prefix="codegraph-context-") as tmp:
        folder = args.keep or Path(tmp)
        for name, requirement in REQUIREMENTS.items():
            root = folder / name
            if not root.exists():
                with tarfile.open(_sdist(requirement)) as tar:
                    tar.extractall(root, filter="data")
            (top,) = root.iterdir()
            db_path = folder / f"{name}.duckdb"
            index_repository(top, db_path)
            chosen = targets(db_path, args.per_project)
            project = evaluate(db_path, chosen)
            for budget, per in project.pop("_per_target").items():
                for method, values in per.items():
                    pooled[budget].setdefault(method, []).extend(values)
            results["projects"][name] = {"requirement": requirement, **project}
            print(name, json.dumps(project["recall"]), project["context_ms_p95"], flush=True)
    results["all"] = {b: {m: round(statistics.mean(v), 4) for m, v in per.items()} for b, per in pooled.items()}
    results["all_targets"] = sum(p["targets"] for p in results["projects"].values())
    print(json.dumps(results["all"], indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""Retrieval benchmark: do pylint + the graph find the definition a hallucination got wrong?

    python -m benchmarks.retrieval_bench [--per-category 30] [--out benchmarks/results/retrieval.json]

Corpora: the running Python's standard library and two pinned PyPI source distributions
(downloaded by pip into benchmarks/.cache on first use). Each is copied to a scratch folder and
indexed; `hallucinations.py` injects one realistic mistake into one function per case; the
mutated file is linted in process (candidate = the function's lines), each diagnostic on the
mutated line goes through retrieval, and the rank of the ground-truth definition among the rows
is recorded. No LLM is involved. Ablations on the same diagnostics: rules only, lexical only
(the stand-in for semantic search until the semantic layer exists), and both (rules, then the
lexical fallback), which is what `codegraph diagnose` does.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import duckdb

from benchmarks.hallucinations import Case, Generator
from codegraph.indexer import index_repository
from codegraph.llm import estimate_tokens
from codegraph.retrieval.candidate import Candidate
from codegraph.retrieval.context import render
from codegraph.retrieval.engine import Retrieval, Retriever, query_terms
from codegraph.languages import language
from codegraph.languages.python.lint import Linter

SDISTS = {"click": "click==8.1.7", "marshmallow": "marshmallow==3.21.3"}
CACHE = Path(__file__).parent / ".cache"
STDLIB_SKIP = re.compile(r"(^|/)(test|tests|idlelib|lib2to3|tkinter|turtledemo|ensurepip|distutils|"
                         r"pydoc_data|site-packages|__pycache__)(/|$)")
SDIST_SKIP = re.compile(r"(^|/)(tests?|docs|examples|scripts)(/|$)")


def _sdist(requirement: str) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    name, version = requirement.split("==")

    def cached() -> list[Path]:  # sdists spell the name as they like: Markdown-3.6, more_itertools-10.3.0
        suffix = f"-{version}.tar.gz"
        wanted = re.sub(r"[-_.]+", "-", name).lower()
        return [p for p in CACHE.glob(f"*{suffix}")
                if re.sub(r"[-_.]+", "-", p.name[:-len(suffix)]).lower() == wanted]

    found = cached()
    if not found:  # pip may fail after the download, preparing metadata (a build backend from source): the file is enough
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                               requirement, "-d", str(CACHE)], check=False, capture_output=True, text=True)
        found = cached()
        if not found:
            raise SystemExit(f"no source distribution of {requirement}: {done.stderr.strip()[-500:]}")
    return found[0]


def prepare(scratch: Path) -> dict[str, Path]:
    roots = {}
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    roots["stdlib"] = scratch / "stdlib"
    shutil.copytree(stdlib, roots["stdlib"], ignore=lambda d, names: [
        n for n in names if STDLIB_SKIP.search(f"{Path(d).relative_to(stdlib).as_posix()}/{n}".lstrip("./"))])
    for name, requirement in SDISTS.items():
        with tarfile.open(_sdist(requirement)) as tar:
            tar.extractall(scratch / name, filter="data")
        (top,) = (scratch / name).iterdir()
        roots[name] = top
    return roots


def _rank(rows: list[dict], truth: str) -> int | None:
    for i, row in enumerate(rows, 1):
        if row.get("qualname") == truth:
            return i
    return None


def _relevant(case: Case, diagnostics) -> list:
    out = []
    for d in diagnostics:
        if d.symbol not in case.expected_symbols:
            continue
        if case.category == "missing-import":
            if case.first_line <= d.line <= case.last_line and any(
                    f"'{n.strip()}'" in d.message for n in re.split(r"[ ,]", case.original.split("import", 1)[1])):
                out.append(d)
        elif d.line == case.mutated_line:
            out.append(d)
    return out


def run_case(case: Case, root: Path, linter: Linter, retriever: Retriever) -> dict:
    path = root / case.path
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(case.text, encoding="utf-8")
        started = time.perf_counter()
        diagnostics = language("python").keep(linter.lint(path), case.first_line, case.last_line)
        lint_ms = (time.perf_counter() - started) * 1000
        relevant = _relevant(case, diagnostics)
        result = {**case.summary(), "detected": bool(relevant), "lint_ms": lint_ms,
                  "diagnostics": [(d.symbol, d.line, d.message) for d in diagnostics]}
        if not relevant:
            return result
        candidate = Candidate.from_file(path)
        started = time.perf_counter()
        both: list[Retrieval] = [retriever.retrieve(candidate, d) for d in relevant]
        retrieve_ms = (time.perf_counter() - started) * 1000
        rules_rows = [row for r in both if r.source == "rule" for row in r.rows]
        lexical_rows = []
        for d in relevant:
            line = candidate.lines[d.line - 1] if d.line <= len(candidate.lines) else ""
            _, rows = retriever.run_template("lexical", {"terms": query_terms(d.message, line) or ["x"]})
            lexical_rows += rows
        both_rows = [row for r in both for row in r.rows]
        context = render(both, budget_tokens=600 * len(both))
        result.update({
            "sources": [r.source for r in both],
            "rank_both": _rank(both_rows, case.ground_truth),
            "rank_rules": _rank(rules_rows, case.ground_truth),
            "rank_lexical": _rank(lexical_rows, case.ground_truth),
            "retrieve_ms": retrieve_ms,
            "context_tokens_per_diagnostic": estimate_tokens(context) / len(both),
            "top": [row.get("qualname") for row in both_rows[:5]],
        })
        return result
    finally:
        path.write_text(original, encoding="utf-8")


def _pct(values, q):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def summarise(results: list[dict]) -> dict:
    def block(rows: list[dict]) -> dict:
        detected = [r for r in rows if r["detected"]]
        out = {"cases": len(rows), "detected": len(detected),
               "detection_rate": round(len(detected) / len(rows), 3) if rows else None}
        for mode in ("both", "rules", "lexical"):
            ranks = [r.get(f"rank_{mode}") for r in detected]
            for k in (1, 5):
                hits = sum(1 for x in ranks if x is not None and x <= k)
                out[f"recall@{k}_{mode}"] = round(hits / len(detected), 3) if detected else None
        tokens = [r["context_tokens_per_diagnostic"] for r in detected]
        out["context_tokens_median"] = round(statistics.median(tokens)) if tokens else None
        retrieve = [r["retrieve_ms"] for r in detected]
        total = [r["retrieve_ms"] + r["lint_ms"] for r in detected]
        out["retrieve_ms_p50"] = round(_pct(retrieve, 50), 1) if retrieve else None
        out["retrieve_ms_p95"] = round(_pct(retrieve, 95), 1) if retrieve else None
        out["with_pylint_ms_p50"] = round(_pct(total, 50), 1) if total else None
        out["with_pylint_ms_p95"] = round(_pct(total, 95), 1) if total else None
        return out

    by_category = defaultdict(list)
    by_corpus = defaultdict(list)
    for r in results:
        by_category[r["category"]].append(r)
        by_corpus[r["corpus"]].append(r)
    return {"overall": block(results),
            "by_category": {k: block(v) for k, v in sorted(by_category.items())},
            "by_corpus": {k: block(v) for k, v in sorted(by_corpus.items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-category", type=int, default=30, help="cases per category in the stdlib")
    parser.add_argument("--per-category-sdist", type=int, default=8, help="cases per category per sdist")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "retrieval.json")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="codegraph-retrieval-"))
    results: list[dict] = []
    try:
        roots = prepare(scratch)
        linter = Linter(max_bytes=4_000_000)  # whole library files, not a model's answer
        for corpus, root in roots.items():
            report = index_repository(root)
            con = duckdb.connect(str(report.db_path), read_only=True)
            skip = STDLIB_SKIP if corpus == "stdlib" else SDIST_SKIP
            per = args.per_category if corpus == "stdlib" else args.per_category_sdist
            cases = Generator(con, root, corpus, seed=args.seed, exclude=skip).generate(per)
            con.close()
            print(f"{corpus}: {report.counts['files']} files indexed, {len(cases)} cases", flush=True)
            with Retriever(report.db_path) as retriever:
                for i, case in enumerate(cases, 1):
                    results.append(run_case(case, root, linter, retriever))
                    if i % 25 == 0:
                        print(f"  {i}/{len(cases)}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    summary = summarise(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "cases": results}, indent=1, default=str) + "\n")
    print(json.dumps(summary, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""Repair benchmark: real projects, their own tests, one injected hallucination per case.

    python -m benchmarks.repair_bench [--per-category 4] [--setup SETUP.json] [--model NAME --base-url URL]
                                      [--out benchmarks/results/repair.json]

Projects: pinned PyPI source distributions whose test suites pass offline (downloaded by pip into
benchmarks/.cache). Each project's own suite must pass before its cases count. A project that
needs more than pytest to test gets its extra packages from --setup, a JSON file the user
supplies ({"project": ["pip requirement", ...]}); no install recipe is kept here. Each case: the
hallucination (from hallucinations.py) is written into the project, the damaged function is
the task's starting_code, the tests are the project's test files that mention the function,
and `codegraph refine` runs (offline generator unless --model). Reported: the share of cases
that end lint-clean and test-passing, pass rate after each iteration, iterations, time, DIR.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.hallucinations import Generator
from benchmarks.retrieval_bench import SDIST_SKIP, _sdist
from codegraph.db import connect_readonly
from codegraph.indexer import index_repository
from codegraph.refine.loop import refine
from codegraph.refine.models import OpenAIChat
from codegraph.refine.offline import OfflineRepairer
from codegraph.refine.task import Limits, Task

PROJECTS = {
    "idna": "idna==3.7",
    "more-itertools": "more-itertools==10.3.0",
    "tabulate": "tabulate==0.9.0",
    "toolz": "toolz==0.12.1",
    "itsdangerous": "itsdangerous==2.2.0",
    "marshmallow": "marshmallow==3.21.3",
}
TEST_DIR = re.compile(r"(^|/)(tests?)(/|$)|(^|/)test_[^/]*\.py$")


def _extract(requirement: str, scratch: Path) -> Path:
    name = requirement.split("==")[0]
    with tarfile.open(_sdist(requirement)) as tar:
        tar.extractall(scratch / name, filter="data")
    (top,) = (scratch / name).iterdir()
    return top


def _pytest(root: Path, args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    env_path = str(root / "src") if (root / "src").is_dir() else str(root)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *args],
                          cwd=root, capture_output=True, text=True, timeout=timeout,
                          env={**__import__("os").environ, "PYTHONPATH": env_path})


def _test_files(root: Path) -> dict[str, str]:
    out = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if TEST_DIR.search(rel) and "conftest" not in rel:
            out[rel] = path.read_text(encoding="utf-8", errors="replace")
    return out


def _provided(con, function: str) -> set[str]:
    return {r[0] for r in con.execute(
        """SELECT DISTINCT resolved_callee FROM calls WHERE caller_qualname = $q
           AND resolution IN ('local', 'import', 'self', 'super')""", {"q": function}).fetchall()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-category", type=int, default=4)
    parser.add_argument("--setup", type=Path, help="JSON: project -> extra pip requirements for its tests")
    parser.add_argument("--model", help="an OpenAI-compatible model instead of the offline generator")
    parser.add_argument("--base-url")
    parser.add_argument("--api-key")
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "repair.json")
    args = parser.parse_args()
    setup = json.loads(args.setup.read_text()) if args.setup else {}
    results, projects = [], {}
    scratch = Path(tempfile.mkdtemp(prefix="codegraph-repair-"))
    try:
        for name, requirement in PROJECTS.items():
            root = _extract(requirement, scratch)
            if setup.get(name):
                subprocess.run([sys.executable, "-m", "pip", "install", "-q", *setup[name]], check=True)
            started = time.perf_counter()
            suite = _pytest(root, [])
            projects[name] = {"requirement": requirement, "suite_passes": suite.returncode == 0,
                              "suite_seconds": round(time.perf_counter() - started, 1),
                              "suite_tail": suite.stdout.strip().splitlines()[-1:] if suite.stdout else []}
            if suite.returncode != 0:
                print(f"{name}: its own test suite does not pass here, skipped ({projects[name]['suite_tail']})")
                continue
            report = index_repository(root, scratch / f"{name}.duckdb")
            con = connect_readonly(report.db_path)  # the same settings as the retriever's connection
            cases = Generator(con, root, name, seed=args.seed, exclude=SDIST_SKIP).generate(args.per_category)
            tests = _test_files(root)
            print(f"{name}: {report.counts['files']} files, {len(cases)} cases", flush=True)
            for case in cases:
                leaf = case.function.rpartition(".")[2]
                covering = sorted(p for p, text in tests.items() if re.search(rf"\b{re.escape(leaf)}\b", text))[:3]
                if not covering:  # a private helper: the tests of the module that holds it
                    module_leaf = case.module.rpartition(".")[2] or case.module
                    covering = sorted(p for p, text in tests.items()
                                      if re.search(rf"\b(import|from)\s+[\w.]*\b{re.escape(module_leaf)}\b", text))[:8]
                if not covering:
                    continue
                target = root / case.path
                original = target.read_text(encoding="utf-8")
                lines = case.text.split("\n")
                starting = textwrap.dedent("\n".join(lines[case.first_line - 1 : case.last_line])) + "\n"
                symbol = case.function[len(case.module) + 1 :]
                model = (OpenAIChat(args.model, args.base_url, args.api_key) if args.model else OfflineRepairer())
                try:
                    target.write_text(case.text, encoding="utf-8")
                    task = Task(root, case.path, symbol, f"Repair `{symbol}`.", covering, starting, "cocogen",
                                Limits(iterations=args.iterations, seconds=300, test_seconds=120))
                    run = refine(task, model, db_path=report.db_path)
                finally:
                    target.write_text(original, encoding="utf-8")
                provided = _provided(con, case.function)
                used = {q for q in provided if re.search(rf"\b{re.escape(q.rpartition('.')[2])}\b", run.code)}
                success_at = next((it.number for it in run.iterations if it.tests and it.tests["passed"]), None)
                results.append({**case.summary(), "tests": covering, "success": run.success,
                                "lint_clean": run.lint_clean, "tests_passed": run.tests_passed,
                                "iterations": len(run.iterations), "success_at": success_at,
                                "stop_reason": run.stop_reason, "seconds": round(run.seconds, 2),
                                "prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens,
                                "dir": round(len(used) / len(provided), 3) if provided else None,
                                "repairs": [r for it in run.iterations for r in it.repairs]})
                print(f"  {case.category:20} {symbol:40} {'ok' if run.success else 'FAIL'} {run.stop_reason}",
                      flush=True)
            con.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    summary = summarise(results, args.iterations)
    summary["projects"] = projects
    summary["model"] = args.model or "offline"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"summary": summary, "cases": results}, indent=1) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "projects"}, indent=2))
    print(f"wrote {args.out}")


def summarise(results: list[dict], iterations: int) -> dict:
    def block(rows):
        if not rows:
            return {"cases": 0}
        dirs = [r["dir"] for r in rows if r["dir"] is not None]
        return {
            "cases": len(rows),
            "pass@1": round(sum(r["success"] for r in rows) / len(rows), 3),
            "lint_clean_rate": round(sum(r["lint_clean"] for r in rows) / len(rows), 3),
            "pass_rate_after_iteration": [round(sum(1 for r in rows if r["success_at"] and r["success_at"] <= k)
                                                / len(rows), 3) for k in range(1, iterations + 1)],
            "iterations_mean": round(statistics.mean(r["iterations"] for r in rows), 2),
            "seconds_p50": round(statistics.median(r["seconds"] for r in rows), 2),
            "dir_mean": round(statistics.mean(dirs), 3) if dirs else None,
            "tokens": sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows),
        }

    by_category, by_project = defaultdict(list), defaultdict(list)
    for r in results:
        by_category[r["category"]].append(r)
        by_project[r["corpus"]].append(r)
    return {"overall": block(results), "by_category": {k: block(v) for k, v in sorted(by_category.items())},
            "by_project": {k: block(v) for k, v in sorted(by_project.items())}}


if __name__ == "__main__":
    main()

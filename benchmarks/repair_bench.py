"""Repair benchmark: real projects, their own tests, one injected hallucination per case.

    python -m benchmarks.repair_bench [--per-category 4] [--setup SETUP.json] [--mode cocogen]
        [--workers 2] [--model NAME --base-url URL [--samples N --temperature T]]

Projects: pinned PyPI source distributions whose test suites pass offline (downloaded by pip into
benchmarks/.cache). Each project's own suite must pass before its cases count. A project that
needs more than pytest to test gets its extra packages from --setup, a JSON file the user
supplies ({"project": ["pip requirement", ...]}); no install recipe is kept here. Each case: the
hallucination (from hallucinations.py) is written into the project, the damaged function is
the task's starting_code, the tests are the project's test files that mention the function,
and `codegraph refine` runs (offline generator unless --model). One results file per case under
benchmarks/results/repair/<run>/ (finished cases are skipped on a rerun); `python -m
benchmarks.report` turns them into the share that ends lint-clean and test-passing, pass rate
after each iteration, iterations, time, tokens and DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import textwrap
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.hallucinations import Case, Generator
from benchmarks.metrics import dependency_invocation_rate, reference_dependencies, sample_from_run
from benchmarks.retrieval_bench import SDIST_SKIP, _sdist
from benchmarks.runner import ResultStore, run_all
from codegraph.db import connect_readonly
from codegraph.indexer import index_repository

PROJECTS = {
    "idna": "idna==3.7",
    "more-itertools": "more-itertools==10.3.0",
    "tabulate": "tabulate==0.9.0",
    "toolz": "toolz==0.12.1",
    "itsdangerous": "itsdangerous==2.2.0",
    "marshmallow": "marshmallow==3.21.3",
}
TEST_DIR = re.compile(r"(^|/)(tests?)(/|$)|(^|/)test_[^/]*\.py$")
RESULTS = Path(__file__).parent / "results" / "repair"


def _extract(requirement: str, scratch: Path) -> Path:
    name = requirement.split("==")[0]
    with tarfile.open(_sdist(requirement)) as tar:
        tar.extractall(scratch / name, filter="data")
    (top,) = (scratch / name).iterdir()
    return top


def _pytest(root: Path, args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    env_path = str(root / "src") if (root / "src").is_dir() else str(root)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *args],
                          cwd=root, capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, "PYTHONPATH": env_path})


def _test_files(root: Path) -> dict[str, str]:
    out = {}
    for path in root.rglob("*.py"):
        rel = path.relative_to(root).as_posix()
        if TEST_DIR.search(rel) and "conftest" not in rel:
            out[rel] = path.read_text(encoding="utf-8", errors="replace")
    return out


def _covering_tests(case: Case, tests: dict[str, str]) -> list[str]:
    leaf = case.function.rpartition(".")[2]
    covering = sorted(p for p, text in tests.items() if re.search(rf"\b{re.escape(leaf)}\b", text))[:3]
    if not covering:  # a private helper: the tests of the module that holds it
        module_leaf = case.module.rpartition(".")[2] or case.module
        covering = sorted(p for p, text in tests.items()
                          if re.search(rf"\b(import|from)\s+[\w.]*\b{re.escape(module_leaf)}\b", text))[:8]
    return covering


def prepare(args, scratch: Path) -> tuple[dict, dict]:
    """Extract, test and index every project; write its cases. Returns (projects, case id -> project)."""
    setup = json.loads(args.setup.read_text()) if args.setup else {}
    projects, owners = {}, {}
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
        try:
            cases = Generator(con, root, name, seed=args.seed, exclude=SDIST_SKIP).generate(args.per_category)
        finally:
            con.close()
        tests = _test_files(root)
        kept = []
        for case in cases:
            covering = _covering_tests(case, tests)
            if covering:
                kept.append({**asdict(case), "tests": covering})
                owners[case.id] = name
        (scratch / f"{name}.cases.json").write_text(json.dumps(kept))
        projects[name].update(root=str(root), db=str(report.db_path), files=report.counts["files"], cases=len(kept))
        print(f"{name}: {report.counts['files']} files, {len(kept)} cases with covering tests", flush=True)
    return projects, owners


_WORKER_COPIES: dict[str, tuple[Path, dict[str, dict]]] = {}


def _project_copy(name: str, options: dict) -> tuple[Path, dict[str, dict]]:
    """This worker's own copy of a project (cases write into it) and the project's cases."""
    if name not in _WORKER_COPIES:
        project = options["projects"][name]
        root = Path(options["scratch"]) / f"{os.getpid()}-{name}"
        shutil.copytree(project["root"], root, symlinks=True)
        cases = {c["id"]: c for c in json.loads((Path(options["scratch"]) / f"{name}.cases.json").read_text())}
        _WORKER_COPIES[name] = (root, cases)
    return _WORKER_COPIES[name]


def case_work(case_id: str, options: dict) -> dict:
    from codegraph.refine.loop import refine
    from codegraph.llm import OpenAIChat
    from codegraph.refine.offline import OfflineRepairer
    from codegraph.refine.task import Limits, Task

    name = options["owners"][case_id]
    root, cases = _project_copy(name, options)
    data = cases[case_id]
    tests = data.pop("tests")
    case = Case(**{**data, "expected_symbols": tuple(data["expected_symbols"])})
    db_path = Path(options["projects"][name]["db"])
    target = root / case.path
    original = target.read_text(encoding="utf-8")
    lines = case.text.split("\n")
    starting = textwrap.dedent("\n".join(lines[case.first_line - 1 : case.last_line])) + "\n"
    symbol = case.function[len(case.module) + 1 :]
    provided = reference_dependencies(db_path, case.function)
    record = {**case.summary(), "task_id": case.id, "tests": tests, "run": options["run"], "samples": []}
    try:
        target.write_text(case.text, encoding="utf-8")
        for _ in range(options["run"]["samples"]):
            model = (OpenAIChat(options["run"]["model"], options["base_url"], options["api_key"],
                                temperature=options["run"]["temperature"])
                     if options["run"]["model"] else OfflineRepairer())
            task = Task(root, case.path, symbol, f"Repair `{symbol}`.", tests, starting, options["run"]["mode"],
                        Limits(iterations=options["run"]["iterations"], seconds=300, test_seconds=120))
            run = refine(task, model, db_path=db_path)
            record["samples"].append(sample_from_run(run, dir_=dependency_invocation_rate(provided, run.code)))
    finally:
        target.write_text(original, encoding="utf-8")
    return record


def _print(case_id: str, record: dict) -> None:
    if "error" in record:
        print(f"  {case_id}: ERROR {record['error']}", flush=True)
        return
    outcome = " ".join("ok" if s["success"] else f"FAIL ({s['stop_reason']})" for s in record["samples"])
    print(f"  {record['category']:20} {record['function']:50} {outcome}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-category", type=int, default=4)
    parser.add_argument("--setup", type=Path, help="JSON: project -> extra pip requirements for its tests")
    parser.add_argument("--mode", default="cocogen")
    parser.add_argument("--model", help="an OpenAI-compatible model instead of the offline generator")
    parser.add_argument("--base-url")
    parser.add_argument("--api-key")
    parser.add_argument("--samples", type=int, default=1, help="answers per case (pass@k needs k of them)")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rerun", action="store_true", help="rerun cases that already have results")
    parser.add_argument("--results", type=Path, help="default: benchmarks/results/repair/<model>-<mode>")
    args = parser.parse_args(argv)
    if args.samples > 1 and not args.model:
        parser.error("the offline generator is deterministic: --samples > 1 needs --model")
    run = {"model": args.model, "mode": args.mode, "samples": args.samples, "temperature": args.temperature,
           "iterations": args.iterations, "per_category": args.per_category, "seed": args.seed}
    name = re.sub(r"[^A-Za-z0-9._-]", "_", f"{args.model or 'offline'}-{args.mode}"
                  + (f"-n{args.samples}" if args.samples > 1 else "")
                  + (f"-pc{args.per_category}" if args.per_category != 4 else ""))
    store = ResultStore(args.results or RESULTS / name)
    scratch = Path(tempfile.mkdtemp(prefix="codegraph-repair-"))
    try:
        projects, owners = prepare(args, scratch)
        options = {"projects": projects, "owners": owners, "scratch": str(scratch), "run": run,
                   "base_url": args.base_url, "api_key": args.api_key}
        written = run_all(case_work, list(owners), store, options, workers=args.workers, rerun=args.rerun,
                          progress=_print)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    store.directory.mkdir(parents=True, exist_ok=True)
    (store.directory.parent / f"{name}.projects.json").write_text(json.dumps(
        {k: {f: v for f, v in p.items() if f not in ("root", "db")} for k, p in projects.items()}, indent=1) + "\n")
    print(f"{len(written)} case(s) run, {len(owners) - len(written)} already done; results in {store.directory}")


if __name__ == "__main__":
    main()

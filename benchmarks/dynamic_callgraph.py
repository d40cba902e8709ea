"""The static call graph against a dynamic oracle: the calls real test suites make.

    python -m benchmarks.dynamic_callgraph [--setup SETUP.json] [--baseline-python PY] [--out benchmarks/results/dynamic_callgraph.json]

Projects: the repair benchmark's pinned source distributions and click. Each project's own test
suite runs under a profiler (`sys.setprofile`, threads included: this Python has no
sys.monitoring) that records every call from a function of the project's code to another
function of it (test files excluded on both sides), named `module.co_qualname`; lambdas and
comprehensions count as their enclosing function, as in the graph. Nobody here chose these
edges: they are what ran. One kind is reported apart: a generator's (or coroutine's) body is
entered from whatever iterates it (`take(n, windowed(...))` shows up as take -> windowed), not
from the call that made it, so no call site in the code says it; `recall_with_generators` counts
them too. Reported per project: how many observed caller -> callee pairs the
graph has (recall on executed code), with this codegraph and, when --baseline-python names an
interpreter with an older codegraph, with that one indexing the same checkout in the same run;
and the graph's edges that the run did not observe (not errors: tests do not run everything).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from benchmarks.cost_bench import child_env
from benchmarks.repair_bench import PROJECTS, TEST_DIR, _extract
from codegraph.discover import discover
from codegraph.schema import PROJECT_RESOLUTIONS

REQUIREMENTS = {**PROJECTS, "click": "click==8.1.7"}
_OLD_RESOLUTIONS = ("local", "import", "self", "super")

# Runs inside the project's test process: record (caller file, caller qualname, callee file,
# callee qualname) for calls between files of interest, then hand over to pytest.
_TRACER = r'''
import json, os, sys, threading
import pytest

keep = set(json.loads(os.environ["CODEGRAPH_TRACE_FILES"]))
seen = set()

def _name(code):
    q = code.co_qualname
    for marker in (".<lambda>", ".<listcomp>", ".<dictcomp>", ".<setcomp>", ".<genexpr>", "<lambda>", "<listcomp>",
                   "<dictcomp>", "<setcomp>", "<genexpr>"):
        if marker in q:
            q = q.split(marker)[0]
            q = q[:-len(".<locals>")] if q.endswith(".<locals>") else q
    return q or "<module>"  # a lambda or comprehension at module level is the module's code

def profile(frame, event, arg):
    if event != "call":
        return
    callee = frame.f_code
    if callee.co_filename not in keep:
        return
    caller = frame.f_back
    if caller is None or caller.f_code.co_filename not in keep:
        return
    # a generator's or coroutine's body is entered by whoever iterates or awaits it, not by the
    # call that made it: flagged, so it is reported apart
    seen.add((caller.f_code.co_filename, _name(caller.f_code), callee.co_filename, _name(callee),
              bool(callee.co_flags & 0x3A0)))

threading.setprofile(profile)
sys.setprofile(profile)
try:
    code = pytest.main(sys.argv[2:])
finally:
    sys.setprofile(None)
    threading.setprofile(None)
    with open(sys.argv[1], "w") as fh:
        json.dump(sorted(seen), fh)
sys.exit(0)
'''

_STATIC = """
SELECT DISTINCT c.caller_qualname, c.resolved_callee FROM calls c JOIN files f USING (file_id)
WHERE list_contains($how, c.resolution) AND c.resolved_callee IN (
    SELECT qualname FROM members WHERE kind IN ('method', 'classmethod', 'staticmethod', 'property')
    UNION ALL SELECT qualname FROM globals WHERE kind = 'function'
    UNION ALL SELECT qualname FROM nested_functions)
"""


def source_files(root: Path) -> dict[str, str]:
    """Absolute path -> module of every project file that is not a test."""
    found = discover(root)
    return {str(Path(f.abspath).resolve()): f.module for f in found.files if not TEST_DIR.search(f.path)
            and "conftest" not in f.path}


def observe(root: Path, files: dict[str, str], scratch: Path) -> tuple[set, set]:
    """(caller, callee) pairs seen, and apart those whose callee is a generator or coroutine body
    (its caller is the code that iterates it, wherever the generator was made)."""
    out = scratch / f"{root.name}.trace.json"
    tracer = scratch / "codegraph_tracer.py"
    tracer.write_text(_TRACER)
    env_path = str(root / "src") if (root / "src").is_dir() else str(root)
    subprocess.run([sys.executable, str(tracer), str(out), "-q", "-p", "no:cacheprovider", "--no-header",
                    "-W", "ignore::pytest.PytestRemovedIn10Warning"],
                   cwd=root, capture_output=True, text=True, timeout=1800, check=False,
                   env={**os.environ, "PYTHONPATH": env_path, "CODEGRAPH_TRACE_FILES": json.dumps(sorted(files))})
    edges, resumed = set(), set()
    for caller_file, caller, callee_file, callee, generator in json.loads(out.read_text()):
        a = files[caller_file] if caller == "<module>" else f"{files[caller_file]}.{caller}"
        b = f"{files[callee_file]}.{callee}"
        if callee != "<module>" and a != b:
            (resumed if generator else edges).add((a, b))
    return edges, resumed - edges


def static_edges(db_path: Path, resolutions: tuple[str, ...]) -> set[tuple[str, str]]:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {(a, b) for a, b in con.execute(_STATIC, {"how": list(resolutions)}).fetchall()}
    finally:
        con.close()


def functions(db_path: Path) -> set[str]:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {r[0] for r in con.execute(_STATIC.split("IN (", 1)[1].rsplit(")", 1)[0]).fetchall()}
    finally:
        con.close()


def index_with(python: str, root: Path, db_path: Path) -> None:
    code = ("import sys; from codegraph.indexer import index_repository; "
            "index_repository(sys.argv[1], sys.argv[2], embed=False)")
    subprocess.run([python, "-c", code, str(root), str(db_path)], check=True, cwd=db_path.parent, env=child_env())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--setup", type=Path, help="JSON: project -> extra pip requirements for its tests")
    parser.add_argument("--baseline-python", help="an interpreter with the baseline codegraph installed")
    parser.add_argument("--out", default="benchmarks/results/dynamic_callgraph.json")
    args = parser.parse_args(argv)
    setup = json.loads(args.setup.read_text()) if args.setup else {}
    runs = {"current": (sys.executable, PROJECT_RESOLUTIONS)}
    if args.baseline_python:
        runs["baseline"] = (args.baseline_python, _OLD_RESOLUTIONS)
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "projects": {}}
    with tempfile.TemporaryDirectory(prefix="codegraph-dynamic-") as tmp:
        scratch = Path(tmp)
        for name, requirement in REQUIREMENTS.items():
            root = _extract(requirement, scratch)
            if setup.get(name):
                subprocess.run([sys.executable, "-m", "pip", "install", "-q", *setup[name]], check=True)
            files = source_files(root)
            observed, resumed = observe(root, files, scratch)
            project = {"requirement": requirement}
            for run, (python, resolutions) in runs.items():
                db_path = scratch / f"{name}-{run}.duckdb"
                index_with(python, root, db_path)
                if run == "current":  # calls of functions (class bodies and modules run when imported)
                    observed = {(a, b) for a, b in observed if b in functions(db_path)}
                    resumed = {(a, b) for a, b in resumed if b in functions(db_path)}
                    project["observed_edges"] = len(observed)
                    project["generator_edges"] = len(resumed)
                static = static_edges(db_path, resolutions)
                found = observed & static
                everything = observed | resumed
                project[run] = {"static_edges": len(static), "recall": round(len(found) / len(observed), 4)
                                if observed else None, "missed": sorted(map(list, observed - static))[:400],
                                "not_observed": len(static - everything),
                                "recall_with_generators": round(len(everything & static) / len(everything), 4)
                                if everything else None}
            results["projects"][name] = project
            print(name, len(observed), "observed;",
                  {run: project[run]["recall"] for run in runs}, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

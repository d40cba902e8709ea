"""The static call graph against a dynamic oracle: the calls real test suites make.

    python -m benchmarks.dynamic_callgraph [--projects PROJECTS.json] [--setup SETUP.json] [--baseline-python PY]
        [--traces RESULTS.json]
        [--out benchmarks/results/dynamic_callgraph.json]

Projects: the repair benchmark's pinned source distributions and click, or those a file names
(--projects: name -> {"requirement": "pkg==1.0", "install": [pip requirements its tests need],
"pytest_args": [...]}; --setup: name -> pip requirements, for the default set). Each project's own test
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
Each miss is put in a kind by what the caller's call sites say (`miss_kinds`): a call there names
the callee and is unresolved, or resolved to something else; or none names it, and then by the
callee: a special method an operation runs (by its protocol), a property, or anything else (a
callback, a registry, dispatch by a computed name).
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
    quiet = ["-W", "ignore::pytest.PytestRemovedIn10Warning"] if hasattr(pytest, "PytestRemovedIn10Warning") else []
    code = pytest.main(sys.argv[2:] + quiet)
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


def observe(root: Path, files: dict[str, str], scratch: Path, pytest_args: list[str] = ()) -> tuple[set, set]:
    """(caller, callee) pairs seen, and apart those whose callee is a generator or coroutine body
    (its caller is the code that iterates it, wherever the generator was made)."""
    out = scratch / f"{root.name}.trace.json"
    tracer = scratch / "codegraph_tracer.py"
    tracer.write_text(_TRACER)
    env_path = str(root / "src") if (root / "src").is_dir() else str(root)
    subprocess.run([sys.executable, str(tracer), str(out), "-q", "-p", "no:cacheprovider", "--no-header",
                    *pytest_args],
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


_SITES = """
SELECT callee_text, resolution, resolved_callee FROM calls
WHERE caller_qualname = $caller AND (callee_name = $name OR callee_text = $name OR callee_text LIKE '%.' || $name)
"""

# What Python runs with no name at the call site, by the special method's name (the language reference)
_IMPLICIT_GROUPS = (
    ("container protocol (x[k], len, in, iter)", {"__getitem__", "__setitem__", "__delitem__", "__len__", "__contains__",
                                                 "__iter__", "__next__", "__missing__", "__reversed__"}),
    ("equality, hashing, ordering, truth", {"__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__",
                                            "__bool__", "__nonzero__"}),
    ("text (str, repr, format)", {"__str__", "__repr__", "__format__", "__unicode__"}),
    ("construction of a class not named", {"__init__", "__new__", "__init_subclass__", "__post_init__"}),
    ("an instance called (__call__)", {"__call__"}),
    ("attribute protocol (__getattr__, __setattr__, descriptors)", {"__getattr__", "__setattr__", "__delattr__",
                                                                    "__getattribute__", "__get__", "__set__",
                                                                    "__delete__", "__set_name__"}),
    ("context managers", {"__enter__", "__exit__", "__aenter__", "__aexit__"}))
MISS_KINDS = (*(f"not named: {label}" for label, _ in _IMPLICIT_GROUPS), "not named: another special method",
              "not named: a property", "not named: a callback, registry or dispatch", "named, unresolved",
              "named, resolved elsewhere")


def miss_kind(con, caller: str, callee: str) -> str:
    """Why the graph lacks an observed edge, read off the caller's sites that name the callee,
    and for an edge no site names, off the callee: a special method Python runs for an
    operation, a property, or anything else (callbacks, registries, dispatch by name)."""
    name = callee.rpartition(".")[2]
    sites = con.execute(_SITES, {"caller": caller, "name": name}).fetchall()
    if sites:
        return MISS_KINDS[-2] if any(resolved is None for _, _, resolved in sites) else MISS_KINDS[-1]
    group = next((label for label, names in _IMPLICIT_GROUPS if name in names), None)
    if group is not None:
        return f"not named: {group}"
    if name.startswith("__") and name.endswith("__"):
        return "not named: another special method"
    kind = con.execute("SELECT kind FROM symbols WHERE qualname = ?", [callee]).fetchone()
    return "not named: a property" if kind and kind[0] == "property" else "not named: a callback, registry or dispatch"


def miss_kinds(db_path: Path, missed: set[tuple[str, str]]) -> dict[str, int]:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        counts = dict.fromkeys(MISS_KINDS, 0)
        for caller, callee in missed:
            counts[miss_kind(con, caller, callee)] += 1
        return counts
    finally:
        con.close()


def in_modules(edge: tuple[str, str], modules: set[str]) -> bool:
    """Are both ends of an edge defined in these modules (the project's code, not its tests)?"""
    def inside(qualname: str) -> bool:
        head = qualname
        while head:
            if head in modules:
                return True
            head = head.rpartition(".")[0]
        return False
    return inside(edge[0]) and inside(edge[1])


_HOW = "SELECT DISTINCT resolution FROM calls WHERE caller_qualname = ? AND resolved_callee = ?"


def sample_edges(db_path: Path, edges: set[tuple[str, str]], seed: str, k: int = 40) -> list[list]:
    """k edges drawn with a seed, each as [caller, callee, its resolutions]."""
    drawn = random.Random(seed).sample(sorted(edges), min(k, len(edges)))
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return [[a, b, sorted(r[0] for r in con.execute(_HOW, [a, b]).fetchall())] for a, b in drawn]
    finally:
        con.close()


def index_with(python: str, root: Path, db_path: Path) -> None:
    code = ("import sys; from codegraph.indexer import index_repository; "
            "index_repository(sys.argv[1], sys.argv[2], embed=False)")
    subprocess.run([python, "-c", code, str(root), str(db_path)], check=True, cwd=db_path.parent, env=child_env())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", type=Path, help="JSON: name -> {requirement, install, pytest_args}")
    parser.add_argument("--setup", type=Path, help="JSON: project -> extra pip requirements for its tests")
    parser.add_argument("--baseline-python", help="an interpreter with the baseline codegraph installed")
    parser.add_argument("--traces", type=Path,
                        help="a results file of this benchmark: score its stored observed edges against graphs of "
                             "this code instead of running the suites again (its projects unless --projects names "
                             "some; the generator edges are not stored, so recall_with_generators is not reported)")
    parser.add_argument("--out", default="benchmarks/results/dynamic_callgraph.json")
    args = parser.parse_args(argv)
    setup = json.loads(args.setup.read_text()) if args.setup else {}
    stored = json.loads(args.traces.read_text())["projects"] if args.traces else None
    projects = (json.loads(args.projects.read_text()) if args.projects else
                {name: {"requirement": p["requirement"]} for name, p in stored.items()} if stored else
                {name: {"requirement": r, "install": setup.get(name, [])} for name, r in REQUIREMENTS.items()})
    runs = {"current": (sys.executable, PROJECT_RESOLUTIONS)}
    if args.baseline_python:
        runs["baseline"] = (args.baseline_python, _OLD_RESOLUTIONS)
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "projects": {}}
    with tempfile.TemporaryDirectory(prefix="codegraph-dynamic-") as tmp:
        scratch = Path(tmp)
        for name, spec in projects.items():
            requirement = spec["requirement"]
            root = _extract(requirement, scratch)
            files = source_files(root)
            modules = set(files.values())
            if stored is not None:  # what ran then, scored against this code's graph
                if stored[name]["requirement"] != requirement:
                    parser.error(f"--traces: {name} was traced as {stored[name]['requirement']}, not {requirement}")
                observed, resumed = {tuple(edge) for edge in stored[name]["observed"]}, set()
            else:
                if spec.get("install"):
                    subprocess.run([sys.executable, "-m", "pip", "install", "-q", *spec["install"]], check=True)
                observed, resumed = observe(root, files, scratch, spec.get("pytest_args", []))
            project = {"requirement": requirement}
            for run, (python, resolutions) in runs.items():
                db_path = scratch / f"{name}-{run}.duckdb"
                index_with(python, root, db_path)
                if run == "current":  # calls of functions (class bodies and modules run when imported)
                    observed = {(a, b) for a, b in observed if b in functions(db_path)}
                    resumed = {(a, b) for a, b in resumed if b in functions(db_path)}
                    project["observed_edges"] = len(observed)
                    project["observed"] = sorted(map(list, observed))
                    project["generator_edges"] = len(resumed)
                static = static_edges(db_path, resolutions)
                found = observed & static
                everything = observed | resumed
                project[run] = {"static_edges": len(static), "recall": round(len(found) / len(observed), 4)
                                if observed else None, "missed": sorted(map(list, observed - static))[:400],
                                "not_observed": len(static - everything),
                                "miss_kinds": miss_kinds(db_path, observed - static) if run == "current" else None,
                                # for judging precision by hand: 40 edges the run did not observe, drawn
                                # with a seed, each with how the graph resolved it
                                "not_observed_sample": sample_edges(
                                    db_path, {e for e in static - everything if in_modules(e, modules)}, name)
                                if run == "current" else None,
                                "recall_with_generators": round(len(everything & static) / len(everything), 4)
                                if everything and stored is None else None}
            results["projects"][name] = project
            print(name, len(observed), "observed;",
                  {run: project[run]["recall"] for run in runs}, flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""What indexing costs, side by side with a baseline: a full index without embeddings (time and
peak memory) and one-file updates, each interpreter in turn, round after round, in one run.

    python -m benchmarks.cost_bench --baseline-python /tmp/venv-base/bin/python \
        [--repo PATH] [--update-sdist click==8.1.7 --update-file src/click/core.py] \
        [--rounds 2] [--updates 5] [--resolve-jobs 1] [--scale-edits] [--out benchmarks/results/cost.json]

Without --repo the full index is of the running Python's standard library. The baseline is any
interpreter with another codegraph installed (a commit's own venv: `pip install` of a checkout,
not editable). Each measurement runs in a fresh child process, with no library layer where the
build has one, so both sides index the same files; peak memory is the largest resident set of
the build's processes (the parent, its parsing workers, a forked resolver), as `/usr/bin/time`'s
%M reads it, and, on Linux, the largest sum of their proportional set sizes (what they hold
together, shared pages counted once), sampled every 0.2 s.
An update appends a function to one file of a copy of the sdist and re-indexes. With
--scale-edits, a copy of the full index's repository (the stdlib) is indexed once per side and
then edited as SCALE_EDITS say, an update after each: what an update costs where the graph is
large and an edit may reach far. The machines are noisy: compare the two sides of one run, not
runs of different days.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from benchmarks.repair_bench import _extract

# Works with any codegraph: `libraries` is passed only to a build that has it.
_PRELUDE = """
import inspect, json, os, resource, sys, time
from codegraph.indexer import index_repository
extra = {"libraries": False} if "libraries" in inspect.signature(index_repository).parameters else {}
"""
_FULL = _PRELUDE + """
import glob, threading

def processes(pid):
    out = [pid]
    for listed in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(listed) as fh:
                out += [p for child in fh.read().split() for p in processes(int(child))]
        except OSError:
            pass
    return out

def pss(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            return next((int(line.split()[1]) for line in fh if line.startswith("Pss:")), 0)
    except OSError:
        return 0

peak_total, done = [0], threading.Event()

def sample():
    peak_total[0] = max(peak_total[0], sum(pss(p) for p in processes(os.getpid())))

def sampling():
    sample()
    while not done.wait(0.2):
        sample()

sampler = threading.Thread(target=sampling, daemon=True)
if os.path.exists("/proc/self/smaps_rollup"):
    sampler.start()
repo, db, resolve_jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
if resolve_jobs > 1:
    extra["resolve_jobs"] = resolve_jobs
started = time.perf_counter()
report = index_repository(repo, db, embed=False, **extra)
seconds = time.perf_counter() - started
done.set()
if sampler.ident is not None:
    sampler.join()
    sample()
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": seconds, "peak_kib": peak, "peak_total_kib": peak_total[0] or None,
                  "timings": report.timings}))
"""
_UPDATES = _PRELUDE + """
repo, db, edited, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
index_repository(repo, db, embed=False, **extra)
seconds = []
for i in range(count):
    with open(os.path.join(repo, edited), "a", encoding="utf-8") as fh:
        fh.write(f"\\n\\ndef _cost_bench_added_{i}(x):\\n    return x + {i}\\n")
    started = time.perf_counter()
    report = index_repository(repo, db, embed=False, **extra)
    seconds.append(time.perf_counter() - started)
    assert report.mode == "update", report.mode
print(json.dumps({"seconds": seconds}))
"""
_SCALE = _PRELUDE + """
repo, db, edits = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
index_repository(repo, db, embed=False, **extra)
seconds, reresolved = {}, {}
for name, path, old, new in edits:
    with open(os.path.join(repo, path), encoding="utf-8") as fh:
        text = fh.read()
    with open(os.path.join(repo, path), "w", encoding="utf-8") as fh:
        fh.write(text + new if old is None else text.replace(old, new, 1))
    started = time.perf_counter()
    report = index_repository(repo, db, embed=False, **extra)
    seconds[name] = time.perf_counter() - started
    reresolved[name] = getattr(report, "reresolved", None)  # files beyond the edited one; older builds lack it
    assert report.mode == "update", report.mode
print(json.dumps({"seconds": seconds, "reresolved": reresolved}))
"""
# Edits of CPython 3.11's standard library, in order, each (name, path, text replaced or None to
# append, new text): how far each reaches differs. A function in a leaf module, or beside classes
# deriving from others, changes no class; a class with a base is a new definition; a comment, a
# local value (a number) and a comment in a method of the stdlib's most used class change nothing
# another function reads, an expression there what its calls pass on; a return statement and a signature change what a function says it returns (its callers', and their
# callers', values may change); a changed base changes what every call on an instance of that
# class or its subclasses may run.
SCALE_EDITS = (
    ("function in a leaf module", "colorsys.py", None, "\n\ndef _cost_bench_added(x):\n    return x\n"),
    ("function beside subclasses", "test/test_json/test_decode.py", None,
     "\n\ndef _cost_bench_added(x):\n    return x\n"),
    ("class with a base", "colorsys.py", None, "\n\nclass _CostBenchAdded(dict):\n    pass\n"),
    ("comment in a widely used module", "unittest/case.py", "class TestCase(object):\n",
     "class TestCase(object):  # the base of every test\n"),
    ("method body, its interface kept", "unittest/case.py", "                places = 7\n", "                places = 6\n"),
    ("comment in a method body", "unittest/case.py", "            # shortcut\n", "            # equal: almost equal too\n"),
    ("expression in a method body", "unittest/case.py", "        diff = abs(first - second)\n",
     "        diff = abs(second - first)\n"),
    ("return of a base class's method", "unittest/case.py",
     '        return doc.strip().split("\\n")[0].strip() if doc else None',
     '        return doc.strip().split("\\n")[0] if doc else None'),
    ("signature", "shutil.py", "def copyfile(src, dst, *, follow_symlinks=True):",
     "def copyfile(src, dst, *, follow_symlinks=True, length=0):"),
    ("changed base", "fractions.py", "class Fraction(numbers.Rational):", "class Fraction(numbers.Number):"),
)


def scale_edits(repo: Path) -> list[tuple]:
    """The SCALE_EDITS this repository can take (its files hold what they replace)."""
    out = []
    for name, path, old, new in SCALE_EDITS:
        file = repo / path
        if file.is_file() and (old is None or old in file.read_text(encoding="utf-8")):
            out.append((name, path, old, new))
    return out


def child_env() -> dict[str, str]:
    """The environment of a child that imports codegraph: without PYTHONPATH, which (as when
    running from a worktree) would shadow the child interpreter's own install."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _measure(python: str, script: str, args: list[str], cwd: Path) -> dict:
    done = subprocess.run([python, "-c", script, *args], cwd=cwd, env=child_env(), capture_output=True, text=True,
                          check=False)
    if done.returncode:
        raise SystemExit(f"{python} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def copy_tree(src: Path, dst: Path, *ignored: str) -> Path:
    """A fresh copy of src at dst, without bytecode, codegraph's own files and `ignored`."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", ".codegraph", *ignored))
    return dst


def run(sides: dict[str, str], repo: Path, sdist: Path | None, edited: str, rounds: int, updates: int,
        resolve_jobs: int = 1, edits: list[tuple] = ()) -> dict:
    results: dict = {side: {"full": [], "updates": [], "scale": []} for side in sides}
    with tempfile.TemporaryDirectory(prefix="codegraph-cost-") as tmp:
        scratch = Path(tmp)
        for _ in range(rounds):
            for side, python in sides.items():
                db_path = scratch / f"{side}.duckdb"
                db_path.unlink(missing_ok=True)
                jobs = str(resolve_jobs if side == "current" else 1)
                results[side]["full"].append(_measure(python, _FULL, [str(repo), str(db_path), jobs], scratch))
                if sdist is not None:
                    copy = copy_tree(sdist, scratch / f"{side}-update")
                    results[side]["updates"].append(_measure(
                        python, _UPDATES, [str(copy), str(scratch / f"{side}-update.duckdb"), edited, str(updates)],
                        scratch)["seconds"])
                if edits:
                    copy = copy_tree(repo, scratch / f"{side}-scale")
                    results[side]["scale"].append(_measure(
                        python, _SCALE, [str(copy), str(scratch / f"{side}-scale.duckdb"), json.dumps(edits)], scratch))
                    shutil.rmtree(copy)
    for side in sides:
        full = results[side]["full"]
        results[side]["full_median_s"] = statistics.median(r["seconds"] for r in full)
        results[side]["peak_kib"] = [min(r["peak_kib"] for r in full), max(r["peak_kib"] for r in full)]
        totals = [r["peak_total_kib"] for r in full if r.get("peak_total_kib")]
        results[side]["peak_total_kib"] = [min(totals), max(totals)] if totals else None
        results[side]["update_medians_s"] = [statistics.median(u) for u in results[side]["updates"]]
        results[side]["scale_s"] = {name: [r["seconds"][name] for r in results[side]["scale"]] for name, *_ in edits}
        results[side]["scale_reresolved"] = {name: [r["reresolved"][name] for r in results[side]["scale"]]
                                             for name, *_ in edits}
    if len(sides) == 2:
        base, now = (results[s]["full_median_s"] for s in sides)
        results["ratio_full"] = now / base
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline-python", help="an interpreter with the baseline codegraph installed")
    parser.add_argument("--repo", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--update-sdist", default="click==8.1.7", help="a pinned sdist from PyPI; '' for none")
    parser.add_argument("--update-file", default="src/click/core.py", help="the file of the sdist an update edits")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--updates", type=int, default=5)
    parser.add_argument("--resolve-jobs", type=int, default=1,
                        help="index_repository's resolve_jobs for the current side's full index (the same "
                             "interpreter as --baseline-python compares one process with forked copies)")
    parser.add_argument("--scale-edits", action="store_true",
                        help="also time updates of a copy of --repo edited as SCALE_EDITS say (the stdlib's files)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "cost.json")
    args = parser.parse_args(argv)
    if args.baseline_python and shutil.which(args.baseline_python) is None:
        parser.error(f"--baseline-python {args.baseline_python}: no such interpreter; give the python of a venv "
                     "with the baseline codegraph installed")
    sides = {"baseline": args.baseline_python} if args.baseline_python else {}
    sides["current"] = sys.executable
    with tempfile.TemporaryDirectory(prefix="codegraph-sdist-") as tmp:
        sdist = _extract(args.update_sdist, Path(tmp)) if args.update_sdist else None
        edits = scale_edits(args.repo.resolve()) if args.scale_edits else []
        if args.scale_edits and not edits:
            parser.error(f"--scale-edits: {args.repo} holds none of the files SCALE_EDITS edit (CPython 3.11's stdlib)")
        results = run(sides, args.repo.resolve(), sdist, args.update_file, args.rounds, args.updates, args.resolve_jobs,
                      edits)
    results = {"measured": time.strftime("%Y-%m-%d"), "repo": str(args.repo), "resolve_jobs": args.resolve_jobs,
               "update_sdist": args.update_sdist,
               "update_file": args.update_file, **results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    for side in sides:
        r = results[side]
        fulls = ", ".join(f"{x['seconds']:.1f}" for x in r["full"])
        medians = ", ".join(f"{m:.3f}" for m in r["update_medians_s"])
        total = f" (all processes: {r['peak_total_kib'][0]:,}-{r['peak_total_kib'][1]:,} KiB)" if r["peak_total_kib"] else ""
        print(f"{side:9} full: {fulls} s (median {r['full_median_s']:.1f}), "
              f"peak {r['peak_kib'][0]:,}-{r['peak_kib'][1]:,} KiB{total}; update medians: {medians} s")
        for name, seconds in r["scale_s"].items():
            files = ", ".join(str(n) for n in r["scale_reresolved"][name])
            print(f"{'':9} update at scale, {name}: {', '.join(f'{x:.2f}' for x in seconds)} s "
                  f"(other files re-resolved: {files})")
    if "ratio_full" in results:
        print(f"full index: {results['ratio_full']:.2f}x the baseline")


if __name__ == "__main__":
    main()

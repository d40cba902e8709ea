"""Full builds with the default `-j` and with `-j 1`, for one or more codegraph checkouts, side by
side: wall time and the CPU of the whole process tree, round after round, in one run.

    python -m benchmarks.jobs_bench REPO --side main=/path/to/checkout --side new=/path/to/other \
        [--no-embed] [--no-libraries] [--rounds 3] [--out benchmarks/results/jobs.json]

Each side is a folder put first on PYTHONPATH (a checkout or a worktree of codegraph). Each build
runs in a fresh child process. Parsing workers come from a forkserver, so they are not the
child's children: this process makes itself a subreaper (prctl PR_SET_CHILD_SUBREAPER), reaps
whatever the build leaves behind, and reads the CPU of every process of the tree from
RUSAGE_CHILDREN. Linux only.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .sides import side_by_side_parser, sides_of

_PR_SET_CHILD_SUBREAPER = 36
_BUILD = """
import json, sys
from codegraph.indexer import index_repository
report = index_repository(sys.argv[1], sys.argv[2], full=True, **json.loads(sys.argv[3]))
print(json.dumps({"parsed": report.parsed, "library_files": report.library_files,
                  "library_parsed": getattr(report, "library_parsed", None),
                  "library_resolved": getattr(report, "library_resolved", None)}))
"""


def _reap(seconds: float = 3.0) -> None:
    """Wait for the orphans (the forkserver, its workers) this subreaper inherited."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.02)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(repo: str, path: str, options: dict, scratch: Path, env: dict[str, str] | None = None) -> dict:
    """One full build in a child process with `path` first on PYTHONPATH (and env's variables):
    its wall time and the CPU of its whole process tree."""
    db = scratch / "graph.duckdb"
    for leftover in scratch.glob("graph.duckdb*"):
        leftover.unlink()
    before, started = _cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _BUILD, repo, str(db), json.dumps(options)], cwd=scratch,
                          env={**os.environ, **(env or {}), "PYTHONPATH": path}, capture_output=True, text=True)
    wall = time.perf_counter() - started
    _reap()
    if done.returncode:
        raise SystemExit(f"the build failed with {path} first on the path:\n{done.stderr[-3000:]}")
    return {"wall_s": round(wall, 3), "cpu_s": round(_cpu() - before, 3), **json.loads(done.stdout)}


def become_subreaper() -> None:
    """Orphaned workers (the forkserver's) come back to this process, so their CPU is counted."""
    if ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit("cannot become a subreaper: the workers' CPU would be missed")


def main() -> None:
    parser = side_by_side_parser(__doc__, "jobs.json")
    parser.add_argument("--no-embed", action="store_true")
    parser.add_argument("--no-libraries", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    become_subreaper()
    sides = sides_of(args)
    options = {"embed": not args.no_embed, "libraries": not args.no_libraries}
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="codegraph-jobs-") as scratch:
        for round_ in range(args.rounds):
            for name, path in sides.items():
                for jobs in (None, 1):
                    run = build(args.repo, path, {**options, **({"jobs": jobs} if jobs else {})}, Path(scratch))
                    runs.append({"round": round_, "side": name, "jobs": jobs or "default", **run})
                    print(json.dumps(runs[-1]), flush=True)
    summary = {}
    for name in sides:
        for jobs in ("default", 1):
            mine = [r for r in runs if r["side"] == name and r["jobs"] == jobs]
            summary[f"{name} -j {jobs}"] = {"wall_s": statistics.median(r["wall_s"] for r in mine),
                                           "cpu_s": statistics.median(r["cpu_s"] for r in mine)}
            print(f"{name:8} -j {str(jobs):8} wall {summary[f'{name} -j {jobs}']['wall_s']:6.2f} s   "
                  f"cpu {summary[f'{name} -j {jobs}']['cpu_s']:6.2f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"repo": args.repo, "options": options, "sides": sides, "summary": summary,
                                    "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()

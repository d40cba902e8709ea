"""What a short command costs from start to exit: `codegraph --version` and `codegraph sql` of a
4 ms query, for one or more codegraph checkouts, alternating, in one run.

    python -m benchmarks.startup_bench REPO --side main=/path/to/checkout --side new=/path/to/other \
        [--runs 9] [--out benchmarks/results/startup.json]

Each side is a folder put first on PYTHONPATH; each indexes REPO once (no embeddings, no library
layer) into a scratch database of its own schema, then every run is a fresh process that runs the
side's `codegraph` command as installing it would (its pyproject.toml's [project.scripts] entry),
timed from start to exit.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

from .sides import side_by_side_parser, sides_of

QUERY = "SELECT count(*) FROM calls"


def command(path: str) -> str:
    """What the side's installed `codegraph` script runs, as `python -c` code."""
    with open(Path(path) / "pyproject.toml", "rb") as fh:
        module, _, function = tomllib.load(fh)["project"]["scripts"]["codegraph"].partition(":")
    return f"import sys; from {module} import {function}; sys.exit({function}())"


def timed(args: list[str], path: str) -> float:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", command(path), *args], env={**os.environ, "PYTHONPATH": path},
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"codegraph {' '.join(args)} failed with {path}: {done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = side_by_side_parser(__doc__, "startup.json")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    sides = sides_of(args)
    times: dict[str, dict[str, list[float]]] = {name: {"version": [], "sql": []} for name in sides}
    with tempfile.TemporaryDirectory(prefix="codegraph-startup-") as scratch:
        for name, path in sides.items():
            timed(["index", args.repo, "--db", f"{scratch}/{name}.duckdb", "--no-embed", "--no-libraries", "-q"], path)
        for _ in range(args.runs):
            for name, path in sides.items():
                times[name]["version"].append(timed(["--version"], path))
                times[name]["sql"].append(timed(["sql", "--db", f"{scratch}/{name}.duckdb", QUERY], path))
    summary = {name: {what: round(statistics.median(values), 3) for what, values in mine.items()}
               for name, mine in times.items()}
    for name, medians in summary.items():
        print(f"{name:8} --version p50 {medians['version']:.3f} s   sql p50 {medians['sql']:.3f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"repo": args.repo, "query": QUERY, "sides": sides, "summary": summary,
                                    "times": times}, indent=1) + "\n")


if __name__ == "__main__":
    main()

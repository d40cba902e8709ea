"""What refine's fence costs a test run: `python -c pass` through run_fenced at each isolation
level this machine offers, against the same command run bare, alternating, medians.

    python -m benchmarks.fence_bench [--rounds 6] [--out benchmarks/results/fence.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codegraph.refine.sandbox import LEVELS, available, run_fenced


def _bare(folder: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], cwd=folder, check=True)
    return time.perf_counter() - started


def _fenced(folder: Path, level: str) -> float:
    started = time.perf_counter()
    result = run_fenced([sys.executable, "-c", "pass"], cwd=folder, run_dir=folder, env={}, timeout_s=60,
                        memory_mb=1024, disk_mb=100, level=level)
    if result.returncode != 0:
        raise SystemExit(f"the fenced run failed at {level}: {result.output[-400:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--out", default="benchmarks/results/fence.json")
    args = parser.parse_args()
    levels = [level for level in LEVELS if available(level)]
    samples: dict[str, list[float]] = {"bare": [], **{level: [] for level in levels}}
    for _ in range(args.rounds):
        for name in samples:
            with tempfile.TemporaryDirectory() as scratch:
                samples[name].append(_bare(Path(scratch)) if name == "bare" else _fenced(Path(scratch), name))
    result = {"measured": time.strftime("%Y-%m-%d"), "rounds": args.rounds,
              "median_ms": {name: round(statistics.median(times) * 1000, 1) for name, times in samples.items()}}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["median_ms"]))


if __name__ == "__main__":
    main()

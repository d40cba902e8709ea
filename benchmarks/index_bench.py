"""Indexing benchmark: codegraph index against tree-sitter parsing alone, side by side.

    python -m benchmarks.index_bench [--repo PATH] [--rounds 3] [--out benchmarks/results/index.json]

Without --repo it indexes the standard library of the running Python. The repository is
copied to a scratch folder first (the benchmark edits a file there), then each round times,
in the same process and back to back: tree-sitter parsing alone of the discovered files on
one core, a full `codegraph index` (both cores), a no-op re-index, a full index without
embeddings (--no-embed), a re-index after a body-only edit of one file, and after an edit that adds a name to one file. Peak memory is
read from a separate run in a fresh child process. Medians are reported; the machine is noisy.
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

from codegraph.discover import discover
from codegraph.languages.python.extract import parse_only
from codegraph.indexer import index_repository

_PEAK = """
import resource, sys
from codegraph.indexer import index_repository
index_repository(sys.argv[1], sys.argv[2], full=True)
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(me, kids)
"""


def _copy_repo(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, symlinks=True,
                    ignore=shutil.ignore_patterns("site-packages", "__pycache__", ".codegraph"))


def _parse_only_seconds(root: Path) -> tuple[float, int, int]:
    files = discover(root).files
    blobs = []
    for f in files:
        with open(f.abspath, "rb") as fh:
            blobs.append(fh.read())
    started = time.perf_counter()
    for blob in blobs:
        parse_only(blob)
    elapsed = time.perf_counter() - started
    return elapsed, len(files), sum(b.count(b"\n") for b in blobs)


def _pick_file(root: Path) -> Path:
    """A mid-sized module that other modules import (the realistic edit)."""
    for candidate in ("textwrap.py", "json/decoder.py"):
        if (root / candidate).is_file():
            return root / candidate
    files = sorted(discover(root).files, key=lambda f: f.size)
    return Path(files[len(files) // 2].abspath)


def run(repo: Path, rounds: int) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="codegraph-bench-"))
    try:
        root = scratch / "repo"
        _copy_repo(repo, root)
        db_path = scratch / "graph.duckdb"
        edited = _pick_file(root)
        original = edited.read_text(encoding="utf-8")
        samples: dict[str, list[float]] = {k: [] for k in (
            "parse_only_s", "index_s", "index_no_embed_s", "noop_reindex_s", "one_file_body_edit_s", "one_file_new_name_s")}
        files = lines = 0
        report = None
        for i in range(rounds):
            parse_s, files, lines = _parse_only_seconds(root)
            samples["parse_only_s"].append(parse_s)
            plain = index_repository(root, scratch / "plain.duckdb", full=True, embed=False)
            samples["index_no_embed_s"].append(plain.elapsed_s)
            report = index_repository(root, db_path, full=True)
            samples["index_s"].append(report.elapsed_s)
            samples["noop_reindex_s"].append(index_repository(root, db_path).elapsed_s)
            edited.write_text(original + f"\n# edit {i}\n", encoding="utf-8")
            samples["one_file_body_edit_s"].append(index_repository(root, db_path).elapsed_s)
            edited.write_text(original + f"\n\ndef _bench_added_{i}():\n    return {i}\n", encoding="utf-8")
            samples["one_file_new_name_s"].append(index_repository(root, db_path).elapsed_s)
            edited.write_text(original, encoding="utf-8")
        peak = subprocess.run([sys.executable, "-c", _PEAK, str(root), str(scratch / "peak.duckdb")],
                              capture_output=True, text=True, check=True).stdout.split()
        med = {k: statistics.median(v) for k, v in samples.items()}
        return {
            "repo": str(repo),
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "rounds": rounds,
            "files": files,
            "lines": lines,
            "skipped": len(report.skipped),
            "rows": report.counts,
            "db_size_mb": round(db_path.stat().st_size / 1e6, 1),
            "edited_file": str(edited.relative_to(root)),
            **{k: round(v, 3) for k, v in med.items()},
            "samples": {k: [round(x, 3) for x in v] for k, v in samples.items()},
            "index_files_per_s": round(files / med["index_s"]),
            "index_kloc_per_s": round(lines / 1000 / med["index_s"], 1),
            "parse_only_kloc_per_s": round(lines / 1000 / med["parse_only_s"], 1),
            "ratio_index_to_parse_only": round(med["index_s"] / med["parse_only_s"], 2),
            "ratio_index_no_embed_to_parse_only": round(med["index_no_embed_s"] / med["parse_only_s"], 2),
            "peak_rss_main_mb": round(int(peak[0]) / 1024),
            "peak_rss_worker_mb": round(int(peak[1]) / 1024),
            "timings_last_full_index": {k: round(v, 3) for k, v in report.timings.items()},
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "index.json")
    args = parser.parse_args()
    result = run(args.repo, args.rounds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for key, value in result.items():
        if key not in ("samples", "rows"):
            print(f"{key:28} {value}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

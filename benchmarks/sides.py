"""What the side-by-side benchmarks share: the repository they measure, one `--side NAME=PATH` per
codegraph checkout (put first on the measured process's PYTHONPATH), and where the results go."""

from __future__ import annotations

import argparse
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def side_by_side_parser(doc: str, results: str, repo_type: type = str) -> argparse.ArgumentParser:
    """The parser of a benchmark whose module docstring is `doc`, writing benchmarks/results/<results>
    by default; the caller adds its own options."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("repo", type=repo_type)
    parser.add_argument("--side", action="append", required=True, metavar="NAME=PATH")
    parser.add_argument("--out", type=Path, default=RESULTS / results)
    return parser


def sides_of(args: argparse.Namespace) -> dict[str, str]:
    """name -> checkout, in the order given."""
    return dict(side.split("=", 1) for side in args.side)

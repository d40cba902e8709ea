"""The library layer's cost (issue 28, row 2): full builds of one repository with the defaults
(embeddings, the library layer) against the floor `--no-embed --no-libraries`, once the
environment's library cache exists, and the cache's first build apart; for one or more codegraph
checkouts side by side, round after round, in one run. CPU is the whole process tree's
(jobs_bench's subreaper).

    python -m benchmarks.library_bench REPO --side main=/path/to/checkout [--side new=...] \
        [--rounds 3] [--out benchmarks/results/library.json]

Each side has a cache folder of its own ($CODEGRAPH_CACHE), filled by its first build; every
round also makes a first build into an empty folder. Goal: defaults with the cache ≤ 1.5x the
floor's CPU.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path

from .jobs_bench import become_subreaper, build
from .sides import side_by_side_parser, sides_of

MODES = {  # name -> (index options, which cache: none, the side's warm one, a fresh one)
    "floor (--no-embed --no-libraries)": ({"embed": False, "libraries": False}, "off"),
    "defaults, cache's first build": ({}, "fresh"),
    "defaults, with the cache": ({}, "warm"),
    "--no-embed, with the cache": ({"embed": False}, "warm"),
}


def main() -> None:
    parser = side_by_side_parser(__doc__, "library.json")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    become_subreaper()
    sides = sides_of(args)
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="codegraph-library-") as scratch:
        root = Path(scratch)
        for name, path in sides.items():  # each side's cache, warm before the first round
            build(args.repo, path, {}, root, {"CODEGRAPH_CACHE": str(root / f"cache-{name}")})
        for round_ in range(args.rounds):
            for name, path in sides.items():
                for mode, (options, cache) in MODES.items():
                    folder = {"off": "off", "warm": str(root / f"cache-{name}"),
                              "fresh": str(root / f"fresh-{name}-{round_}")}[cache]
                    run = build(args.repo, path, options, root, {"CODEGRAPH_CACHE": folder})
                    runs.append({"round": round_, "side": name, "mode": mode, **run})
                    print(json.dumps(runs[-1]), flush=True)
    summary: dict[str, dict] = {}
    for name in sides:
        mine = {mode: [r for r in runs if r["side"] == name and r["mode"] == mode] for mode in MODES}
        medians = {mode: {"wall_s": statistics.median(r["wall_s"] for r in rs),
                          "cpu_s": statistics.median(r["cpu_s"] for r in rs)} for mode, rs in mine.items()}
        floor = medians[next(iter(MODES))]["cpu_s"]
        for mode, m in medians.items():
            m["cpu_x_floor"] = round(m["cpu_s"] / floor, 2)
            print(f"{name:8} {mode:36} wall {m['wall_s']:6.2f} s   cpu {m['cpu_s']:6.2f} s   {m['cpu_x_floor']:.2f}x floor")
        summary[name] = medians
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"repo": args.repo, "sides": sides, "summary": summary, "runs": runs},
                                   indent=1) + "\n")


if __name__ == "__main__":
    main()

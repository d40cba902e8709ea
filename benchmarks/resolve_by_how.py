"""Where a full build's call resolution spends its time, by the kind of answer a site gets:
every top-level Resolver.resolve_call (a call's first answer) and resolve_call_all (all its
answers) is timed and grouped by the answer's `how` (None: unresolved).

    python -m benchmarks.resolve_by_how REPO [--top 24]

One process (jobs=1), no embeddings, no library layer; the timing adds about 10 % to each call.
What it says is a share, not a speed: compare kinds within one run.
"""

from __future__ import annotations

import argparse
import collections
import tempfile
import time
from pathlib import Path

from codegraph.indexer import index_repository
from codegraph.languages.python import resolve

_STATS: dict[tuple[str, str | None], list] = collections.defaultdict(lambda: [0, 0.0])
_DEPTH = [0]


def _timed(name: str, how_of) -> None:
    real = getattr(resolve.Resolver, name)

    def timed(self, *args, **kwargs):
        if _DEPTH[0]:  # a call inside another: counted in the outer one
            return real(self, *args, **kwargs)
        _DEPTH[0] += 1
        started = time.perf_counter()
        try:
            answer = real(self, *args, **kwargs)
        finally:
            _DEPTH[0] -= 1
        entry = _STATS[(name, how_of(answer))]
        entry[0] += 1
        entry[1] += time.perf_counter() - started
        return answer

    setattr(resolve.Resolver, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--top", type=int, default=24)
    args = parser.parse_args()
    _timed("resolve_call", lambda answer: answer[1] if answer else None)
    _timed("resolve_call_all", lambda answers: answers[0][1] if answers else None)
    with tempfile.TemporaryDirectory(prefix="codegraph-by-how-") as scratch:
        started = time.perf_counter()
        report = index_repository(args.repo, Path(scratch) / "graph.duckdb", full=True, jobs=1, embed=False,
                                  libraries=False)
        print(f"build {time.perf_counter() - started:.1f} s; phases " +
              ", ".join(f"{k} {v:.1f} s" for k, v in report.timings.items()))
    total = sum(seconds for _, seconds in _STATS.values()) or 1.0
    print(f"call resolution timed: {total:.2f} s")
    for (name, how), (count, seconds) in sorted(_STATS.items(), key=lambda kv: -kv[1][1])[: args.top]:
        print(f"{name:18} {str(how):10} {count:8} sites {seconds:7.2f} s {100 * seconds / total:5.1f} % "
              f"{1e6 * seconds / count:7.1f} us a site")


if __name__ == "__main__":
    main()

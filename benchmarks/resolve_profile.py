"""Where a full build's call resolution spends its time, by the kind of answer: each top-level
question the build asks the resolver (resolve_call, resolve_call_all, resolve_implicit) timed on
its own, grouped by whether it found a definition, the shape of the callee text and how it was
answered. What a redesign of resolution (issue 28, row 1) must start from.

    python -m benchmarks.resolve_profile REPO [--top 30] [--out benchmarks/results/resolve_profile.json]

One process (`resolve_jobs` 1), no embeddings, no library layer; the timer costs about 1 µs a
question. "Plain" answers are those a join over the extracted tables gives without flows or
types: the caller's own class along the MRO (`self.f()`), a module-level name, an import, a
builtin named directly.
"""

from __future__ import annotations

import argparse
import collections
import json
import tempfile
import time
from pathlib import Path

from codegraph.indexer import index_repository
from codegraph.languages.python.resolve import Resolver

_QUESTIONS = ("resolve_call", "resolve_call_all", "resolve_implicit")
_PLAIN = {"self", "local", "import", "builtin"}


def shape(text: str) -> str:
    """`bare`, `self+N` (self or cls and N attributes), `name+N`, `super`, or `call-result`."""
    if "(" in text:
        return "super" if text.startswith("super(") else "call-result"
    parts = text.split(".")
    if len(parts) == 1:
        return "bare"
    return f"{'self' if parts[0] in ('self', 'cls') else 'name'}+{len(parts) - 1}"


class Timing:
    """Wraps the resolver's top-level questions (a question asked inside another is its cost)."""

    def __init__(self) -> None:
        self.groups: dict[tuple, list] = collections.defaultdict(lambda: [0, 0.0])
        self.depth = 0
        self.originals = {name: getattr(Resolver, name) for name in _QUESTIONS}

    def install(self) -> None:
        for name, original in self.originals.items():
            setattr(Resolver, name, self._timed(name, original))

    def remove(self) -> None:
        for name, original in self.originals.items():
            setattr(Resolver, name, original)

    def _timed(self, name, original):
        def run(resolver, text, module, caller, *args, **kwargs):
            if self.depth:
                return original(resolver, text, module, caller, *args, **kwargs)
            self.depth += 1
            started = time.perf_counter()
            try:
                answer = original(resolver, text, module, caller, *args, **kwargs)
            finally:
                self.depth -= 1
            seconds = time.perf_counter() - started
            answers = [answer] if name == "resolve_call" else (answer or [])
            found = any(target is not None for target, _ in answers)
            how = ",".join(sorted({h or "-" for _, h in answers})) or "-"
            group = self.groups[(name, "found" if found else "none", shape(text), how)]
            group[0] += 1
            group[1] += seconds
            return answer
        return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "resolve_profile.json")
    args = parser.parse_args()
    timing = Timing()
    timing.install()
    try:
        with tempfile.TemporaryDirectory(prefix="codegraph-profile-") as scratch:
            started = time.perf_counter()
            report = index_repository(args.repo, Path(scratch) / "graph.duckdb", full=True, embed=False,
                                      libraries=False, resolve_jobs=1)
            seconds = time.perf_counter() - started
    finally:
        timing.remove()
    rows = sorted(({"question": q, "found": f, "shape": s, "how": h, "count": n, "seconds": t}
                   for (q, f, s, h), (n, t) in timing.groups.items()), key=lambda r: -r["seconds"])
    total = sum(r["seconds"] for r in rows)
    by = collections.Counter()
    for r in rows:
        by[f"{r['question']} {r['found']}"] += r["seconds"]
    plain = sum(r["seconds"] for r in rows if r["found"] == "found" and set(r["how"].split(",")) <= _PLAIN
                and r["question"] != "resolve_implicit")
    for r in rows:
        r["seconds"] = round(r["seconds"], 4)
    summary = {"build_s": round(seconds, 2), "timings": {k: round(v, 2) for k, v in report.timings.items()},
               "questions_s": round(total, 6), "by_question": {k: round(v, 2) for k, v in by.most_common()},
               "plain_answers_s": round(plain, 6), "plain_share": round(plain / total, 3) if total else None}
    print(json.dumps(summary, indent=1))
    for r in rows[:args.top]:
        print(f"{r['seconds']:7.2f} s {r['count']:8d} {r['seconds'] / r['count'] * 1e6:7.1f} µs  "
              f"{r['question']:17} {r['found']:5} {r['shape']:11} {r['how']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"repo": str(args.repo), "measured": time.strftime("%Y-%m-%d"),
                                    "summary": summary, "groups": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

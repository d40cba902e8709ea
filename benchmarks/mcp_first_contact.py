"""First contact through MCP: `codegraph mcp` started on a repository that has no index yet, as an
agent starts it. Times, from the server's start: `initialize` answered, the first `index_status`
answered, the first `sql` answer (which waits for the index: the project's own layer, where the
server serves it first), and `index_status` no longer saying the library layer is being built.
Alternating sides, fresh copies.

    python -m benchmarks.mcp_first_contact REPO --side main=/path/to/checkout --side new=/path/to/other \
        [--rounds 3] [--no-libraries] [--cold-cache] [--out benchmarks/results/mcp_first_contact.json]

--cold-cache: every server starts with an empty library cache ($CODEGRAPH_CACHE), as in an
environment nothing was indexed in; else the sides' caches warm up in the first round.

Each side is a folder put first on the server's PYTHONPATH. Needs the `mcp` extra.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .sides import side_by_side_parser, sides_of


async def contact(repo: Path, path: str, libraries: bool, cache: Path | None = None) -> dict:
    args = ["-m", "codegraph.cli", "mcp", str(repo), *([] if libraries else ["--no-libraries"])]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(repo),
                                   env={**os.environ, "PYTHONPATH": path,
                                        **({"CODEGRAPH_CACHE": str(cache)} if cache else {})})
    out = {}
    started = time.perf_counter()
    with open(repo.parent / "server.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                out["initialize_s"] = time.perf_counter() - started
                status = await session.call_tool("index_status", {})
                out["index_status_s"] = time.perf_counter() - started
                out["status"] = "\n".join(c.text for c in status.content if hasattr(c, "text"))[:300]
                await session.call_tool("sql", {"query": "SELECT count(*) FROM calls"})
                out["first_sql_s"] = time.perf_counter() - started
                while True:  # until the library layer is in, where it came later
                    status = await session.call_tool("index_status", {})
                    said = json.loads("".join(c.text for c in status.content if hasattr(c, "text")))
                    if "library_layer" not in said:
                        break
                    if "being built" not in said["library_layer"]:
                        raise SystemExit(f"the library layer was not built: {said['library_layer']}")
                    await asyncio.sleep(0.2)
                out["library_in_s"] = time.perf_counter() - started
    return out


def main() -> None:
    parser = side_by_side_parser(__doc__, "mcp_first_contact.json", Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-libraries", action="store_true")
    parser.add_argument("--cold-cache", action="store_true")
    args = parser.parse_args()
    sides = sides_of(args)
    runs = []
    for round_ in range(args.rounds):
        for name, path in sides.items():
            with tempfile.TemporaryDirectory(prefix="codegraph-first-") as scratch:
                repo = Path(scratch) / args.repo.name
                shutil.copytree(args.repo, repo, ignore=shutil.ignore_patterns(".codegraph", "__pycache__"))
                cache = Path(scratch) / "cache" if args.cold_cache else None
                run = asyncio.run(contact(repo, path, not args.no_libraries, cache))
            runs.append({"round": round_, "side": name, **run})
            print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in runs[-1].items()
                              if k != "status"}), flush=True)
    summary = {name: {key: round(statistics.median(r[key] for r in runs if r["side"] == name), 3)
                      for key in ("initialize_s", "index_status_s", "first_sql_s", "library_in_s")} for name in sides}
    for name, medians in summary.items():
        print(f"{name:8} " + "   ".join(f"{k} {v:.2f}" for k, v in medians.items()))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"repo": str(args.repo), "sides": sides, "cold_cache": args.cold_cache,
                                    "summary": summary, "runs": runs},
                                   indent=1) + "\n")


if __name__ == "__main__":
    main()

"""`codegraph mcp` on the standard library: tool-call latency, the freshness check, edit to answer.

    python -m benchmarks.mcp_bench [--calls 40] [--out benchmarks/results/mcp.json]

A scratch copy of the running Python's standard library is indexed (without the library layer:
it is the library), then served by `codegraph mcp` in a subprocess and driven by the MCP SDK's
stdio client, as an agent would. Reported: warm latency p50/p95 per tool (the client's view,
protocol included); the freshness check with nothing changed (what `index_status` measures
inside the server); and the time from saving a file to the first answer that shows it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from codegraph.indexer import index_repository

CALLS = {
    "members": {"name": "logging.RootLogger"},
    "signature": {"name": "shutil.copyfile"},
    "callers": {"name": "json.decoder.JSONDecoder.raw_decode"},
    "sql": {"query": "SELECT name, kind, defined_in FROM members_of('collections.OrderedDict') LIMIT 20"},
    "search": {"query": "parse a url into its components"},
}


async def drive(repo: Path, calls: int) -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "codegraph.cli", "mcp", str(repo), "--no-libraries"], cwd=str(repo))
    out: dict = {"tools": {}}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for tool, args in CALLS.items():
                await session.call_tool(tool, args)  # warm: the query process, caches
                times = []
                for _ in range(calls):
                    started = time.perf_counter()
                    result = await session.call_tool(tool, args)
                    times.append((time.perf_counter() - started) * 1000)
                    assert not result.is_error, result.content
                times.sort()
                out["tools"][tool] = {"p50_ms": round(statistics.median(times), 1),
                                      "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1)}
            checks = []
            for _ in range(calls):
                result = await session.call_tool("index_status", {})
                checks.append(json.loads(result.content[0].text)["freshness_check_ms"])
            checks.sort()
            out["freshness_check_ms"] = {"p50": round(statistics.median(checks), 3),
                                         "p95": round(checks[int(0.95 * (len(checks) - 1))], 3)}
            delays = []
            for i in range(5):
                name = f"codegraph_bench_fresh_{i}"
                started = time.perf_counter()
                (repo / "textwrap.py").open("a").write(f"\n\ndef {name}():\n    return {i}\n")
                while True:
                    result = await session.call_tool("signature", {"name": name})
                    if not result.is_error:
                        break
                    if time.perf_counter() - started > 30:
                        raise RuntimeError("the edit never showed")
                delays.append((time.perf_counter() - started) * 1000)
            out["edit_to_answer_ms"] = {"median": round(statistics.median(delays), 1), "max": round(max(delays), 1),
                                        "all": [round(d, 1) for d in delays]}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--out", default="benchmarks/results/mcp.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="codegraph-mcp-") as tmp:
        repo = Path(tmp) / "stdlib"
        shutil.copytree(sysconfig.get_paths()["stdlib"], repo, ignore=shutil.ignore_patterns("__pycache__", "site-packages"))
        started = time.perf_counter()
        index_repository(repo, libraries=False)
        result = {"measured": time.strftime("%Y-%m-%d"), "index_s": round(time.perf_counter() - started, 1),
                  **asyncio.run(drive(repo, args.calls))}
    print(json.dumps(result, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

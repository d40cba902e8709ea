"""`codegraph mcp`: the server started as a subprocess and driven by the SDK's own stdio client."""

import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mcp")
from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

ROOT = Path(__file__).parent.parent
TOOLS = {"sql", "schema", "search", "context", "diagnose", "class_info", "signature", "members", "body", "imports_for",
         "relevant", "callers", "callees", "index_status"}


def _listing(repo: Path) -> dict[str, bytes]:
    return {p.relative_to(repo).as_posix(): p.read_bytes() for p in sorted(repo.rglob("*"))
            if p.is_file() and ".codegraph" not in p.parts}


async def _session(repo: Path, script):
    params = StdioServerParameters(command=sys.executable, args=["-m", "codegraph.cli", "mcp", str(repo), "--no-libraries"],
                                   cwd=str(repo))
    with open(repo.parent / "server.log", "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await script(session)


async def _call(session, tool, **args):
    result = await session.call_tool(tool, args)
    text = "\n".join(c.text for c in result.content if hasattr(c, "text"))
    return bool(result.is_error), text


@pytest.fixture
def shop(tmp_path):
    repo = tmp_path / "shop"
    shutil.copytree(ROOT / "examples" / "shop", repo)
    (repo / "shop" / "checkout.py").write_text(
        "from shop.models import Cart\nfrom shop.pricing import apply_discount\n\n\n"
        "def checkout(cart: Cart, rate: float) -> float:\n    cart.add(None)\n"
        "    return apply_discount(sum(i.price for i in cart.items), rate)\n")
    return repo


def test_every_tool_answers_on_the_example_and_nothing_but_codegraph_is_written(shop):
    before = _listing(shop)

    async def script(session):
        tools = (await session.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        for t in tools:
            assert t.description and t.input_schema["type"] == "object"
        out = {}
        out["members"] = await _call(session, "members", class_name="shop.models.Cart")
        out["sql"] = await _call(session, "sql", query="SELECT name FROM members_of('shop.models.Cart') ORDER BY name")
        out["schema"] = await _call(session, "schema")
        out["search"] = await _call(session, "search", query="apply a discount rate to a price")
        out["context"] = await _call(session, "context", description="Summarize a cart with its discounted total",
                                     file="shop/report.py", symbol="summarize")
        out["class_info"] = await _call(session, "class_info", name="Cart")
        out["signature"] = await _call(session, "signature", name="apply_discount")
        out["body"] = await _call(session, "body", qualname="shop.pricing.apply_discount")
        out["imports_for"] = await _call(session, "imports_for", name="Cart")
        out["relevant"] = await _call(session, "relevant", query="apply discount")
        out["callers"] = await _call(session, "callers", qualname="shop.pricing.apply_discount")
        out["callees"] = await _call(session, "callees", qualname="shop.checkout.checkout")
        out["diagnose"] = await _call(session, "diagnose", path="shop/report.py")
        out["index_status"] = await _call(session, "index_status")
        return out

    out = asyncio.run(_session(shop, script))
    assert not any(error for error, _ in out.values()), {k: v for k, v in out.items() if v[0]}
    assert '"name":"add"' in out["members"][1] and '"name":"add"' in out["sql"][1]
    assert "members_of" in out["schema"][1] and "calls" in out["schema"][1]
    assert "shop.pricing.apply_discount" in out["search"][1]
    assert "Cart" in out["context"][1]
    assert "shop.models.Cart" in out["class_info"][1] and "rate" in out["signature"][1]
    assert "def apply_discount" in out["body"][1] and "from shop.models import Cart" in out["imports_for"][1]
    assert "apply_discount" in out["relevant"][1] and "shop.checkout.checkout" in out["callers"][1]
    assert "shop.models.Cart.add" in out["callees"][1]  # through the parameter's annotation
    assert out["diagnose"][1].startswith("no errors") or "undefined" in out["diagnose"][1] or ":" in out["diagnose"][1]
    status = json.loads(out["index_status"][1])
    assert status["fresh"] and status["counts"]["classes"] >= 2
    assert _listing(shop) == before  # nothing written into the repository but .codegraph/


def test_errors_are_one_line_mcp_errors(shop):
    async def script(session):
        return [await _call(session, "sql", query="SELEC nonsense"),
                await _call(session, "sql", query="DROP TABLE classes"),
                await _call(session, "sql", query="COPY classes TO '/tmp/x.csv'"),
                await _call(session, "signature", name="no_such_thing_anywhere"),
                await _call(session, "members", class_name="no.such.Class"),
                await _call(session, "diagnose", path="../outside.py")]

    for error, text in asyncio.run(_session(shop, script)):
        assert error and "\n" not in text.strip() and "Traceback" not in text


def test_every_answer_reflects_the_disk(shop):
    """Edit, add and delete files between calls: each answer sees the change."""
    async def script(session):
        seen = []
        count = "SELECT count(*) AS n FROM globals WHERE kind = 'function'"
        seen.append(await _call(session, "sql", query=count))
        (shop / "shop" / "extra.py").write_text("def fresh_one():\n    return 1\n")
        time.sleep(0.2)
        seen.append(await _call(session, "sql", query=count))
        seen.append(await _call(session, "signature", name="fresh_one"))
        (shop / "shop" / "extra.py").write_text("def fresh_two(a, b):\n    return a\n")
        time.sleep(0.2)
        seen.append(await _call(session, "signature", name="fresh_two"))
        (shop / "shop" / "extra.py").unlink()
        time.sleep(0.2)
        seen.append(await _call(session, "sql", query=count))
        return seen

    first, added, sig_one, sig_two, removed = asyncio.run(_session(shop, script))
    n = lambda r: json.loads(r[1].splitlines()[0])["n"]  # noqa: E731
    assert n(added) == n(first) + 1 and n(removed) == n(first)
    assert not sig_one[0] and "fresh_one" in sig_one[1]
    assert not sig_two[0] and "(a, b)" in sig_two[1]


def test_readers_and_index_runs_alongside_the_server_never_hit_a_lock(shop):
    """For 30 s: the server answering, 4 readers (`codegraph sql`, `codegraph search`, the duckdb
    shell read-only, a second `codegraph sql`) and `codegraph index` after every edit, all at once.
    No lock error anywhere, and every count is the old state's or the new one's."""
    cli = [sys.executable, "-m", "codegraph.cli"]
    subprocess.run([*cli, "index", str(shop), "--no-libraries"], check=True, capture_output=True)
    db_file = shop / ".codegraph" / "graph.duckdb"
    shell = shutil.which("duckdb") or str(Path(sys.executable).parent / "duckdb")
    count = "SELECT count(*) AS n FROM globals WHERE starts_with(name, 'churn_')"

    def readers():
        return [[*cli, "sql", "--db", str(db_file), "--json", count],
                [*cli, "search", "--db", str(db_file), "-k", "3", "apply a discount"],
                *([[shell, "-readonly", "-json", str(db_file), "-c", count]] if Path(shell).exists() else []),
                [*cli, "sql", "--db", str(db_file), "--json", "SELECT count(*) AS n FROM classes"]]

    async def script(session):
        failures, counts = [], []
        stop = time.monotonic() + 30
        i = 0
        while time.monotonic() < stop:
            (shop / "shop" / f"churn_{i % 3}.py").write_text(f"def churn_{i}():\n    return {i}\n")
            procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for args in [[*cli, "index", str(shop), "--no-libraries"], *readers()]]
            error, text = await _call(session, "sql", query=count)
            (failures if error else counts).append(text)
            for p in procs:
                out, err = p.communicate(timeout=120)
                if p.returncode != 0 or "lock" in (out + err).lower():
                    failures.append((p.args[:4], err.strip()[-300:]))
                elif "churn_" in " ".join(map(str, p.args)):
                    counts.append(out)
            i += 1
        return failures, counts, i

    failures, counts, rounds = asyncio.run(_session(shop, script))
    assert rounds >= 3 and not failures, failures[:3]
    for text in counts:  # at most 3 churn files exist at any moment: 0..3 functions, never more
        numbers = [int(n) for n in __import__("re").findall(r'"n"\s*:\s*(\d+)', text)]
        assert numbers and all(0 <= n <= 3 for n in numbers), text


def test_the_fixture_repository_through_the_server(tmp_path):
    repo = tmp_path / "minirepo"
    shutil.copytree(ROOT / "tests" / "fixtures" / "minirepo", repo)
    before = _listing(repo)

    async def script(session):
        return {"callers": await _call(session, "callers", qualname="shop.models.Cart.add"),
                "members": await _call(session, "members", class_name="shop.models.Cart"),
                "imports_for": await _call(session, "imports_for", name="Cart"),
                "sql": await _call(session, "sql", query="SELECT count(*) AS n FROM bindings")}

    out = asyncio.run(_session(repo, script))
    assert not any(error for error, _ in out.values()), out
    assert '"caller_qualname":"run"' in out["callers"][1]  # `cart = Basket(...)`; cart.add(...) at module level
    assert '"name":"add"' in out["members"][1] and "shop" in out["imports_for"][1]
    assert json.loads(out["sql"][1])["n"] > 0
    assert _listing(repo) == before

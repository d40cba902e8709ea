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
         "callers", "callees", "index_status"}


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
def shop(example):
    repo = example
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
        out["members"] = await _call(session, "members", name="shop.models.Cart")
        out["sql"] = await _call(session, "sql", query="SELECT name FROM members_of('shop.models.Cart') ORDER BY name")
        out["schema"] = await _call(session, "schema")
        out["search"] = await _call(session, "search", query="apply a discount rate to a price")
        out["context"] = await _call(session, "context", description="Summarize a cart with its discounted total",
                                     file="shop/report.py", symbol="summarize")
        out["class_info"] = await _call(session, "class_info", name="Cart")
        out["signature"] = await _call(session, "signature", name="apply_discount")
        out["body"] = await _call(session, "body", name="shop.pricing.apply_discount")
        out["imports_for"] = await _call(session, "imports_for", name="Cart")
        out["callers"] = await _call(session, "callers", name="shop.pricing.apply_discount")
        out["callees"] = await _call(session, "callees", name="shop.checkout.checkout")
        out["diagnose"] = await _call(session, "diagnose", file="shop/report.py")
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
    assert "shop.checkout.checkout" in out["callers"][1]
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
                await _call(session, "members", name="no.such.Class"),
                await _call(session, "diagnose", file="../outside.py")]

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


@pytest.mark.slow
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
        return {"callers": await _call(session, "callers", name="shop.models.Cart.add"),
                "members": await _call(session, "members", name="shop.models.Cart"),
                "imports_for": await _call(session, "imports_for", name="Cart"),
                "sql": await _call(session, "sql", query="SELECT count(*) AS n FROM bindings")}

    out = asyncio.run(_session(repo, script))
    assert not any(error for error, _ in out.values()), out
    assert '"caller_qualname":"run"' in out["callers"][1]  # `cart = Basket(...)`; cart.add(...) at module level
    assert '"name":"add"' in out["members"][1] and "shop" in out["imports_for"][1]
    assert json.loads(out["sql"][1])["n"] > 0
    assert _listing(repo) == before


def test_concurrent_sql_calls_each_get_their_own_rows(shop):
    """issue 27, row 6: 60 `sql` calls at once on one query process, each asking for a different
    number; then the same while the graph is being updated (the worker is replaced meanwhile)."""
    async def script(session):
        first = await asyncio.gather(*[_call(session, "sql", query=f"SELECT {i} AS n, repeat('x', {i % 7}) AS pad")
                                       for i in range(60)])
        (shop / "shop" / "busy.py").write_text("def busy():\n    return 1\n")
        second = await asyncio.gather(*[_call(session, "sql", query=f"SELECT {i} AS n FROM classes LIMIT 1")
                                        for i in range(100, 140)])
        return first, second

    first, second = asyncio.run(_session(shop, script))
    for expected, (error, text) in [*zip(range(60), first), *zip(range(100, 140), second)]:
        assert not error, text
        assert json.loads(text.splitlines()[0])["n"] == expected, (expected, text)


def test_an_answer_right_after_a_save_or_a_delete_sees_it(shop):
    """issue 27, row 18: no pause between the change on disk and the question, four times each."""
    count = "SELECT count(*) AS n FROM globals WHERE starts_with(name, 'saved_')"

    async def script(session):
        seen = []
        for i in range(4):
            (shop / "shop" / f"saved_{i}.py").write_text(f"def saved_{i}():\n    return {i}\n")
            seen.append(await _call(session, "sql", query=count))
            (shop / "shop" / "saved_0.py").write_text(f"def saved_0(a{i}):\n    return {i}\n")  # same size, new text
            seen.append(await _call(session, "signature", name="saved_0"))
        for i in range(4):
            (shop / "shop" / f"saved_{i}.py").unlink()
            seen.append(await _call(session, "sql", query=count))
        return seen

    seen = asyncio.run(_session(shop, script))
    n = lambda r: json.loads(r[1].splitlines()[0])["n"]  # noqa: E731
    counts = [n(seen[k]) for k in range(0, 8, 2)] + [n(r) for r in seen[8:]]
    assert counts == [1, 2, 3, 4, 3, 2, 1, 0], counts
    for i, k in enumerate(range(1, 8, 2)):
        assert f"a{i}" in seen[k][1], seen[k]


def test_temporary_objects_cannot_outlive_a_call(shop):
    """issue 27, row 17: a call cannot redefine members_of (or anything) for the next one."""
    async def script(session):
        return [await _call(session, "sql", query="CREATE TEMP MACRO members_of(c) AS TABLE SELECT 'evil' AS name"),
                await _call(session, "sql", query="CREATE TEMP TABLE t AS SELECT 1 AS a"),
                await _call(session, "sql", query="SELECT 1 AS a; SELECT 2 AS b"),
                await _call(session, "sql", query="SET VARIABLE x = 1"),
                await _call(session, "sql", query="PREPARE p AS SELECT 1"),
                await _call(session, "sql", query="SELECT name FROM members_of('shop.models.Cart') ORDER BY name"),
                await _call(session, "sql", query="DESCRIBE classes")]

    *refused, members, describe = asyncio.run(_session(shop, script))
    for error, text in refused:
        assert error and ("reading statement" in text or "one statement per query" in text), text
    assert not members[0] and "evil" not in members[1] and '"name":"add"' in members[1]
    assert not describe[0] and "qualname" in describe[1]


def test_failures_that_are_not_codegraphs_own_are_one_short_line(shop):
    """issue 27, row 19: a bad mode, a NUL in a path, a 10 MB argument: one line each, with the
    reason, at most a few hundred characters, and no traceback in the server's log."""
    huge = "x" * (10 * 1024 * 1024)

    async def script(session):
        return [await _call(session, "search", query="discount", mode="nonsense"),
                await _call(session, "diagnose", file="shop/\x00report.py"),
                await _call(session, "signature", name=huge),
                await _call(session, "sql", query="SELECT '" + huge + "' = 1 AS a FROM nowhere")]

    results = asyncio.run(_session(shop, script))
    for error, text in results:
        assert error and "\n" not in text.strip() and len(text) < 600, text[:700]
    assert "nonsense" in results[0][1] and "null" in results[1][1].lower()
    log = (shop.parent / "server.log").read_text()
    assert "Traceback" not in log, log[-2000:]


def test_the_first_index_runs_behind_the_server_and_index_status_reports_it(shop, monkeypatch):
    """issue 28, row 6: `initialize` on a repository without an index took 42 s, saying nothing.
    The first index now runs on a thread of its own; index_status answers at once with its
    progress, and a question waits for the index and then answers from it."""
    import threading

    import codegraph.service as service

    release, real = threading.Event(), service.index_repository

    def held(repo, db_path, **kwargs):
        kwargs["progress"]("parsing", 3, 10, "shop/models.py")
        assert release.wait(60)
        return real(repo, db_path, **kwargs)

    monkeypatch.setattr(service, "index_repository", held)
    graph = service.Graph(shop, watch=False, libraries=False)
    try:
        graph.index_in_background()
        deadline = time.monotonic() + 30
        while (graph.indexing or {}).get("phase") != "parsing" and time.monotonic() < deadline:
            time.sleep(0.01)
        status = graph.status()
        assert status["fresh"] is False and (status["indexing"]["done"], status["indexing"]["total"]) == (3, 10)
        assert not graph.db_path.exists()
        release.set()
        assert graph.query("SELECT count(*) FROM classes").rows[0][0] > 0  # waited for the index
        after = graph.status()
        assert after["fresh"] is True and "indexing" not in after and after["counts"]["classes"] > 0
    finally:
        release.set()
        graph.close()


def test_first_contact_serves_the_project_layer_while_the_library_layer_is_built(shop, monkeypatch):
    """issue 28, row 6: the project's own layer first (seconds), served while another process
    builds the graph with the library layer (click with a cold library cache: 10 s), then that."""
    import threading

    import codegraph.service as service

    release, real = threading.Event(), service.Graph._library_layer_later

    def held(self):
        self.library_layer = {"since": time.time()}
        assert release.wait(60)
        real(self)

    monkeypatch.setattr(service.Graph, "_library_layer_later", held)
    graph = service.Graph(shop, watch=False, libraries=True)
    try:
        graph.index_in_background()
        deadline = time.monotonic() + 60
        while graph.library_layer is None and time.monotonic() < deadline:
            time.sleep(0.01)
        answered = service.Tools(graph).sql("SELECT (SELECT count(*) FROM classes) AS c, "
                                            "(SELECT count(*) FROM library.files) AS l", 10)  # as a tool asks
        assert json.loads(answered)["c"] > 0 and json.loads(answered)["l"] == 0
        assert "being built" in graph.status()["library_layer"]
        release.set()
        graph._first.join(120)
        assert graph.query("SELECT count(*) FROM library.files").rows[0][0] > 0
        status = graph.status()
        assert "library_layer" not in status and status["last_update"]["library_layer"] == "in"
    finally:
        release.set()
        graph.close()


def test_index_status_does_not_wait_for_an_index_that_has_not_begun(shop, monkeypatch):
    """The first index holds the graph's lock from its first step (a snapshot of the files) on: an
    index_status asked before the index itself began waited for all of it (5-8 s on click)."""
    import threading

    import codegraph.service as service

    release, real = threading.Event(), service.Snapshot.of

    def slow_snapshot(repo):
        assert release.wait(20)  # without the fix the status below waits here, and this gives up
        return real(repo)

    monkeypatch.setattr(service.Snapshot, "of", staticmethod(slow_snapshot))
    graph = service.Graph(shop, watch=False, libraries=False)
    try:
        graph.index_in_background()
        status = graph.status()  # the thread holds the lock, waiting in its snapshot
        assert status["fresh"] is False and status["indexing"]["phase"] == "starting"
        release.set()
        graph._first.join(60)
        assert graph.status()["fresh"] is True
    finally:
        release.set()
        graph.close()


def test_index_status_answers_at_once_while_the_graph_loads(tmp_path):
    """issue 28, row 6: index_status asked within the first 0.35 s waited for service.py to load
    (the first answer at 1.02 s against `initialize` at 0.73 s); it now says so at once."""
    import threading

    from codegraph.server import _Loading

    release = threading.Event()
    loading = _Loading(lambda: release.wait(30) and "the tools", tmp_path)
    loading.begin()
    said = json.loads(loading.while_loading())
    assert said["fresh"] is False and said["indexing"]["phase"] == "loading" and said["repository"] == str(tmp_path)
    release.set()
    assert loading() == "the tools" and loading.while_loading() is None


def test_a_library_layer_that_failed_is_said_until_an_index_brings_it(shop, monkeypatch):
    """The library layer's build in its own process failed: index_status says so, with its last
    line; the next index with the library layer (a file changed) clears it."""
    import codegraph.service as service

    monkeypatch.setattr(service.Graph, "_library_layer_command", lambda self: [
        sys.executable, "-c", "import sys; print('Traceback...', file=sys.stderr); "
                              "sys.exit('OSError: no space left on device')"])
    graph = service.Graph(shop, watch=False, libraries=True)
    try:
        graph.index_in_background()
        graph._first.join(120)
        assert graph.status()["library_layer"] == ("not built: OSError: no space left on device; answers come "
                                                   "from the project's own layer")
        (shop / "shop" / "extra.py").write_text("import json\n")
        assert "library_layer" not in graph.status()
        assert graph.query("SELECT count(*) FROM library.files").rows[0][0] > 0
    finally:
        graph.close()


# One word per concept, the CLI's: what is looked up, how many, which file, how many tokens.
VOCABULARY = {"name", "query", "limit", "mode", "full", "description", "file", "symbol", "signature", "budget",
              "first_line", "last_line"}


def test_every_parameter_is_described_and_closed_sets_are_enums(shop):
    from typing import get_args

    from codegraph.semantic.search import MODES
    from codegraph.server import SearchMode

    async def script(session):
        tools = (await session.list_tools()).tools
        return {t.name: t.input_schema for t in tools}, await _call(session, "search", query="cart", mode="fuzzy"), \
            await _call(session, "schema"), await _call(session, "schema", full=True), \
            await _call(session, "members", name="Cart")

    schemas, fuzzy, short, full, members = asyncio.run(_session(shop, script))
    assert get_args(SearchMode) == MODES
    for tool, schema in schemas.items():
        for parameter, spec in schema.get("properties", {}).items():
            assert parameter in VOCABULARY, (tool, parameter)
            assert spec.get("description"), (tool, parameter)
    assert schemas["search"]["properties"]["mode"]["enum"] == list(MODES)
    # a value outside the set is refused by the schema, with the allowed values in one line
    assert fuzzy[0] and "hybrid" in fuzzy[1] and "\n" not in fuzzy[1].strip()
    assert not short[0] and len(short[1]) < 8000 and "members_of(cls)" in short[1]
    assert not full[0] and len(full[1]) > len(short[1]) and "filled by" in full[1]
    assert not members[0] and '"name":"add"' in members[1]  # a simple name, as class_info takes

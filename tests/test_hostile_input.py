"""A repository full of things that break naive indexers: every one is reported, none is fatal."""

import os
import random

import duckdb
import pytest

from codegraph.indexer import index_repository
from codegraph.languages.java import rules as java_rules

from conftest import snapshot


def _nested_defs(depth: int) -> str:
    lines = [f"{'    ' * i}def f{i}(a{i}):" for i in range(depth)]
    lines.append(f"{'    ' * depth}return a0")
    return "\n".join(lines) + "\n"


def _nested_expression(depth: int) -> str:
    return "x = " + "[" * depth + "1" + "]" * depth + "\n" + "y = " + "(" * depth + "2" + ")" * depth + "\n"


def _nested_blocks(depth: int) -> str:
    return "".join(f"{' ' * i}if True:\n" for i in range(depth)) + " " * depth + "z = 1\n"


def _hostile_repo(root):
    rng = random.Random(1234)
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .good import ok\n")
    (pkg / "good.py").write_text("def ok():\n    return 1\n")
    (pkg / "random_bytes.py").write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    (pkg / "latin1_no_cookie.py").write_bytes("name = 'café'\n".encode("latin-1"))
    (pkg / "latin1_with_cookie.py").write_bytes("# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1"))
    (pkg / "huge.py").write_bytes(b"x = 1\n" * (20 * 1024 * 1024 // 6 + 1))
    (pkg / "deep_defs.py").write_text(_nested_defs(500))
    (pkg / "deep_expr.py").write_text(_nested_expression(500))
    (pkg / "deep_blocks.py").write_text(_nested_blocks(500))
    (pkg / "garbage.py").write_text("def (:\n  class\n)))) ]]] lambda lambda\n\x0c\tdef ok2(): pass\n")
    (pkg / "empty.py").write_text("")
    os.symlink(root, pkg / "loop")  # a directory symlink back to the root
    os.symlink(pkg / "missing.py", pkg / "dangling.py")
    return root


def test_hostile_repository_indexes_and_reports_every_skip(tmp_path):
    repo = _hostile_repo(tmp_path / "repo")
    report = index_repository(repo, jobs=2)
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped["pkg/random_bytes.py"] in {"binary", "undecodable"}
    assert skipped["pkg/latin1_no_cookie.py"] == "undecodable"
    assert skipped["pkg/huge.py"] == "too-large"
    assert skipped["pkg/loop"] == "symlink"
    assert skipped["pkg/dangling.py"] == "unreadable"
    con = duckdb.connect(str(report.db_path), read_only=True)
    indexed = {r[0] for r in con.execute("SELECT path FROM files").fetchall()}
    assert {"pkg/__init__.py", "pkg/good.py", "pkg/latin1_with_cookie.py", "pkg/deep_defs.py",
            "pkg/deep_expr.py", "pkg/deep_blocks.py", "pkg/garbage.py", "pkg/empty.py"} <= indexed
    # what could be recovered was: the deepest nested function and a def after the garbage
    assert con.execute("SELECT count(*) FROM nested_functions WHERE module = 'pkg.deep_defs'").fetchone() == (499,)
    assert con.execute("SELECT value FROM globals WHERE qualname = 'pkg.latin1_with_cookie.name'").fetchone() == (
        "'café'",)
    assert con.execute("SELECT parse_errors > 0 FROM files WHERE path = 'pkg/garbage.py'").fetchone() == (True,)
    assert con.execute("SELECT resolved_qualname FROM imports WHERE module = 'pkg'").fetchone() == ("pkg.good.ok",)
    con.close()


def test_size_limit_is_configurable(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "big.py").write_text("x = 1\n" * 40_000)  # 240 kB
    small_limit = index_repository(repo, tmp_path / "a.duckdb", jobs=1, max_file_size=100_000)
    assert [(s.path, s.reason) for s in small_limit.skipped] == [("big.py", "too-large")]
    default = index_repository(repo, tmp_path / "b.duckdb", jobs=1)
    assert default.skipped == [] and default.counts["files"] == 1


# -- issue 10, rows 11-15 and 20 ------------------------------------------------------------------

def test_file_symlinks_leading_out_of_the_repository_are_skipped(tmp_path):
    secret = tmp_path / "secrets.py"
    secret.write_text("AWS_SECRET_ACCESS_KEY = 'hunter2'\n")
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "real.py").write_text("X = 1\n")
    (repo / "pkg" / "leak.py").symlink_to(secret)
    (repo / "pkg" / "alias.py").symlink_to(repo / "pkg" / "real.py")
    report = index_repository(repo, jobs=1)
    assert {s.path: s.reason for s in report.skipped}.get("pkg/leak.py") == "symlink"
    con = duckdb.connect(str(report.db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM globals WHERE value LIKE '%hunter2%'").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM files WHERE path = 'pkg/leak.py'").fetchone() == (0,)
    con.close()


def test_undecodable_file_and_folder_names_are_skipped_in_full_builds_and_updates(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "ok.py").write_text("def ok():\n    return 1\n")
    report = index_repository(repo, jobs=1)
    raw = os.fsencode(repo)
    bad_file = os.path.join(raw, b"caf\xe9.py")
    with open(bad_file, "wb") as fh:
        fh.write(b"def cafe():\n    return 2\n")
    os.mkdir(os.path.join(raw, b"d\xff"))
    with open(os.path.join(raw, b"d\xff", b"inner.py"), "wb") as fh:
        fh.write(b"Y = 1\n")
    update = index_repository(repo, jobs=1)  # an update
    full = index_repository(repo, tmp_path / "full.duckdb", jobs=1)  # a full build
    for result in (update, full):
        reasons = sorted(s.reason for s in result.skipped)
        assert reasons == ["undecodable-name", "undecodable-name"], result.skipped
        assert result.counts["files"] == 1
    assert report.counts["files"] == 1


def test_a_file_that_vanishes_during_an_update_is_reported_not_fatal(tmp_path, monkeypatch):
    import codegraph.indexer as indexer

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.py").write_text("def a():\n    return 1\n")
    (repo / "b.py").write_text("def b():\n    return 2\n")
    index_repository(repo, jobs=1)
    (repo / "a.py").write_text("def a():\n    return 10\n")
    real = indexer.discover

    def discover_then_delete(root, max_size):
        found = real(root, max_size)
        (repo / "a.py").unlink()  # gone between discovery and reading
        return found

    monkeypatch.setattr(indexer, "discover", discover_then_delete)
    report = index_repository(repo, jobs=1)
    assert {s.path: s.reason for s in report.skipped} == {"a.py": "unreadable"}
    assert report.counts["files"] == 1


def _write_lock_holder(db_path):
    """A second process that holds the database open for writing until told to stop."""
    import subprocess
    import sys

    code = ("import duckdb, sys; con = duckdb.connect(sys.argv[1]); print('ready', flush=True); "
            "sys.stdin.read(); con.close()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(db_path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_index_while_another_process_holds_the_file_is_one_line(mini_repo):
    from click.testing import CliRunner

    from codegraph.cli import main

    report = index_repository(mini_repo, jobs=1)
    holder = _write_lock_holder(report.db_path)
    try:
        (mini_repo / "src" / "shop" / "new.py").write_text("def new():\n    return 1\n")
        result = CliRunner().invoke(main, ["index", str(mini_repo)])
    finally:
        holder.communicate("", timeout=30)
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "is locked by" in result.output and f"PID {holder.pid}" in result.output
    assert "Traceback" not in result.output


def test_index_over_a_damaged_database_says_to_rebuild_and_full_does(mini_repo):
    from click.testing import CliRunner

    from codegraph.cli import main

    report = index_repository(mini_repo, jobs=1)
    data = bytearray(report.db_path.read_bytes())
    for offset in range(4096, min(len(data), 40960)):
        data[offset] ^= 0x5A
    report.db_path.write_bytes(bytes(data))
    (mini_repo / "src" / "shop" / "new.py").write_text("def new():\n    return 1\n")
    runner = CliRunner()
    result = runner.invoke(main, ["index", str(mini_repo)])
    assert result.exit_code == 1 and "--full" in result.output and "Traceback" not in result.output
    assert result.output.count("\n") == 1
    rebuilt = runner.invoke(main, ["index", str(mini_repo), "--full", "-q"])
    assert rebuilt.exit_code == 0, rebuilt.output
    con = duckdb.connect(str(report.db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM files WHERE path = 'src/shop/new.py'").fetchone() == (1,)
    con.close()


@pytest.mark.parametrize("full", [True, False])
def test_a_duckdb_file_codegraph_did_not_write_is_never_overwritten(mini_repo, tmp_path, full):
    other = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE orders AS SELECT 1 AS id")
    con.close()
    before = other.read_bytes()
    from codegraph.errors import RepositoryError

    with pytest.raises(RepositoryError, match="did not write"):
        index_repository(mini_repo, other, jobs=1, full=full)
    assert other.read_bytes() == before


def test_updates_do_not_hold_the_database_while_parsing(mini_repo, monkeypatch):
    """Workers are forked while parsing; the write connection opens only afterwards."""
    import subprocess
    import sys

    import codegraph.update as update

    report = index_repository(mini_repo, jobs=1)
    seen = {}
    real = update.extract_chunks

    def probing(*args, **kwargs):
        probe = subprocess.run([sys.executable, "-c", "import duckdb, sys; duckdb.connect(sys.argv[1]).close()",
                                str(report.db_path)], capture_output=True, text=True)
        seen["free"] = probe.returncode == 0
        yield from real(*args, **kwargs)

    monkeypatch.setattr(update, "extract_chunks", probing)
    (mini_repo / "src" / "shop" / "new.py").write_text("def new():\n    return 1\n")
    index_repository(mini_repo, jobs=1)
    assert seen == {"free": True}


def test_cycles_and_giant_chains_in_the_flow_analysis_end_and_stay_small(tmp_path):
    """Names that refer to themselves, classes deriving from themselves, arguments and returns in
    circles, a 3,000-name attribute chain and 2,000 chained assignments: the index finishes, and
    the chain does not store each of its prefixes (quadratic)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "evil.py").write_text(
        "a = b\nb = a\nclass A(A): pass\nclass B(C): pass\nclass C(B):\n    def f(self): return self.f()\n"
        "def f(): return f\ndef g(x): return x(x)\ng(g)\ndef dec(fn): return dec\n@dec\n@dec\n"
        "def h(): return h()\nh()\ndef loop():\n    x = x.y\n    for x in x: x()\n    with x as x: x.z()\n"
        "    return loop()()()\nH = {'a': H}\nH['a']()\ndef rec(cb): return rec(cb)\nrec(rec)\n"
        "def deep():\n    return x" + ".a" * 3000 + "()\n"
        "def ret():\n" + "".join(f"    v{i} = v{i + 1}\n" for i in range(2000)) + "    return v0\n"
        "def use():\n    return ret()()\n")
    report = index_repository(repo, jobs=1, embed=False, libraries=False)
    con = duckdb.connect(str(report.db_path), read_only=True)
    try:
        longest = con.execute("SELECT max(length(text)) FROM refs").fetchone()[0]
        assert longest <= 240
        assert con.execute("SELECT count(*) FROM calls WHERE caller_qualname = 'evil.g'").fetchone()[0] >= 1
    finally:
        con.close()


# -- issue 27 -------------------------------------------------------------------------------------

def test_a_bad_gitignore_pattern_is_reported_and_the_rest_still_applies(tmp_path):
    """row 13: a lone backslash aborted the index with a GitIgnorePatternError traceback."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "kept.py").write_text("def kept():\n    return 1\n")
    (repo / "pkg" / "generated.py").write_text("def generated():\n    return 2\n")
    (repo / ".gitignore").write_text("\\\npkg/generated.py\n")
    for full in (False, True):
        report = index_repository(repo, jobs=1, libraries=False, embed=False, full=full)
        bad = [s for s in report.skipped if s.reason == "bad-ignore-pattern"]
        assert len(bad) == 1 and bad[0].path == ".gitignore" and "line 1" in bad[0].detail
    con = duckdb.connect(str(report.db_path), read_only=True)
    assert {r[0] for r in con.execute("SELECT path FROM files").fetchall()} == {"pkg/__init__.py", "pkg/kept.py"}


def test_an_update_that_adds_many_definitions_at_once_stays_linear(tmp_path):
    """Found while filling a disk for row 20: 300 new files of 200 functions each made an update
    compare every binding with every new definition (60,000 x 120,000); it spun for minutes."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "base.py").write_text("def base():\n    return 1\n")
    index_repository(repo, jobs=1, libraries=False, embed=False)
    for i in range(120):
        (repo / "pkg" / f"big{i}.py").write_text("".join(f"def g{i}_{j}(a, b=1):\n    return a + b\n"
                                                         for j in range(200)))
    import time

    started = time.process_time()
    report = index_repository(repo, jobs=1, libraries=False, embed=False)
    assert report.mode in ("update", "full")
    assert time.process_time() - started < 120  # the quadratic check took hours at this size
    con = duckdb.connect(str(report.db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM globals").fetchone()[0] == 1 + 120 * 200


def _user_namespaces() -> bool:
    import shutil
    import subprocess

    unshare = shutil.which("unshare")
    return bool(unshare) and subprocess.run([unshare, "--user", "--map-root-user", "--mount", "true"],
                                            capture_output=True).returncode == 0


@pytest.mark.skipif(not _user_namespaces(), reason="needs unshare with user namespaces for a small tmpfs")
def test_a_full_disk_is_one_line_and_the_graph_stays_intact(tmp_path, example):
    """row 20: index and refine on a 6 MB tmpfs that fills up."""
    import json
    import subprocess
    import sys

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    for i in range(5):
        (repo / "pkg" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    shop = example
    disk = tmp_path / "disk"
    disk.mkdir()
    cli = f"{sys.executable} -m codegraph.cli"
    big = ("import sys\nfor i in range(300):\n"
           "    open(f'{sys.argv[1]}/pkg/big{i}.py', 'w').write(''.join(f'def g{i}_{j}(a, b=1):\\n    return a\\n'"
           " for j in range(200)))\n")
    (tmp_path / "big.py").write_text(big)
    script = f"""
mount -t tmpfs -o size=6m none {disk} || exit 99
{cli} index {repo} --db {disk}/g.duckdb --no-libraries --no-embed -q; echo "first=$?"
{sys.executable} {tmp_path}/big.py {repo}
{cli} index {repo} --db {disk}/g.duckdb --no-libraries --no-embed -q; echo "second=$?"
{cli} sql --db {disk}/g.duckdb --json "SELECT count(*) AS n FROM globals"
head -c 6000000 /dev/zero > {disk}/filler 2>/dev/null; truncate -s -16K {disk}/filler  # room for a probe only
TMPDIR={disk} {cli} refine --task {shop}/task.json; echo "refine=$?"
ls {disk}
"""
    run = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                         capture_output=True, text=True, timeout=600)
    assert "first=0" in run.stdout and "second=1" in run.stdout and "refine=1" in run.stdout, run
    rows = run.stdout.split("second=1", 1)[1].split("refine=", 1)[0]
    assert json.loads(rows)["rows"] == [{"n": 5}], rows  # the graph before the failed update, whole
    errors = [line for line in run.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 2 and all("no space left on the device" in e for e in errors), run.stderr
    assert "Traceback" not in run.stderr
    listing = run.stdout.split("refine=1", 1)[1].split()
    assert listing == ["filler", "g.duckdb", "g.duckdb.lock"], listing  # no scratch copy, no half-written graph


def test_a_task_nested_100000_deep_is_one_line(tmp_path):
    """row 20: json.loads raised RecursionError."""
    from codegraph.refine.task import TaskError, load_task

    path = tmp_path / "task.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(TaskError, match="nests its JSON too deeply"):
        load_task(path)


def test_control_sequences_in_names_never_reach_the_terminal(tmp_path):
    """row 21: an OSC sequence in a file name went raw to the terminal in `index` and `sql`."""
    from click.testing import CliRunner

    from codegraph.cli import main

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    evil = "evil\x1b]0;pwned\x07\x9b31m\r.py"
    (repo / "pkg" / evil).write_text("def broken(:\n")  # a syntax error: the summary lists the file
    (repo / "pkg" / "ok.py").write_text("def ok():\n    return 1\n")
    runner = CliRunner()
    indexed = runner.invoke(main, ["index", str(repo), "--no-libraries", "--no-embed"])
    queried = runner.invoke(main, ["sql", "--db", str(repo / ".codegraph" / "graph.duckdb"),
                                   "SELECT path FROM files ORDER BY path"])
    as_json = runner.invoke(main, ["sql", "--db", str(repo / ".codegraph" / "graph.duckdb"), "--json",
                                   "SELECT path FROM files ORDER BY path"])
    for result in (indexed, queried, as_json):
        assert result.exit_code == 0, result.output
        assert not any(c in result.output for c in "\x1b\x07\x9b\r"), repr(result.output)
        assert "evil\\u001b]0;pwned\\u0007" in result.output
    import json

    paths = [row["path"] for row in json.loads(as_json.output)["rows"]]
    assert f"pkg/{evil}" in paths  # the JSON's value is the real name


def test_chains_of_calls_are_extracted_in_linear_time(tmp_path):
    """row 9: `x = a` + `.b()` x 20,000 took 24 s (each callee's parent found from the root, each
    callee's text copied whole), 200,000 did not finish in 120 s."""
    import time

    from codegraph.languages.python.extract import extract

    timings = {}
    for n in (2_000, 20_000, 200_000):
        source = ("x = a" + ".b()" * n + "\nprint(len(x), sep=', ')\n").encode()
        started = time.process_time()
        facts = extract(source, "chain.py", "chain", False)
        timings[n] = time.process_time() - started
        calls = facts.rows["calls"]
        assert any(c.callee_text == "print" and c.arguments == ["len(x)", "sep=', '"] for c in calls)
        chained = [c for c in calls if c.callee_name == "b"]
        assert chained and all(len(c.callee_text) <= 243 for c in chained)
    assert timings[200_000] < 30, timings  # 100x the calls of 2,000, never 10,000x the time


def test_a_file_past_its_time_budget_is_skipped_and_reported(tmp_path, monkeypatch):
    """row 9: a per-file budget; a file that needs more is reported, the index goes on."""
    import codegraph.languages.python.extract as extract_module

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "ok.py").write_text("def ok():\n    return 1\n")
    (repo / "pkg" / "slow.py").write_text("".join(f"def f{i}():\n    return g{i}()\n" for i in range(3000)))
    real = extract_module.extract

    def slow_for_one(data, path, module, is_package, budget_s=None):
        return real(data, path, module, is_package, budget_s=0 if path.endswith("slow.py") else budget_s)

    monkeypatch.setattr(extract_module, "extract", slow_for_one)
    report = index_repository(repo, jobs=1, libraries=False, embed=False)
    skipped = {s.path: (s.reason, s.detail) for s in report.skipped}
    assert skipped["pkg/slow.py"][0] == "too-slow" and "longer than" in skipped["pkg/slow.py"][1]
    con = duckdb.connect(str(report.db_path), read_only=True)
    assert [r[0] for r in con.execute("SELECT path FROM files").fetchall()] == ["pkg/ok.py"]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def test_helpers_die_with_an_indexer_killed_by_sigkill(tmp_path):
    """row 16: after kill -9 of the indexer, the forkserver, the resource tracker and the parsing
    workers lived on, and a pymp-* folder stayed."""
    import subprocess
    import sys
    import time

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    for i in range(600):
        (repo / "pkg" / f"m{i}.py").write_text("".join(f"def f{j}(a, b=1):\n    return g(a).h(b)\n"
                                                       for j in range(150)))
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "codegraph.cli", "index", str(repo), "--no-libraries",
                             "--no-embed", "-q", "-j", "2"], env={**os.environ, "TMPDIR": str(private_tmp)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, helpers = time.monotonic() + 60, set()
        while time.monotonic() < deadline and len(helpers) < 4:  # tracker, forkserver, two workers
            helpers = _descendants(proc.pid)
            time.sleep(0.05)
        assert len(helpers) >= 4 and proc.poll() is None, helpers
        assert any(p.name.startswith("pymp-") for p in private_tmp.iterdir())
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in helpers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in helpers if _alive(p)] == []
        assert not any(p.name.startswith("pymp-") for p in private_tmp.iterdir()), list(private_tmp.iterdir())
    finally:
        proc.kill()
        for pid in _descendants(proc.pid):
            os.kill(pid, 9)


def test_a_query_worker_dies_with_its_parent(tmp_path, mini_db):
    """row 16, the MCP server's and refine's helpers: the query process ends with its parent."""
    import subprocess
    import sys
    import time

    script = (f"from codegraph.query_worker import QueryWorker\n"
              f"w = QueryWorker({str(mini_db)!r})\n"
              "w.run('SELECT 1')\n"
              "print('ready', flush=True)\n"
              "import time; time.sleep(300)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        helpers = _descendants(proc.pid)
        assert helpers
        proc.kill()
        proc.wait()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in helpers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in helpers if _alive(p)] == []
    finally:
        proc.kill()


def test_a_virtualenv_made_of_fifos_and_giant_files_neither_blocks_nor_fills_memory(tmp_path):
    """The repository's .venv is read, never run: a FIFO for pyvenv.cfg, a .pth or a module (an
    open would wait for a writer forever) is not a file to read, and a .pth of hundreds of MB is
    read only as far as its first 64 KB."""
    import subprocess
    import sys

    repo = tmp_path / "repo"
    site = repo / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (repo / "app.py").write_text("import json\nimport evil\n")
    os.mkfifo(site / "evil.py")  # found by the import, never opened
    os.mkfifo(repo / ".venv" / "pyvenv.cfg")
    script = ("import sys; from codegraph.indexer import index_repository; "
              "r = index_repository(sys.argv[1], sys.argv[2], jobs=1, embed=False); print(r.library_files)")
    done = subprocess.run([sys.executable, "-c", script, str(repo), str(tmp_path / "a.duckdb")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and int(done.stdout) > 0, done.stderr[-2000:]  # the interpreter's own library
    (repo / ".venv" / "pyvenv.cfg").unlink()
    (repo / ".venv" / "pyvenv.cfg").write_text("home = /nowhere/bin\nversion = 3.11.7\n")
    os.mkfifo(site / "a.pth")
    with open(site / "b.pth", "wb") as fh:
        fh.truncate(300 * 1024 * 1024)  # sparse: no disk, all NUL bytes
    done = subprocess.run([sys.executable, "-c", script, str(repo), str(tmp_path / "b.duckdb")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and int(done.stdout) > 0, done.stderr[-2000:]


def test_a_megabyte_java_line_before_an_assignment_reads_in_linear_time():
    """The type a Java line expects (rules._expected) reads at most the end of a declaration: the
    whole of a model's megabyte line before its `=` cost the declaration's pattern quadratic time
    (2,000 characters 6 ms, a megabyte about half an hour)."""
    line = "x" * 1_000_000 + " Sink sink = "
    assert java_rules._expected(None, 1, line) == ("Sink", "sink")



_DERIVING = """class Base:
    def __init__(self, ctx=None):
        self.ctx = ctx


class U(B):
    def __init__(self, message):
        super().__init__(message)
        self.ctx.go()


class B(U, Base):
    def __init__(self, message):
        super().__init__(message)
        self.ctx.go()


class M(type, metaclass=N):
    pass


class N(type, metaclass=M):
    pass
"""
_ADDED = "\n\ndef _added():\n    return _added\n"
# name -> files, and the edits made one after the other (path, text replaced, by what; None: appended)
_CYCLIC = {
    "star imports of each other": ({
        "p/a.py": "from p.b import *\n\ndef fa():\n    return fb()\n",
        "p/b.py": "from p.a import *\n\ndef fb():\n    return fa()\n",
        "p/c.py": "from p.a import fb\nfrom p.b import fa\n\nfa()\nfb()\n"},
        [("p/a.py", None, _ADDED), ("p/b.py", None, _ADDED), ("p/c.py", None, _ADDED)]),
    "a package re-exporting modules that star-import it": ({
        "p/__init__.py": "from p.q import *\nfrom p.r import *\n",
        "p/q.py": "from p import *\n\nclass Q:\n    def go(self):\n        return R().go()\n",
        "p/r.py": "from p import *\n\nclass R:\n    def go(self):\n        return Q().go()\n"},
        [("p/__init__.py", None, _ADDED), ("p/q.py", None, _ADDED), ("p/r.py", None, _ADDED)]),
    # only B.__init__ is resolved again (U's is kept): the update asks for B's bases first, a full
    # build for U's; before, whichever came first kept the other as a base
    "classes and metaclasses deriving from each other": ({
        "p/e.py": _DERIVING, "p/use.py": "from p.e import U, B\n\nU('x').ctx\nB('y').ctx\n"},
        [("p/e.py", "        self.ctx.go()\n\n\nclass M", "        self.ctx.go()\n        x = 1\n\n\nclass M"),
         ("p/e.py", "        self.ctx.go()\n\n\nclass B", "        self.ctx.go()\n        y = 1\n\n\nclass B")]),
}


@pytest.mark.parametrize("case", sorted(_CYCLIC))
def test_an_update_of_code_that_refers_to_itself_in_a_cycle_equals_its_rebuild(tmp_path, case):
    """Cycles Python refuses or leaves half-made (classes deriving from each other, modules that
    star-import each other): an update asks the resolver in another order than a full build, and
    must still answer as it does (mutated code once made click's update and rebuild disagree)."""
    files, edits = _CYCLIC[case]
    root = tmp_path / "repo"
    for name, text in {"p/__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    index_repository(root, embed=False, libraries=False)
    for name, old, new in edits:
        text = (root / name).read_text()
        assert old is None or old in text
        (root / name).write_text(text + new if old is None else text.replace(old, new, 1))
        updated = index_repository(root, embed=False, libraries=False)
        rebuilt = index_repository(root, tmp_path / "full.duckdb", embed=False, libraries=False, full=True)
        assert updated.mode == "update" and snapshot(updated.db_path) == snapshot(rebuilt.db_path), (name, old)

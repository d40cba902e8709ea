"""Resolution split over forked copies of the indexing process: the same graph as one process,
and a copy that fails costs time, never answers."""

import os
import shutil
import sysconfig
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from codegraph import forked
from codegraph.languages.java import resolve as java_resolve
from codegraph.languages.python import resolution
from codegraph.cli import main
from codegraph.indexer import index_repository
from conftest import snapshot

pytestmark = pytest.mark.skipif(not forked.can_fork(), reason="resolution is forked only on Linux")

_adopted: list = []


def _first(k):
    return k * 10, os.getpid()


def _combine(firsts):
    return sum(value for value, _ in firsts)


def _second(k):
    return k, _adopted[-1], os.getpid()


def test_each_part_gets_its_answers_in_order_and_every_copy_adopts_what_all_parts_gave():
    _adopted.clear()
    firsts, seconds = forked.two_steps(3, _first, _combine, _adopted.append, _second)
    assert [value for value, _ in firsts] == [0, 10, 20]
    assert [(k, shared) for k, shared, _ in seconds] == [(0, 30), (1, 30), (2, 30)]
    pids = [pid for _, _, pid in seconds]
    assert pids[0] == os.getpid() and len(set(pids)) == 3  # parts 1 and 2 were answered by copies
    assert [pid for _, pid in firsts] == pids  # each copy kept its part through both steps


@pytest.mark.parametrize("step", ["first", "second"])
@pytest.mark.parametrize("how", ["dies", "raises"])
def test_a_copy_that_fails_leaves_its_part_to_the_parent(step, how):
    parent = os.getpid()

    def fail():
        if os.getpid() != parent:
            if how == "dies":
                os._exit(3)
            raise RuntimeError("a bug in a copy")

    def first(k):
        if step == "first":
            fail()
        return _first(k)

    def second(k):
        if step == "second":
            fail()
        return _second(k)

    _adopted.clear()
    firsts, seconds = forked.two_steps(2, first, _combine, _adopted.append, second)
    assert [value for value, _ in firsts] == [0, 10]
    assert [(k, shared, pid) for k, shared, pid in seconds] == [(0, 10, parent), (1, 10, parent)]


def test_when_the_parent_fails_its_copies_are_stopped(tmp_path):
    said = tmp_path / "copy.pid"

    def first(k):
        if k:  # the copy says who it is, then works for far longer than the test runs
            said.write_text(str(os.getpid()))
            time.sleep(600)
        deadline = time.monotonic() + 30
        while (not said.exists() or not said.read_text()) and time.monotonic() < deadline:
            time.sleep(0.01)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        forked.two_steps(2, first, _combine, _adopted.append, _second)
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running or a zombie
        os.kill(int(said.read_text()), 0)


_PACKAGES = ("asyncio", "email", "json", "logging", "concurrent", "http", "xml")


@pytest.fixture
def forks(monkeypatch) -> list:
    """The copies forked.two_steps forks from here on (None where a fork failed)."""
    made: list = []
    real_fork = forked._fork

    def counted(*args):
        copy = real_fork(*args)
        made.append(copy)
        return copy

    monkeypatch.setattr(forked, "_fork", counted)
    return made


def test_a_build_resolved_by_two_processes_equals_one_resolved_by_one(tmp_path, monkeypatch, forks):
    """Real code (packages of the running Python's stdlib), where a part's answers would differ
    if they depended on what the other part asked the resolver first."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    repo = tmp_path / "repo"
    for name in _PACKAGES:
        shutil.copytree(stdlib / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "test*"))
    one = index_repository(repo, tmp_path / "one.duckdb", jobs=1, embed=False, libraries=False)
    monkeypatch.setattr(resolution, "FORK_AT", 1)
    two = index_repository(repo, tmp_path / "two.duckdb", jobs=1, embed=False, libraries=False, resolve_jobs=2)
    assert len(forks) == 1 and forks[0] is not None
    done = CliRunner().invoke(main, ["index", str(repo), "--db", str(tmp_path / "cli.duckdb"), "--resolve-jobs", "2",
                                     "--jobs", "1", "--no-embed", "--no-libraries", "--quiet"])
    assert done.exit_code == 0, done.output
    assert len(forks) == 2 and snapshot(tmp_path / "cli.duckdb") == snapshot(one.db_path)
    con = duckdb.connect(str(two.db_path), read_only=True)
    try:
        calls, resolved = con.execute("SELECT count(*), count(resolved_callee) FROM calls").fetchone()
    finally:
        con.close()
    assert calls > 10_000 and resolved > calls // 3
    assert snapshot(two.db_path) == snapshot(one.db_path)


def test_java_calls_resolved_by_two_processes_are_those_of_one_and_read_the_same_facts(tmp_path, monkeypatch, forks):
    """The feature programs (tests/java_features), whose files call each other's classes: each
    part's answers and the facts they read (`reads`, what an update follows) are those one
    process gives. Java's default is a copy per core up to two (its resolver is small)."""
    repo = tmp_path / "repo"
    shutil.copytree(Path(__file__).parent / "java_features", repo)
    one = index_repository(repo, tmp_path / "one.duckdb", jobs=1, embed=False, libraries=False, resolve_jobs=1)
    monkeypatch.setattr(java_resolve, "FORK_AT", 1)
    two = index_repository(repo, tmp_path / "two.duckdb", jobs=1, embed=False, libraries=False, resolve_jobs=2)
    assert len(forks) == 1 and forks[0] is not None
    assert snapshot(two.db_path) == snapshot(one.db_path)
    read = []
    for db in (one.db_path, two.db_path):
        con = duckdb.connect(str(db), read_only=True)
        try:
            read.append(con.execute("SELECT f.path, r.key FROM reads r JOIN files f USING (file_id) ORDER BY ALL").fetchall())
        finally:
            con.close()
    assert read[0] == read[1] and len({path for path, _ in read[0]}) > 60
    index_repository(repo, tmp_path / "default.duckdb", jobs=1, embed=False, libraries=False)
    assert len(forks) == (2 if (os.cpu_count() or 1) >= 2 else 1)

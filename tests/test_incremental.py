"""Re-indexing: only what changed is parsed, deletions are removed, crashes lose nothing."""

import functools
import shutil
import subprocess
import sys
import textwrap
import time

import duckdb
import pytest

import codegraph.languages.python.incremental as incremental
from benchmarks.mutations import mutated
from codegraph.indexer import index_repository
from conftest import snapshot


def _callees(db, text):
    """What the calls written `text` resolve to, sorted (unresolved rows left out)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return sorted(r[0] for r in con.execute(
            "SELECT resolved_callee FROM calls WHERE callee_text = ? AND resolved_callee IS NOT NULL",
            [text]).fetchall())
    finally:
        con.close()


def test_noop_reindex_parses_nothing(mini_repo):
    first = index_repository(mini_repo, jobs=1)
    second = index_repository(mini_repo, jobs=1)
    assert first.mode == "full" and second.mode == "unchanged"
    assert second.parsed == 0


def test_changed_file_is_reparsed_and_others_follow(mini_repo):
    index_repository(mini_repo, jobs=1)
    models = mini_repo / "src/shop/models.py"
    models.write_text(models.read_text().replace("def _touch(self):", "def _mark(self):")
                      .replace("self._touch()", "self._mark()"))
    report = index_repository(mini_repo, jobs=1)
    assert report.mode == "update" and report.parsed == 1
    assert report.reresolved == 0  # nothing outside models.py pointed at _touch
    con = duckdb.connect(str(report.db_path), read_only=True)
    names = {r[0] for r in con.execute("SELECT name FROM members WHERE class_qualname = 'shop.models.Cart'").fetchall()}
    assert "_mark" in names and "_touch" not in names
    assert con.execute("SELECT resolved_callee FROM calls WHERE callee_text = 'self._mark'").fetchall() == [
        ("shop.models.Cart._mark",)]
    con.close()


def test_update_equals_full_rebuild(mini_repo, tmp_path):
    index_repository(mini_repo, jobs=1, libraries=False)
    (mini_repo / "src/shop/pricing.py").write_text(textwrap.dedent("""\
        from .models import Item

        def cheapest(items):
            return min(items, key=lambda i: i.price)

        class Bargain(Item):
            def describe(self):
                return "bargain " + super().describe()
        """))
    (mini_repo / "src/shop/util/text.py").unlink()
    (mini_repo / "src/shop/new.py").write_text("from .pricing import cheapest as c\n\ndef pick(xs):\n    return c(xs)\n")
    updated = index_repository(mini_repo, jobs=1, libraries=False)
    assert updated.mode == "update" and updated.deleted == 1 and updated.parsed == 2
    rebuilt = index_repository(mini_repo, tmp_path / "full.duckdb", jobs=1, libraries=False)
    assert rebuilt.mode == "full"
    assert snapshot(updated.db_path) == snapshot(rebuilt.db_path)


def _library_snapshot(db_path):
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {t: con.execute(f"SELECT * FROM library.{t} ORDER BY ALL").fetchall() for t in ("files", "classes", "calls")}
    finally:
        con.close()


def test_with_the_library_layer_an_update_equals_a_rebuild_and_new_imports_bring_their_modules(mini_repo, tmp_path):
    first = index_repository(mini_repo, jobs=1)
    assert first.library_files > 0
    models = mini_repo / "src/shop/models.py"
    models.write_text(models.read_text().replace("def _touch(self):", "def _mark(self):")
                      .replace("self._touch()", "self._mark()"))
    updated = index_repository(mini_repo, jobs=1)
    rebuilt = index_repository(mini_repo, tmp_path / "full.duckdb", jobs=1)
    assert updated.mode == "update" and rebuilt.mode == "full"
    assert snapshot(updated.db_path) == snapshot(rebuilt.db_path)
    assert _library_snapshot(updated.db_path) == _library_snapshot(rebuilt.db_path)
    (mini_repo / "src/shop/archive.py").write_text("import zipfile\n\n\ndef pack(path):\n    return zipfile.ZipFile(path)\n")
    grown = index_repository(mini_repo, jobs=1)
    assert grown.mode == "full" and grown.library_files > first.library_files  # the new import's module came in
    con = duckdb.connect(str(grown.db_path), read_only=True)
    assert con.execute("SELECT resolved_callee, resolution FROM calls WHERE callee_text = 'zipfile.ZipFile'").fetchall() == [
        ("zipfile.ZipFile", "library")]
    assert con.execute("SELECT count(*) FROM classes WHERE qualname = 'zipfile.ZipFile'").fetchone() == (0,)  # project tables
    assert con.execute("SELECT layer FROM all_classes WHERE qualname = 'zipfile.ZipFile'").fetchall() == [("stdlib",)]
    con.close()


def test_touched_but_identical_file_is_not_reparsed(mini_repo):
    index_repository(mini_repo, jobs=1)
    path = mini_repo / "src/shop/models.py"
    path.write_text(path.read_text())  # new mtime, same bytes
    report = index_repository(mini_repo, jobs=1)
    assert report.parsed == 0


_CRASH_DURING_UPDATE = """
import os, sys
import codegraph.languages.python.incremental as incremental
def boom(*args, **kwargs):
    os._exit(17)  # like a kill -9 in the middle of writing
incremental.resolve_tables = boom
import codegraph.indexer as ix
ix.index_repository(sys.argv[1], jobs=1)
"""

_CRASH_DURING_FULL = """
import os, sys
import codegraph.build as build  # the writer thread's inserts
import codegraph.indexer as ix
real = build.insert_arrow
calls = []
def boom(con, name, table):
    calls.append(name)
    if len(calls) == 3:
        os._exit(17)
    return real(con, name, table)
build.insert_arrow = boom
ix.index_repository(sys.argv[1], jobs=1, full=True)
"""


@pytest.mark.parametrize("script", [_CRASH_DURING_UPDATE, _CRASH_DURING_FULL], ids=["update", "full"])
def test_crash_mid_index_leaves_previous_database_intact(mini_repo, script):
    report = index_repository(mini_repo, jobs=1)
    before = snapshot(report.db_path)
    raw_before = report.db_path.read_bytes()
    models = mini_repo / "src/shop/models.py"
    models.write_text(models.read_text().replace("class Cart(Base):", "class Trolley(Base):"))
    proc = subprocess.run([sys.executable, "-c", script, str(mini_repo)], capture_output=True, text=True)
    assert proc.returncode == 17, proc.stderr
    assert snapshot(report.db_path) == before
    if script is _CRASH_DURING_FULL:
        assert report.db_path.read_bytes() == raw_before
    # and the next run repairs everything
    after = index_repository(mini_repo, jobs=1)
    con = duckdb.connect(str(after.db_path), read_only=True)
    assert con.execute("SELECT count(*) FROM classes WHERE name = 'Trolley'").fetchone() == (1,)
    con.close()
    assert not list(after.db_path.parent.glob("*.building-*"))


def test_added_definition_resolves_calls_elsewhere_and_removed_one_unresolves_them(mini_repo, tmp_path):
    index_repository(mini_repo, jobs=1)
    user = mini_repo / "src" / "shop" / "user.py"
    user.write_text("from shop import pricing\n\n\ndef f():\n    return pricing.shipping(1)\n")
    index_repository(mini_repo, jobs=1)
    pricing = mini_repo / "src" / "shop" / "pricing.py"
    original = pricing.read_text()
    pricing.write_text(original + "\n\ndef shipping(weight):\n    return weight\n")
    added = index_repository(mini_repo, jobs=1)
    assert added.reresolved >= 1
    con = duckdb.connect(str(added.db_path), read_only=True)
    assert con.execute("SELECT resolved_callee FROM calls WHERE callee_text = 'pricing.shipping'").fetchall() == [
        ("shop.pricing.shipping",)]
    con.close()
    assert snapshot(added.db_path) == snapshot(index_repository(mini_repo, tmp_path / "a.duckdb", jobs=1).db_path)
    pricing.write_text(original)
    removed = index_repository(mini_repo, jobs=1)
    con = duckdb.connect(str(removed.db_path), read_only=True)
    assert con.execute("SELECT resolved_callee FROM calls WHERE callee_text = 'pricing.shipping'").fetchall() == [
        (None,)]
    con.close()
    assert snapshot(removed.db_path) == snapshot(index_repository(mini_repo, tmp_path / "b.duckdb", jobs=1).db_path)



def test_methods_named_by_a_string_and_guessed_by_name_follow_every_edit(tmp_path):
    """A getattr with a string gains the method a subclass adds in another file, and one with an
    upper-cased string the method in capitals (not the others); a call on an unknown receiver
    guessed by its method's name loses the guess when a second class family defines that name,
    and gets it back when that one goes: each update equals a rebuild."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "visit.py").write_text(textwrap.dedent("""\
        class Visitor:
            def visit(self, node):
                return getattr(self, "visit_" + type(node).__name__)(node)
        """))
    (repo / "handle.py").write_text(textwrap.dedent("""\
        from printer import Printer

        def handle(node):
            kind = type(node).__name__.upper()
            return getattr(Printer(), kind)(node)
        """))
    (repo / "printer.py").write_text(textwrap.dedent("""\
        from visit import Visitor

        class Printer(Visitor):
            def visit_Name(self, node):
                return "name"
        """))
    (repo / "page.py").write_text("class Page:\n    def render_all(self):\n        return 1\n")
    (repo / "use.py").write_text("def show(p):\n    return p.render_all()\n")
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, libraries=False, embed=False)

    def answers(text):
        con = duckdb.connect(str(db), read_only=True)
        try:
            return sorted(r for r in con.execute(
                "SELECT resolved_callee, resolution FROM calls WHERE callee_text = ? AND resolved_callee IS NOT NULL",
                [text]).fetchall())
        finally:
            con.close()

    def step(name, change):
        change()
        updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
        assert updated.mode == "update", name
        rebuilt = index_repository(repo, tmp_path / f"{name}.duckdb", jobs=1, libraries=False, embed=False)
        assert snapshot(db) == snapshot(rebuilt.db_path), name

    getattr_call = 'getattr(self, "visit_" + type(node).__name__)'
    assert answers(getattr_call) == [("printer.Printer.visit_Name", "getattr")]
    assert answers("getattr(Printer(), kind)") == []  # no method in capitals yet
    assert answers("p.render_all") == [("page.Page.render_all", "name")]
    step("override", lambda: (repo / "printer.py").write_text(
        (repo / "printer.py").read_text() + "\n    def visit_Call(self, node):\n        return 'call'\n"))
    assert answers(getattr_call) == [("printer.Printer.visit_Call", "getattr"),
                                     ("printer.Printer.visit_Name", "getattr")]
    assert answers("getattr(Printer(), kind)") == []
    step("in capitals", lambda: (repo / "printer.py").write_text(
        (repo / "printer.py").read_text() + "\n    def CALL(self, node):\n        return 'call'\n"))
    assert answers("getattr(Printer(), kind)") == [("printer.Printer.CALL", "getattr")]
    step("second family", lambda: (repo / "report.py").write_text(
        "class Report:\n    def render_all(self):\n        return 2\n"))
    assert answers("p.render_all") == []  # two families define it: no guess
    step("alone again", lambda: (repo / "report.py").unlink())
    assert answers("p.render_all") == [("page.Page.render_all", "name")]


def test_a_function_added_to_a_module_reaches_getattr_on_that_module_and_no_other_getattr(tmp_path):
    """getattr(module, "_" + x) gains a function the module adds, an update equal to a rebuild;
    a getattr on `self` with the same prefix cannot give a module's function, nor can a name bound
    to another module of the package, so its file (whose re-resolution would carry on to every file
    it passes arguments to) is left as it is."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "helpers.py").write_text("def _one(x):\n    return x\n")
    (repo / "by_module.py").write_text(textwrap.dedent("""\
        from pkg import helpers

        def run(kind):
            return getattr(helpers, "_" + kind)(1)
        """))
    (repo / "pkg" / "sibling.py").write_text("")
    (repo / "by_self.py").write_text(textwrap.dedent("""\
        from pkg import sibling  # the package above helpers, but the name bound is another module


        class Box:
            def _open(self):
                return 1

            def act(self, kind):
                return getattr(self, "_" + kind)()
        """))
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, libraries=False, embed=False)
    with (repo / "pkg" / "helpers.py").open("a") as f:
        f.write("\n\ndef _two(x):\n    return x\n")
    updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
    assert updated.mode == "update" and updated.reresolved == 1  # by_module.py, not by_self.py
    rebuilt = index_repository(repo, tmp_path / "rebuilt.duckdb", jobs=1, libraries=False, embed=False)
    assert snapshot(db) == snapshot(rebuilt.db_path)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert sorted(r[0] for r in con.execute(
            "SELECT resolved_callee FROM calls WHERE callee_text = 'getattr(helpers, \"_\" + kind)'").fetchall()) == [
            "pkg.helpers._one", "pkg.helpers._two"]
    finally:
        con.close()


def test_a_getattr_string_edited_in_its_file_is_what_the_next_update_reads(tmp_path):
    """What a file's getattr strings may name is kept per file (getattr_strings) and read by the
    next update: edited, the file's own row follows (equal to a rebuild's), and a method the
    edited string now names, added in another file, reaches it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "act.py").write_text(textwrap.dedent("""\
        from box import Box

        def act(kind):
            return getattr(Box(), "on_" + kind)()
        """))
    (repo / "box.py").write_text("class Box:\n    def on_open(self):\n        return 1\n")
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, libraries=False, embed=False)

    def step(name):
        updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
        assert updated.mode == "update", name
        rebuilt = index_repository(repo, tmp_path / f"{name}.duckdb", jobs=1, libraries=False, embed=False)
        assert snapshot(db) == snapshot(rebuilt.db_path), name
        con = duckdb.connect(str(db), read_only=True)
        try:
            return (con.execute("SELECT start FROM getattr_strings").fetchall(),
                    sorted(r[0] for r in con.execute("SELECT resolved_callee FROM calls WHERE resolution = 'getattr'"
                                                     ).fetchall()))
        finally:
            con.close()

    (repo / "act.py").write_text((repo / "act.py").read_text().replace('"on_"', '"do_"'))
    assert step("edited") == ([("do_",)], [])
    (repo / "box.py").write_text((repo / "box.py").read_text() + "\n    def do_close(self):\n        return 2\n")
    assert step("added") == ([("do_",)], ["box.Box.do_close"])


def _reader(db_path, sql):
    """A process that opens the graph read-only, answers `sql` once, waits for a line, answers again."""
    code = ("import sys, duckdb; con = duckdb.connect(sys.argv[1], read_only=True); q = sys.argv[2]\n"
            "print(con.execute(q).fetchone()[0], flush=True); sys.stdin.readline()\n"
            "print(con.execute(q).fetchone()[0], flush=True)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(db_path), sql], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    first = proc.stdout.readline().strip()
    return proc, first


def test_an_update_while_readers_hold_the_file_swaps_in_a_new_snapshot(mini_repo):
    """DuckDB admits a writer only alone: with readers present the update writes a copy and swaps
    it in; readers keep the state they opened, new readers see the new one, nobody fails."""
    report = index_repository(mini_repo, jobs=1, libraries=False)
    count = "SELECT count(*) FROM globals WHERE name = 'brand_new'"
    reader, before = _reader(report.db_path, count)
    try:
        assert index_repository(mini_repo, jobs=1, libraries=False).mode == "unchanged"  # a no-op is read-only
        (mini_repo / "src/shop/new.py").write_text("def brand_new():\n    return 1\n")
        updated = index_repository(mini_repo, jobs=1, libraries=False)
        assert updated.mode == "update" and updated.parsed == 1
        out, _ = reader.communicate("\n", timeout=30)
    finally:
        reader.kill()
    assert before == "0" and out.strip() == "0"  # the reader's snapshot did not move under it
    con = duckdb.connect(str(report.db_path), read_only=True)
    try:
        assert con.execute(count).fetchone()[0] == 1
    finally:
        con.close()
    assert not list(report.db_path.parent.glob("*.building-*"))


def _many_files_repo(root):
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    for i in range(30):
        (root / f"pkg/m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    return root


def test_a_script_without_a_main_guard_gets_a_clear_error_not_a_hang(tmp_path):
    """Workers start from a fresh interpreter that imports the calling script again; that second
    call must not wait for the lock the first one holds."""
    repo = _many_files_repo(tmp_path / "repo")
    script = tmp_path / "unguarded.py"
    script.write_text("import sys\nimport codegraph.build\nfrom codegraph.indexer import index_repository\n"
                      "codegraph.build.PARALLEL_BYTES = 0  # workers even for a few small files\n"
                      "index_repository(sys.argv[1], jobs=2, embed=False, libraries=False)\n")
    proc = subprocess.run([sys.executable, str(script), str(repo)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert 'if __name__ == "__main__"' in proc.stderr.splitlines()[-1]
    guarded = tmp_path / "guarded.py"
    guarded.write_text("import sys\nimport codegraph.build\nfrom codegraph.indexer import index_repository\n"
                       "codegraph.build.PARALLEL_BYTES = 0\n"
                       "if __name__ == '__main__':\n"
                       "    print(index_repository(sys.argv[1], jobs=2, embed=False, libraries=False).parsed)\n")
    proc = subprocess.run([sys.executable, str(guarded), str(repo)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "31"


@pytest.mark.slow
def test_emptying_the_resolver_caches_changes_no_answer(tmp_path, monkeypatch, stdlib_root):
    """The resolver's caches are emptied when full (bounded memory on big repositories): on a
    real package, caches of 4 entries give the same graph as caches that never fill."""
    import codegraph.languages.python.resolve

    def graph(name):
        db_path = tmp_path / f"{name}.duckdb"
        index_repository(stdlib_root / "email", db_path, jobs=1, embed=False)
        return snapshot(db_path)

    roomy = graph("roomy")
    monkeypatch.setattr(codegraph.languages.python.resolve, "_MEMO_LIMIT", 4)
    cramped = graph("cramped")
    assert roomy == cramped
    assert sum(1 for row in roomy["calls"] if row[-1] == "type") > 20  # answers that need the caches' work


def test_a_build_defers_full_collections_and_leaves_the_process_settings_as_it_found_them(mini_repo, monkeypatch):
    import gc

    import pyarrow as pa

    import codegraph.languages.python.resolution as ix

    seen = []
    real = ix.build_resolver

    def watching(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(ix, "build_resolver", watching)
    before_gc, before_pool = gc.get_threshold(), pa.default_memory_pool().backend_name
    gc.set_threshold(555, 7, 9)
    custom = gc.get_threshold()  # (555, 7, 0) where the collector is incremental and has no third threshold
    try:
        index_repository(mini_repo, jobs=1, full=True)
        assert seen and seen[0][:2] == (555, 7)  # young collections as set
        if custom[2] == 9:
            assert seen[0][2] >= 1 << 20  # and no full ones
        assert gc.get_threshold() == custom
    finally:
        gc.set_threshold(*before_gc)
    assert pa.default_memory_pool().backend_name == before_pool


@pytest.mark.slow
def test_an_update_with_the_library_layer_equals_a_rebuild_on_asyncio(tmp_path):
    """issue 27, row 12: a comment appended to asyncio/unix_events.py; after the update
    `stdin_w.close()` (stdin_w from `socket.socketpair()`) resolved to socket.socket.close through
    the library, after a rebuild to nothing: a full build now reads library functions' names
    before it answers the project's calls, as an update's scope loader does."""
    import sysconfig
    from pathlib import Path

    from benchmarks.update_replay import asyncio_pair, replay

    old, new = asyncio_pair(Path(sysconfig.get_paths()["stdlib"]), tmp_path / "trees")
    result = replay(old, new, tmp_path / "work", libraries=True)
    assert result["files_changed"] == 1 and result["steps_compared"] == 1
    assert result["differences"] == []
    con = duckdb.connect(str(tmp_path / "work" / "repo" / ".codegraph" / "graph.duckdb"), read_only=True)
    assert con.execute("SELECT DISTINCT resolved_callee FROM calls WHERE callee_text = 'stdin_w.close'").fetchall() \
        == [("socket.socket.close",)]


@pytest.mark.parametrize("watch", [True, False], ids=["inotify", "stats"])
def test_a_snapshot_sees_every_change_at_once(tmp_path, watch):
    """issue 27, row 18: what `codegraph mcp` asks before every answer. An edit of the same size
    right after the snapshot, a new file, a new folder, a deletion: each seen with no pause; a
    file the graph cannot hold (notes.txt) and a folder never walked (`__pycache__`, the index's own
    `.codegraph/`, made beside the code by the first index) are not a change."""
    from codegraph.discover import Snapshot

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("A = 1\n")

    def snapshot():
        taken = Snapshot.of(repo)
        if not watch:
            taken.close()
        elif taken.watch is None:
            pytest.skip("no inotify here")
        return taken

    edits = [lambda: (repo / "pkg" / "a.py").write_text("A = 2\n"),
             lambda: (repo / "pkg" / "b.py").write_text("B = 1\n"),
             lambda: (repo / "pkg" / "sub").mkdir(),
             lambda: (repo / "pkg" / "sub" / "c.py").write_text("C = 1\n"),
             lambda: (repo / "pkg" / "b.py").unlink(),
             lambda: (repo / ".gitignore").write_text("pkg/a.py\n")]
    for edit in edits:
        taken = snapshot()
        (repo / "notes.txt").write_text(str(time.time()))
        (repo / "pkg" / "__pycache__").mkdir(exist_ok=True)
        assert watch is False or not taken.changed()  # the stats see notes.txt's folder change
        edit()
        assert taken.changed(), edit
        taken.close()


def test_an_update_that_cannot_follow_says_why_and_the_graph_is_built_afresh(mini_repo, tmp_path):
    """"Must rebuild" is the update's verdict, kept in the report and shown by `codegraph index`."""
    from codegraph.formatting import index_summary

    db_path = tmp_path / "g.duckdb"
    first = index_repository(mini_repo, db_path, jobs=1, libraries=False, embed=False)
    assert first.mode == "full" and first.rebuilt_because == ""
    same = index_repository(mini_repo, db_path, jobs=1, libraries=False, embed=False)
    assert same.mode == "unchanged" and same.rebuilt_because == ""
    other = index_repository(mini_repo, db_path, jobs=1, libraries=False, embed=True)
    assert other.mode == "full" and other.rebuilt_because == f"{db_path} was built without embeddings"
    assert f"built afresh: {db_path} was built without embeddings" in index_summary(other)
    fresh = index_repository(mini_repo, tmp_path / "fresh.duckdb", jobs=1, libraries=False, embed=True)
    assert snapshot(db_path) == snapshot(fresh.db_path)


def test_a_build_starts_one_pool_of_workers_and_only_when_the_work_pays_for_it(mini_repo, monkeypatch):
    """issue 28, row 3: the project's files and every level of the library layer were each parsed
    by a pool of their own (six on click, about 0.5 s each); a pool now serves the whole build,
    and a repository too small to pay for one is parsed in this process."""
    import concurrent.futures

    import codegraph.build

    started = []
    real = concurrent.futures.ProcessPoolExecutor

    def counting(*args, **kwargs):
        started.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(codegraph.build.concurrent.futures, "ProcessPoolExecutor", counting)
    small = index_repository(mini_repo, jobs=2, embed=False)
    assert small.library_files > 20 and started == []  # a few kB of project, a small library layer: no pool

    monkeypatch.setattr(codegraph.build, "PARALLEL_BYTES", 0)
    everything = index_repository(mini_repo, jobs=2, embed=False, full=True)
    assert everything.library_files == small.library_files and len(started) == 1


def test_an_augmented_assignment_runs_the_operator_a_class_gains_after_an_update(tmp_path):
    """`a += 1` runs a.__iadd__, or else a.__add__ (the language reference): the row names
    __iadd__, so a class that gains __add__ must reach it, as a rebuild does; `-a` its __neg__."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "vec.py").write_text("class Vec:\n    def __init__(self, x):\n        self.x = x\n")
    (repo / "pkg" / "use.py").write_text(textwrap.dedent("""\
        from pkg.vec import Vec

        def use():
            a = Vec(1)
            a += 2
            return a
        """))
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, libraries=False, embed=False)
    with (repo / "pkg" / "vec.py").open("a") as f:
        f.write("\n    def __add__(self, other):\n        return self\n")
    updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
    assert updated.mode == "update" and updated.reresolved == 1
    rebuilt = index_repository(repo, tmp_path / "rebuilt.duckdb", jobs=1, libraries=False, embed=False)
    assert snapshot(db) == snapshot(rebuilt.db_path)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT resolved_callee FROM calls WHERE callee_text = 'a.__iadd__'").fetchall() == [
            ("pkg.vec.Vec.__add__",)]
    finally:
        con.close()


def test_property_objects_property_overrides_and_guesses_by_use_follow_every_edit(tmp_path):
    """A property a subclass in another file adds is an override of a read; a property made by a
    factory follows the factory's new return; a receiver guessed by the members the caller uses
    loses the guess when a second family has them all and gets it back when it goes: each update
    equals a rebuild."""
    repo = tmp_path / "repo"
    repo.mkdir()
    files = {
        "pattern.py": "class Pattern:\n    @property\n    def width(self):\n        return 0\n",
        "use.py": "from pattern import Pattern\n\ndef widest(p: Pattern):\n    return p.width\n",
        "props.py": textwrap.dedent("""\
            def header(name):
                def fget(response):
                    return response.headers[name]

                return property(fget)
            """),
        "resp.py": "from props import header\n\nclass Response:\n    content_type = header('ct')\n",
        "reader.py": "from resp import Response\n\ndef kind(r: Response):\n    return r.content_type\n",
        "proc.py": textwrap.dedent("""\
            class Processor:
                def test(self, block):
                    return True

                def run(self, block):
                    return block

            class Job:
                def run(self, block):
                    return block
            """),
        "loop.py": "def parse(processors, block):\n    for p in processors:\n        if p.test(block):\n"
                   "            return p.run(block)\n",
    }
    for name, text in files.items():
        (repo / name).write_text(text)
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, libraries=False, embed=False)

    answers = functools.partial(_callees, db)

    def step(name, path, text):
        (repo / path).unlink() if text is None else (repo / path).write_text(text)
        updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
        assert updated.mode == "update", name
        rebuilt = index_repository(repo, tmp_path / f"{name}.duckdb", jobs=1, libraries=False, embed=False)
        assert snapshot(db) == snapshot(rebuilt.db_path), name

    assert answers("p.width") == ["pattern.Pattern.width"]
    assert answers("r.content_type") == ["props.header.<locals>.fget"]
    assert answers("p.run") == ["proc.Processor.run"]
    step("subclass", "text.py", "from pattern import Pattern\n\nclass Text(Pattern):\n    @property\n"
                                "    def width(self):\n        return 1\n")
    assert answers("p.width") == ["pattern.Pattern.width", "text.Text.width"]
    step("factory", "props.py", files["props.py"].replace("fget", "getter"))
    assert answers("r.content_type") == ["props.header.<locals>.getter"]
    step("second family", "job.py", "class Runner:\n    def test(self, block):\n        return False\n\n"
                                    "    def run(self, block):\n        return None\n")
    assert answers("p.run") == []  # Runner has test and run too: no guess
    step("alone again", "job.py", None)
    assert answers("p.run") == ["proc.Processor.run"]


def test_what_calls_keep_in_a_container_follows_every_edit(tmp_path):
    """`for f in self.filters: f.process()` runs the process of what any file appends to a
    Stack's filters, or registers in a container class of the project (`register` keeps its item):
    a file that starts or stops keeping something there changes the answer in the file that
    iterates, each update equal to a rebuild."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "stack.py").write_text(textwrap.dedent("""\
        class Registry:
            def __init__(self):
                self._data = {}

            def register(self, item, name):
                self._data[name] = item

            def __iter__(self):
                return iter(list(self._data.values()))


        class Stack:
            def __init__(self):
                self.filters = []
                self.steps = Registry()

            def apply(self, text):
                for f in self.filters:
                    text = f.process(text)
                for step in self.steps:
                    step.run(text)
                return text
        """))
    (repo / "filters.py").write_text(textwrap.dedent("""\
        class Strip:
            def process(self, text):
                return text.strip()

            def run(self, text):
                return text


        class Upper:
            def process(self, text):
                return text.upper()

            def run(self, text):
                return text
        """))
    (repo / "build.py").write_text(textwrap.dedent("""\
        from filters import Strip, Upper

        def build(stack):
            stack.filters.append(Strip())
        """))
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, libraries=False, embed=False)

    answers = functools.partial(_callees, db)

    def step(name, text):
        (repo / "build.py").write_text(textwrap.dedent(text))
        updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
        assert updated.mode == "update", name
        rebuilt = index_repository(repo, tmp_path / f"{name}.duckdb", jobs=1, libraries=False, embed=False)
        assert snapshot(db) == snapshot(rebuilt.db_path), name

    assert answers("f.process") == ["filters.Strip.process"] and answers("step.run") == []
    step("appended", """\
        from filters import Strip, Upper

        def build(stack):
            stack.filters.append(Strip())
            stack.filters.append(Upper())
            stack.steps.register(Upper(), "upper")
        """)
    assert answers("f.process") == ["filters.Strip.process", "filters.Upper.process"]
    assert answers("step.run") == ["filters.Upper.run"]
    step("no more", """\
        from filters import Strip, Upper

        def build(stack):
            return stack
        """)
    assert answers("f.process") == [] and answers("step.run") == []


def test_what_methods_write_to_an_attribute_follows_every_edit(tmp_path):
    """`self.state = self.next_state` in any method of the class's family, `self.state()` in
    another: a subclass in another file that writes another state changes what the base's loop
    runs, each update equal to a rebuild."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "tok.py").write_text(textwrap.dedent("""\
        class Tokenizer:
            def __init__(self):
                self.state = self.data_state

            def data_state(self):
                self.state = self.tag_state
                return True

            def tag_state(self):
                return False

            def run(self):
                while self.state():
                    pass
        """))
    (repo / "sub.py").write_text(textwrap.dedent("""\
        from tok import Tokenizer

        class Sub(Tokenizer):
            def tag_state(self):
                self.state = self.end_state
                return True

            def end_state(self):
                return False

            def other_state(self):
                return False

            def again(self):
                self.state = self.end_state
                return self.state()
        """))
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, libraries=False, embed=False)

    answers = functools.partial(_callees, db, "self.state")

    assert {"sub.Sub.end_state", "tok.Tokenizer.data_state", "tok.Tokenizer.tag_state", "sub.Sub.tag_state"} <= \
        set(answers()) and "sub.Sub.other_state" not in answers()
    (repo / "sub.py").write_text((repo / "sub.py").read_text().replace("self.state = self.end_state",
                                                                       "self.state = self.other_state", 1))
    updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
    assert updated.mode == "update"
    rebuilt = index_repository(repo, tmp_path / "rebuilt.duckdb", jobs=1, libraries=False, embed=False)
    assert snapshot(db) == snapshot(rebuilt.db_path)
    assert "sub.Sub.other_state" in answers() and "sub.Sub.end_state" in answers()  # again() still writes it
    # the base's own write changes what the subclass's `self.state()` (its own attribute) runs
    (repo / "tok.py").write_text((repo / "tok.py").read_text().replace("self.state = self.tag_state",
                                                                       "self.state = self.data_state"))
    updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
    assert updated.mode == "update"
    rebuilt = index_repository(repo, tmp_path / "rebuilt2.duckdb", jobs=1, libraries=False, embed=False)
    assert snapshot(db) == snapshot(rebuilt.db_path)
    assert "tok.Tokenizer.tag_state" not in answers()


def test_an_update_learns_only_the_modules_its_lookups_ask_about_and_equals_a_rebuild(tmp_path, monkeypatch):
    """The update's resolver learns a module when a lookup first names it (learning.py): a leaf
    edit learns the modules it names, not the 30 others; a name both a package assigns and a
    submodule defines (`pkg.sub`) comes out as a full build decides it, though the package is
    learned first (for `pkg.make`) and the submodule asked about after."""
    repo = tmp_path / "repo"
    files = {
        "pkg/__init__.py": "from .maker import make\nsub = make()\n",
        "pkg/maker.py": "class Made:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 3\n\n"
                        "def make():\n    return Made()\n",
        "pkg/sub.py": "def f():\n    return 2\n",
        "use.py": "from pkg import make\nimport pkg\n\ndef go():\n    return make().f() + pkg.sub.f()\n",
        **{f"other{i}.py": f"class K{i}:\n    def m(self):\n        return {i}\n" for i in range(30)},
    }
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    db = tmp_path / "g.duckdb"
    index_repository(repo, db, jobs=1, embed=False, libraries=False)
    learners = []
    real = incremental.learning_resolver

    def watching(*args):
        resolver, learner = real(*args)
        learners.append(learner)
        return resolver, learner

    monkeypatch.setattr(incremental, "learning_resolver", watching)
    (repo / "use.py").write_text(files["use.py"] + "\n\ndef again():\n    return pkg.sub.g()\n")
    assert index_repository(repo, db, jobs=1, embed=False, libraries=False).mode == "update"
    rebuilt = tmp_path / "r.duckdb"
    index_repository(repo, rebuilt, jobs=1, embed=False, libraries=False, full=True)
    assert snapshot(db) == snapshot(rebuilt)
    learned = learners[-1].learned
    assert {"use", "pkg", "pkg.sub"} <= learned and not learners[-1].whole
    assert not any(m.startswith("other") for m in learned)
    assert "pkg.maker.Made.g" in _callees(db, "pkg.sub.g")  # the later assignment wins, as in a full build


def test_a_base_read_through_the_class_tree_resolves_in_an_update_as_in_a_rebuild(tmp_path):
    """`class BaseEnum(self.enum_type)` in a mixin's method: `self.enum_type` is a subclass's
    attribute, found through the class tree. The tree is made before any answer, so the base is
    the same whichever answer needs the tree first (another file's call, or the base itself,
    which met the tree half made and gave None: an update of the stdlib's test_enum.py differed
    from its rebuild so)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a_first.py").write_text("from tests_x import _EnumTests\n\ndef use(t: _EnumTests):\n    return t.setUp()\n")
    (repo / "tests_x.py").write_text(textwrap.dedent("""\
        from enum import Enum, IntEnum

        class _EnumTests:
            def setUp(self):
                class BaseEnum(self.enum_type):
                    pass
                self.BaseEnum = BaseEnum

        class TestPlainEnum(_EnumTests):
            enum_type = Enum

        class TestIntEnum(_EnumTests):
            enum_type = IntEnum
        """))
    db = tmp_path / "g.duckdb"
    index_repository(repo, db, jobs=1, embed=False, libraries=False)
    with open(repo / "tests_x.py", "a") as fh:
        fh.write("\n\ndef added():\n    return 2\n")
    assert index_repository(repo, db, jobs=1, embed=False, libraries=False).mode == "update"
    rebuilt = tmp_path / "r.duckdb"
    index_repository(repo, rebuilt, jobs=1, embed=False, libraries=False, full=True)
    assert snapshot(db) == snapshot(rebuilt)
    con = duckdb.connect(str(db), read_only=True)
    try:
        bases = con.execute("SELECT base_qualnames FROM classes WHERE name = 'BaseEnum'").fetchone()[0]
    finally:
        con.close()
    assert bases == ["tests_x.TestIntEnum.enum_type"]


def _file_size(db_path):
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        total, free = con.execute("SELECT total_blocks * block_size, free_blocks FROM pragma_database_size() "
                                  "WHERE database_name = current_database()").fetchone()
        return total, free, con.execute("SELECT value FROM meta WHERE key = 'whole_bytes'").fetchone()
    finally:
        con.close()


def _edit_models(mini_repo):
    models = mini_repo / "src/shop/models.py"
    models.write_text(models.read_text().replace("class Cart(Base):", "class Trolley(Base):")
                      .replace("Cart", "Trolley"))


def test_an_update_that_grew_the_file_writes_it_whole_and_equals_a_rebuild(mini_repo, tmp_path, monkeypatch):
    from codegraph import db, update
    index_repository(mini_repo, jobs=1, libraries=False, embed=False)
    monkeypatch.setattr(update, "GROWN_AT", 0)  # every update has grown past it
    monkeypatch.setattr(update, "GROWN_BY_AT_LEAST", 0)
    written = []
    real = update._write_whole
    monkeypatch.setattr(update, "_write_whole", lambda path: written.append(path) or real(path))
    _edit_models(mini_repo)
    report = index_repository(mini_repo, jobs=1, libraries=False, embed=False)
    assert report.mode == "update" and len(written) == 1
    total, free, whole = _file_size(report.db_path)
    assert free <= 1 and whole is not None and int(whole[0]) <= total  # no space left free but the meta row's
    rebuilt = index_repository(mini_repo, tmp_path / "full.duckdb", jobs=1, libraries=False, embed=False)
    assert snapshot(report.db_path) == snapshot(rebuilt.db_path)
    con = db.open_graph(report.db_path)  # views and macros came along
    try:
        assert con.execute("SELECT count(*) FROM symbols WHERE name = 'Trolley'").fetchone()[0] > 0
    finally:
        con.close()
    assert not [p for p in report.db_path.parent.iterdir() if ".building-" in p.name or p.name.endswith(".whole")]


def test_an_update_that_did_not_grow_the_file_keeps_it_and_records_its_size(mini_repo):
    first = index_repository(mini_repo, jobs=1, libraries=False, embed=False)
    size_built = _file_size(first.db_path)[0]
    _edit_models(mini_repo)
    report = index_repository(mini_repo, jobs=1, libraries=False, embed=False)
    assert report.mode == "update"
    assert _file_size(report.db_path)[2] == (str(size_built),)  # the full build's size, what growth is measured from


def test_a_whole_write_that_fails_leaves_the_update_as_it_was(mini_repo, tmp_path, monkeypatch):
    from codegraph import update
    index_repository(mini_repo, jobs=1, libraries=False, embed=False)
    monkeypatch.setattr(update, "GROWN_AT", 0)
    monkeypatch.setattr(update, "GROWN_BY_AT_LEAST", 0)
    real = update.db.connect_writable

    def failing(path):
        if str(path).endswith(".whole"):
            raise OSError("no space left on device")
        return real(path)

    monkeypatch.setattr(update.db, "connect_writable", failing)
    _edit_models(mini_repo)
    report = index_repository(mini_repo, jobs=1, libraries=False, embed=False)
    assert report.mode == "update"
    rebuilt = index_repository(mini_repo, tmp_path / "full.duckdb", jobs=1, libraries=False, embed=False)
    assert snapshot(report.db_path) == snapshot(rebuilt.db_path)
    assert not [p for p in report.db_path.parent.iterdir() if p.name.endswith((".whole", ".whole.wal"))]


def test_an_update_equals_its_rebuild_whatever_order_the_database_keeps_the_calls_in(tmp_path, stdlib_root):
    """An update reads the rows of the files it resolves again, and the calls that keep values in
    containers, from the database, where the functions an earlier update kept (carry.py) leave
    them in another order than a parse gives; answers worked out while another is half made, and
    the first of a container's values, depended on which came first (python-dateutil's
    `naive.replace` differed from its rebuild after two edits; here `n.nodeName` in xml.dom).
    The rows are asked and learned in the order of the source, however they are stored."""
    repo = tmp_path / "repo"
    for name in ("email", "xml", "json"):
        shutil.copytree(stdlib_root / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "test*"))
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, embed=False, libraries=False)
    con = duckdb.connect(str(db))
    try:  # the calls stored in an order no parse gives
        con.execute("CREATE TEMP TABLE shuffled AS SELECT * FROM calls ORDER BY hash(rowid + 7)")
        con.execute("DELETE FROM calls")
        con.execute("INSERT INTO calls SELECT * FROM shuffled")
    finally:
        con.close()
    for path in ("xml/dom/minicompat.py", "email/utils.py"):
        edited = mutated((repo / path).read_text(encoding="utf-8"), path)
        assert edited is not None
        (repo / path).write_text(edited[0], encoding="utf-8")
        updated = index_repository(repo, db, jobs=1, embed=False, libraries=False)
        assert updated.mode == "update" and updated.reresolved > 10
        rebuilt = index_repository(repo, tmp_path / "rebuilt.duckdb", jobs=1, embed=False, libraries=False, full=True)
        assert snapshot(db) == snapshot(rebuilt.db_path), path


def test_a_submodule_that_comes_answers_the_imports_that_named_it(tmp_path):
    """`from pkg import sub` names the module pkg.sub by the target it writes: when sub.py comes
    (python-dateutil's move to src/ brought `dateutil/tz/__init__.py` after the files importing
    it), the importers are resolved again, as a rebuild resolves them."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "user.py").write_text(textwrap.dedent("""\
        from pkg import sub

        def use():
            return sub.make()
        """))
    db = tmp_path / "graph.duckdb"
    index_repository(repo, db, jobs=1, libraries=False, embed=False)
    (repo / "pkg" / "sub.py").write_text("import os\n\n\ndef make():\n    return os.sep\n")  # imports: not definitions alone
    updated = index_repository(repo, db, jobs=1, libraries=False, embed=False)
    assert updated.mode == "update" and updated.reresolved == 1
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT resolved_qualname FROM imports WHERE name = 'sub'").fetchone() == ("pkg.sub",)
        assert con.execute("SELECT resolved_callee FROM calls WHERE callee_text = 'sub.make'").fetchone() == \
            ("pkg.sub.make",)
    finally:
        con.close()
    rebuilt = index_repository(repo, tmp_path / "rebuilt.duckdb", jobs=1, libraries=False, embed=False, full=True)
    assert snapshot(db) == snapshot(rebuilt.db_path)

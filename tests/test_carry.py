"""An update resolves again only the functions of a changed file that changed, and those the
change reaches as it reaches other files (carry.py); the rest keep their rows, moved to their
new lines. Each edit is held to a full rebuild of the same tree."""

import duckdb
import pytest

import codegraph.languages.python.incremental as incremental
from codegraph.indexer import index_repository
from codegraph.schema import BY_NAME

from conftest import snapshot

BASE = {
    "p/__init__.py": "",
    "p/kinds.py": "class A:\n    def run(self):\n        return 1\n\n\nclass B:\n    def run(self):\n        return 2\n",
    "p/work.py": """\
from p.kinds import A, B

HANDLER = A


def make():
    return A()


def use():
    return make().run()


def bare():
    return HANDLER().run()


def helper(cb):
    return cb()


def main():
    return helper(A)


class Job:
    def first(self):
        return A().run()

    def second(self):
        from p.kinds import B as Local
        return Local().run()

    def third(self):
        class Inner(A):
            pass
        return Inner().run()
""",
}


def _build(tmp_path, files=BASE):
    root = tmp_path / "repo"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    index_repository(root, jobs=1, libraries=False, embed=False)
    return root


def _update(tmp_path, root, monkeypatch, n=0, imported=None):
    """Update, record which callers the resolver was handed (and into `imported`, the modules of
    the imports rows), and hold the graph to a rebuild."""
    handed: set[str] = set()
    imported = set() if imported is None else imported
    resolve = incremental.resolve_tables

    def watching(resolver, tables, *args, **kwargs):
        handed.update(tables["calls"].column("caller_qualname").to_pylist())
        imported.update(tables["imports"].column("module").to_pylist())
        return resolve(resolver, tables, *args, **kwargs)

    monkeypatch.setattr(incremental, "resolve_tables", watching)
    updated = index_repository(root, jobs=1, libraries=False, embed=False)
    monkeypatch.setattr(incremental, "resolve_tables", resolve)
    rebuilt = index_repository(root, tmp_path / f"full{n}.duckdb", jobs=1, libraries=False, embed=False)
    assert updated.mode == "update"
    assert snapshot(updated.db_path) == snapshot(rebuilt.db_path)
    con = duckdb.connect(str(updated.db_path), read_only=True)
    try:  # every row is its file's again: no carrier is left
        files = {r[0] for r in con.execute("SELECT file_id FROM files").fetchall()}
        for table in ("modules", "classes", "members", "globals", "nested_functions", "parameters", "bindings",
                      "imports", "calls", "refs", "inheritance"):
            assert "file_id" in BY_NAME[table].names()
            assert {r[0] for r in con.execute(f"SELECT DISTINCT file_id FROM {table}").fetchall()} <= files, table
        assert not con.execute("SELECT path FROM files WHERE NOT EXISTS (SELECT 1 FROM modules m "
                               "WHERE m.file_id = files.file_id)").fetchall()
        edges = set(con.execute("SELECT caller_qualname, resolved_callee, resolution FROM calls").fetchall())
        lines = dict(con.execute("SELECT caller_qualname || ' ' || callee_text, line FROM calls "
                                 "WHERE NOT alternative AND kind = 'call'").fetchall())
    finally:
        con.close()
    return handed, edges, lines


def test_an_edit_of_one_function_resolves_it_and_keeps_the_others_at_their_new_lines(tmp_path, monkeypatch):
    root = _build(tmp_path)
    work = root / "p/work.py"
    work.write_text(work.read_text().replace("def make():\n    return A()\n",
                                             "def make():\n    made = A()\n    return made\n"))
    handed, edges, lines = _update(tmp_path, root, monkeypatch)
    assert "p.work.make" in handed
    # what make returns is read by use only; the other functions keep their rows
    assert not {"p.work.bare", "p.work.helper", "p.work.main", "p.work.Job.first", "p.work.Job.second",
                "p.work.Job.third"} & handed
    assert ("p.work.use", "p.kinds.A.run", "type") in edges or ("p.work.use", "p.kinds.A.run", "return") in edges
    assert lines["p.work.Job.first A().run"] == BASE["p/work.py"].splitlines().index("        return A().run()") + 2


@pytest.mark.parametrize("old, new, reader, now", [
    ("def make():\n    return A()\n", "def make():\n    return B()\n", "p.work.use", "p.kinds.B.run"),  # what it returns
    ("HANDLER = A\n", "HANDLER = B\n", "p.work.bare", "p.kinds.B.run"),  # a value read by its bare name
    ("return helper(A)", "return helper(B)", "p.work.helper", "p.kinds.B"),  # what a kept function is passed
], ids=["return", "bare-name", "passed"])
def test_a_kept_function_the_change_reaches_is_resolved_again(tmp_path, monkeypatch, old, new, reader, now):
    root = _build(tmp_path)
    work = root / "p/work.py"
    work.write_text(work.read_text().replace(old, new))
    handed, edges, _ = _update(tmp_path, root, monkeypatch)
    assert reader in handed
    assert any(e[:2] == (reader, now) for e in edges)
    assert not any(e[:2] == (reader, now.replace(".B", ".A")) for e in edges)


@pytest.mark.parametrize("edit", [
    lambda s: s + "\n# a comment at the end\n",
    lambda s: s.replace("from p.kinds import A, B\n", "from p.kinds import A, B\n\n\n"),  # every line below moves
    lambda s: s.replace("class Inner(A):", "class Inner(B):"),  # a local class's base
    lambda s: s.replace("import B as Local", "import A as Local"),  # a local import
    lambda s: s.replace("def second(self):", "def second(self, extra=None):"),  # a signature
    lambda s: s.replace("def helper(cb):\n    return cb()\n", ""),  # a kept function's callee removed
    lambda s: s.replace("from p.kinds import A, B", "from p.kinds import A, B as A2"),  # the file's imports
], ids=["comment", "lines-moved", "local-base", "local-import", "signature", "removed", "imports"])
def test_every_edit_of_a_file_with_kept_functions_equals_a_rebuild(tmp_path, monkeypatch, edit):
    root = _build(tmp_path)
    work = root / "p/work.py"
    work.write_text(edit(work.read_text()))
    handed, _, _ = _update(tmp_path, root, monkeypatch)
    if edit(BASE["p/work.py"]).endswith("# a comment at the end\n"):
        assert not {c for c in handed if c.startswith("p.work.")} - {"p.work", "p.work.Job"}


def _edges_after(tmp_path, monkeypatch, files, edits):
    """Index `files`, apply `edits` (path -> new text) at once, update: (handed, edges)."""
    root = _build(tmp_path, files)
    for path, text in edits.items():
        (root / path).write_text(text)
    handed, edges, _ = _update(tmp_path, root, monkeypatch)
    return handed, edges


def test_a_kept_method_of_a_class_whose_subclass_gains_an_override_is_resolved_again(tmp_path, monkeypatch):
    base = "class Base:\n    def run(self):\n        return self.step()\n\n    def step(self):\n        return 0\n\n\n"
    files = {"p/__init__.py": "", "p/m.py": base + "class Sub(Base):\n    pass\n"}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {
        "p/m.py": base + "class Sub(Base):\n    def step(self):\n        return 1\n"})
    assert "p.m.Base.run" in handed
    assert ("p.m.Base.run", "p.m.Sub.step", "override") in edges


def test_a_kept_function_calling_a_name_its_file_gains_is_resolved_again(tmp_path, monkeypatch):
    # the rules by name read only the files whose words hold the name (schema.WORD_OF): the
    # changed file's are of its whole old text, so its functions kept apart are among them
    later = "def later():\n    return spare()\n"
    files = {"p/__init__.py": "", "p/m.py": later}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {"p/m.py": later + "\n\ndef spare():\n    return 1\n"})
    assert "p.m.later" in handed
    assert ("p.m.later", "p.m.spare", "local") in edges


def test_a_kept_function_whose_return_reads_a_changed_value_by_its_bare_name_passes_it_on(tmp_path, monkeypatch):
    shells = ("class Shell:\n    pass\n\n\nclass Bash(Shell):\n    pass\n\n\n"
              "SHELLS = {{'bash': {}}}\n\n\ndef pick(name):\n    return SHELLS.get(name)\n")
    files = {"p/__init__.py": "", "p/shells.py": shells.format("Bash"),
             "p/term.py": "from p.shells import pick\n\n\ndef complete(name):\n    cls = pick(name)\n    return cls()\n"}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {"p/shells.py": shells.format("Shell")})
    assert "p.term.complete" in handed
    assert ("p.term.complete", "p.shells.Shell", "return") in edges


def test_getattr_in_a_kept_function_reads_the_imports_of_its_file(tmp_path, monkeypatch):
    work = ("import p.kinds as kinds\n\n\ndef pick(name):\n    return getattr(kinds, 'make_' + name)()\n\n\n"
            "def other():\n    return {{}}\n\n\nLEVEL = {}\n")
    files = {"p/__init__.py": "", "p/kinds.py": "def other():\n    return 1\n", "p/work.py": work.format(1)}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {  # both files at once: work.py's pick kept
        "p/work.py": work.format(2), "p/kinds.py": "def other():\n    return 1\n\n\ndef make_b():\n    return 2\n"})
    assert "p.work.pick" in handed
    assert ("p.work.pick", "p.kinds.make_b", "getattr") in edges


def test_a_kept_method_calling_what_its_constructor_keeps_follows_what_the_constructor_is_passed(tmp_path, monkeypatch):
    work = ("from functools import partial\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n\n\n"
            "class Curry:\n    def __init__(self, func, *args):\n        self._partial = partial(func, *args)\n\n"
            "    def call(self, *args):\n        return self._partial(*args)\n\n\n"
            "def make():\n    return Curry({})\n")
    files = {"p/__init__.py": "", "p/work.py": work.format("a")}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {"p/work.py": work.format("b")})
    assert "p.work.Curry.call" in handed
    assert ("p.work.Curry.call", "p.work.b", "flow") in edges


HOOKS = "def helper(given):\n    return given().run() if callable(given) else given.run()\n"


@pytest.mark.parametrize("work, old, new", [
    # the same call, passing a local whose value changed: the function it calls is passed something else
    ("from p.hooks import helper\nfrom p.kinds import A, B\n\n\ndef main():\n    x = A\n    return helper(x)\n",
     "x = A", "x = B"),
    # the same call, passing what a function whose return changed gives
    ("from p.hooks import helper\nfrom p.kinds import A, B\n\n\ndef make():\n    return A()\n\n\nhelper(make())\n",
     "return A()", "return B()"),
], ids=["local-value", "named-definition"])
def test_a_call_that_reads_what_changed_passes_it_on_though_it_is_written_as_before(tmp_path, monkeypatch, work,
                                                                                   old, new):
    files = {"p/__init__.py": "", "p/kinds.py": BASE["p/kinds.py"], "p/hooks.py": HOOKS, "p/work.py": work}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {"p/work.py": work.replace(old, new)})
    assert "p.hooks.helper" in handed
    assert ("p.hooks.helper", "p.kinds.B.run", "type") in edges or any(
        e[:2] == ("p.hooks.helper", "p.kinds.B.run") for e in edges)


@pytest.mark.parametrize("work, old, new, passed", [
    # a local whose value names a local that changed holds something else too
    ("from p.hooks import helper\nfrom p.kinds import A, B\n\n\ndef main():\n    x = A\n    y = x\n    return helper(y)\n",
     "x = A", "x = B", True),
    # a module-level name whose value names a definition whose return changed
    ("from p.hooks import helper\nfrom p.kinds import A, B\n\n\ndef make():\n    return A()\n\n\nHANDLER = make\n\n\n"
     "def main():\n    return helper(HANDLER)\n", "return A()", "return B()", True),
    # a parameter added that no call names: main's calls pass what they passed
    ("from p.hooks import helper\nfrom p.kinds import A, B\n\n\ndef main():\n    x = A\n    return helper(x)\n",
     "def main():", "def main(extra=None):", False),
], ids=["through-a-local", "module-level-name", "parameter-added"])
def test_a_changed_function_passes_something_new_only_where_its_calls_name_what_changed(tmp_path, monkeypatch, work,
                                                                                       old, new, passed):
    files = {"p/__init__.py": "", "p/kinds.py": BASE["p/kinds.py"], "p/hooks.py": HOOKS, "p/work.py": work}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {"p/work.py": work.replace(old, new)})
    assert ("p.hooks.helper" in handed) == passed  # and the update equals its rebuild (_update)
    run = "p.kinds.B.run" if passed else "p.kinds.A.run"
    assert any(e[:2] == ("p.hooks.helper", run) for e in edges)


def _imports_handed(tmp_path, monkeypatch, root):
    """Update, hold it to a rebuild, and say which modules' imports rows the resolver was handed."""
    imported: set[str] = set()
    _update(tmp_path, root, monkeypatch, imported=imported)
    return imported


def test_a_changed_file_whose_imports_are_the_same_keeps_their_answers(tmp_path, monkeypatch):
    root = _build(tmp_path)
    work = root / "p/work.py"
    work.write_text(work.read_text().replace("def make():\n    return A()\n", "def make():\n    return B()\n"))
    assert "p.work" not in _imports_handed(tmp_path, monkeypatch, root)


def test_a_changed_file_whose_imported_name_went_resolves_its_imports_again(tmp_path, monkeypatch):
    root = _build(tmp_path)
    work, kinds = root / "p/work.py", root / "p/kinds.py"
    work.write_text(work.read_text().replace("def make():\n    return A()\n", "def make():\n    return B()\n"))
    kinds.write_text(kinds.read_text().replace("class B:", "class C:"))  # both at once: work's `import B` now names nothing
    assert "p.work" in _imports_handed(tmp_path, monkeypatch, root)  # and the graph is the rebuild's (_update)


COUNTED = '''\
from p.kinds import A, B


def run(cb, times):
    return [cb() for _ in range(times)]


def twice():
    """Run A twice."""
    times = 2  # the count
    return run(A, times)[0].run()


def pick():
    kind = 0
    return kind().run()
'''


@pytest.mark.parametrize("old, new, value", [
    ("times = 2  # the count", "times = 3  # the count", "3"),  # a number for a number
    ("# the count", "# how many", "2"),  # a comment in the function
    ('"""Run A twice."""', '"""Run A two times."""', "2"),  # its docstring
    ("times = 2", "times = -2.5", "-2.5"),
], ids=["number", "comment", "docstring", "signed-float"])
def test_a_function_changed_only_in_text_no_answer_reads_keeps_its_answers_and_has_its_new_rows(
        tmp_path, monkeypatch, old, new, value):
    files = {"p/__init__.py": "", "p/kinds.py": BASE["p/kinds.py"], "p/use.py": COUNTED}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {"p/use.py": COUNTED.replace(old, new)})
    assert "p.use.twice" not in handed and "p.use.run" not in handed  # nothing it passes changed
    assert ("p.use.twice", "p.use.run") in {e[:2] for e in edges}
    con = duckdb.connect(str(tmp_path / "repo" / ".codegraph" / "graph.duckdb"), read_only=True)
    try:  # the rows are the new text's (as a rebuild's: _update compares them all)
        source, = con.execute("SELECT source FROM globals WHERE qualname = 'p.use.twice'").fetchone()
        values = [r[0] for r in con.execute("SELECT value FROM bindings WHERE scope_qualname = 'p.use.twice' "
                                            "AND name = 'times'").fetchall()]
    finally:
        con.close()
    assert new in source
    assert values == [value]


@pytest.mark.parametrize("new, now", [
    ("kind = B", "p.kinds.B.run"),  # a number for a name: what the call runs changes
    ("kind = '0'", None),  # a string may name something (getattr): resolved again
], ids=["name", "string"])
def test_a_function_whose_number_became_something_else_is_resolved_again(tmp_path, monkeypatch, new, now):
    files = {"p/__init__.py": "", "p/kinds.py": BASE["p/kinds.py"], "p/use.py": COUNTED}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {"p/use.py": COUNTED.replace("kind = 0", new)})
    assert "p.use.pick" in handed and "p.use.twice" not in handed
    if now is not None:
        assert ("p.use.pick", now) in {e[:2] for e in edges}


def test_a_renumbered_function_the_change_reaches_is_resolved_again_with_its_new_rows(tmp_path, monkeypatch):
    counted = COUNTED.replace("    times = 2  # the count\n", "    times = 2  # the count\n    later()\n")
    files = {"p/__init__.py": "", "p/kinds.py": BASE["p/kinds.py"], "p/use.py": counted}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {  # it calls a name its file gains
        "p/use.py": counted.replace("times = 2", "times = 7") + "\n\ndef later():\n    return 1\n"})
    assert "p.use.twice" in handed
    assert ("p.use.twice", "p.use.later") in {e[:2] for e in edges}


FORWARDS = "def run(x):\n    return x.run()\n\n\ndef wrap(*args):\n    y = None\n    return run(*args)\n"
CALLS_WRAP = "from p.forwards import wrap\nfrom p.kinds import A, B\n\n\ndef use():\n    return wrap({}())\n"


def test_a_changed_function_given_something_new_passes_it_on_to_what_it_forwards_to(tmp_path, monkeypatch):
    # wrap changed (its calls are not stored yet) and is passed a B now: run, kept, is given it through *args
    files = {"p/__init__.py": "", "p/kinds.py": BASE["p/kinds.py"], "p/forwards.py": FORWARDS,
             "p/use.py": CALLS_WRAP.format("A")}
    handed, edges = _edges_after(tmp_path, monkeypatch, files, {
        "p/forwards.py": FORWARDS.replace("    y = None\n", "    y = None\n    print()\n"),
        "p/use.py": CALLS_WRAP.format("B")})
    assert "p.forwards.run" in handed
    assert ("p.forwards.run", "p.kinds.B.run") in {e[:2] for e in edges}

"""Built-in modules (`sys`, `math`, `itertools`: compiled, no source) in the library layer as stubs
the interpreter describes: an undefined `sys` gets its `import sys` card, `math.sqrt` its
signature. The ground truth is the running interpreter itself (inspect, dir)."""

import inspect
import itertools
import math
import sys

import duckdb
import pytest

from codegraph.indexer import index_repository
from codegraph.languages.python import library
from codegraph.languages.python.lint import Linter
from codegraph.retrieval.diagnose import diagnose
from codegraph.retrieval.engine import Retriever

SOURCE = """import sys
import math
import itertools


def main():
    return math.sqrt(2), sys.argv, list(itertools.chain([1], [2]))
"""


@pytest.fixture
def built(tmp_path):
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "__init__.py").write_text("")
    (repo / "app" / "main.py").write_text(SOURCE)
    report = index_repository(repo, jobs=1)
    return repo, report.db_path


def _public(module) -> set[str]:
    return {n for n in dir(module) if not n.startswith("__") and not inspect.ismodule(getattr(module, n))}


def test_a_built_in_module_is_in_the_library_layer_as_the_interpreter_describes_it(built):
    repo, db_path = built
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        stubs = dict(con.execute("SELECT module, layer FROM all_files WHERE path LIKE '<builtin>/%'").fetchall())
        assert {name: stubs.get(name) for name in ("sys", "itertools")} == {"sys": "stdlib", "itertools": "stdlib"}
        assert con.execute("SELECT import_line FROM import_candidates('sys') WHERE choice = 1 ORDER BY rank"
                           ).fetchone() == ("import sys",)
        assert con.execute("SELECT signature FROM signature_of('math.sqrt')").fetchone() == (
            str(inspect.signature(math.sqrt)),)
        chained = con.execute("SELECT signature FROM signature_of('itertools.chain.from_iterable')").fetchone()
        assert chained == (str(inspect.signature(itertools.chain.from_iterable)),)
        names = {row[0] for row in con.execute("SELECT name FROM names_in_module('sys')").fetchall()}
        assert _public(sys) <= names
    finally:
        con.close()


def test_an_undefined_built_in_module_gets_its_import_card(built):
    repo, db_path = built
    candidate = repo / "app" / "cand.py"
    candidate.write_text("def argv_count():\n    return len(sys.argv)\n")
    with Linter() as linter, Retriever(db_path) as retriever:
        report = diagnose(candidate, retriever=retriever, checker=linter)
    (found,) = [r for r in report.retrievals if r.diagnostic.symbol == "undefined-variable"]
    assert found.rows[0]["import_line"] == "import sys"


def test_near_misses_of_built_ins_are_offered(built):
    """`xrange` (Python 2) for `range`, `sys.maxint` for `sys.maxsize` (both fixes from werkzeug's
    and click's history), `'abc'.startwith` for `startswith`: built-ins are in the graph."""
    repo, db_path = built
    candidate = repo / "app" / "cand.py"
    candidate.write_text("import sys\n\n\ndef limits(text: str):\n    big = sys.maxint\n"
                         "    return [i for i in xrange(3)], big, 'abc'.startwith('a')\n")
    with Linter() as linter, Retriever(db_path) as retriever:
        report = diagnose(candidate, retriever=retriever, checker=linter)
    first = {(r.diagnostic.line, r.diagnostic.symbol): r.rows[0]["qualname"] for r in report.retrievals if r.rows}
    assert first == {(5, "no-member"): "sys.maxsize", (6, "undefined-variable"): "builtins.range",
                     (6, "no-member"): "builtins.str.startswith"}


def test_stubs_leave_updates_alone_and_come_from_the_interpreters_own_binaries(built):
    repo, db_path = built
    (repo / "app" / "main.py").write_text(SOURCE + "\n\nX = 1\n")
    assert index_repository(repo, jobs=1).mode == "update"  # no stub reads as changed
    finder = library.Finder()
    located = finder.locate(["readline", "json", "no_such_module_here", "math"])
    # readline: importing it would take over the terminal; json: source, read from its file
    assert set(finder.stubs) == {"math"} and set(located) == {"json"}
    compile(finder.stubs["math"], "<stub>", "exec")
    assert "def sqrt(x, /):" in finder.stubs["math"]

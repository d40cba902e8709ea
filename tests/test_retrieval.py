"""Diagnostics to SQL: each rule on a bad file from the fixtures, every template, the fallbacks."""

import re
import shutil
from pathlib import Path

import pytest

from codegraph.indexer import index_repository
from codegraph.llm import ScriptedModel
from codegraph.retrieval.candidate import Candidate
from codegraph.retrieval.context import render
from codegraph.retrieval.diagnose import diagnose, parse_lines
from codegraph.retrieval.engine import MAX_RETRIEVED, Retriever, extract_sql, query_terms
from codegraph.languages import CheckError, CheckTimeout, Diagnostic, language
from codegraph.languages.checks import Site
from codegraph.languages.python.lint import Linter
from codegraph.languages.python.repairs import undefined
from codegraph.languages.python.rules import RULES
from codegraph.retrieval.rules import template_names, uncovered

FIXTURES = Path(__file__).parent / "fixtures"
CANDIDATES = sorted((FIXTURES / "candidates").glob("*.py"))


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("retrieval") / "minirepo"
    shutil.copytree(FIXTURES / "minirepo", root)
    index_repository(root, jobs=1)
    return root


@pytest.fixture(scope="module")
def retriever(repo):
    r = Retriever(repo / ".codegraph" / "graph.duckdb")
    yield r
    r.close()


@pytest.fixture(scope="module")
def linter():
    return Linter()


def _expectations(path: Path):
    return re.findall(r"^# expect: (\S+) -> (\S+)$", path.read_text(), re.M)


def _place(repo: Path, candidate: Path) -> Path:
    target = repo / "src" / "shop" / candidate.name
    shutil.copy(candidate, target)
    return target


@pytest.mark.parametrize("candidate", CANDIDATES, ids=lambda p: p.stem)
def test_rule_finds_the_ground_truth_first(repo, retriever, linter, candidate):
    path = _place(repo, candidate)
    report = diagnose(path, retriever=retriever, checker=linter)
    for symbol, expected in _expectations(candidate):
        matching = [r for r in report.retrievals if r.diagnostic.symbol == symbol]
        assert matching, f"pylint did not report {symbol} in {candidate.name}"
        if expected == "(local)":
            assert any(r.source == "local" and "broken" in r.local_context for r in matching)
            continue
        tops = [r.rows[0]["qualname"] for r in matching if r.rows]
        assert expected in tops, (symbol, [(r.source, r.params, r.rows[:2]) for r in matching])
        assert all(r.source == "rule" for r in matching if r.rows and r.rows[0]["qualname"] == expected)


def test_function_redefined_points_at_the_existing_definition(repo, retriever, linter):
    models = repo / "src" / "shop" / "models.py"
    original = models.read_text()
    try:
        models.write_text(original + "\n    def add(self, item, quantity=1):\n        return quantity\n")
        report = diagnose(models, retriever=retriever, checker=linter, lines=(70, 72))
        (hit,) = [r for r in report.retrievals if r.diagnostic.symbol == "function-redefined"]
        assert hit.source == "rule" and hit.rows[0]["qualname"] == "shop.models.Cart.add"
    finally:
        models.write_text(original)


SAMPLE_PARAMS = {
    "import_error": {"module": "shop.modls", "last": "modls"},
    "names_in_module_like": {"module": "shop.models", "name": "Itme"},
    "members_like": {"owner": "shop.pricing.Special", "name": "describ", "local": [], "forgotten": []},
    "undefined_name": {"name": "Cart", "module": "run", "owner": "", "function": "", "local": []},
    "callee": {"qualname": "shop.pricing.total"},
    "definition": {"qualname": "shop.models.Item.TAX"},
    "same_name_in_scope": {"scope": "shop.models.Cart", "name": "add"},
    "lexical": {"terms": ["discount", "apply"]},
    "named_definitions": {"name": "add", "module": "shop.pricing"},
    "known_import": {"module": "shop.models"},
    "class_members": {"owner": "shop.models.Cart", "name": "add"},
    "subclasses": {"name": "shop.models.Base"},
    "exception_classes": {"name": "ShopError"},
}
NOT_RETRIEVAL = {"known_import"}  # used by refine to judge a diagnostic, not to build context
NO_ROWS_HERE = {"exception_classes"}  # the fixture has no exception classes: see test_new_rules_...


def test_every_template_has_sample_parameters():
    # Java's templates run on a Java repository: tests/test_java_diagnose.py
    assert set(SAMPLE_PARAMS) == {t for t in template_names() if not t.startswith("java_")}
    assert {r.template for r in RULES if r.template} <= set(template_names())


@pytest.mark.parametrize("template", sorted(SAMPLE_PARAMS))
def test_every_template_runs_on_the_fixture_database(retriever, template):
    columns, rows = retriever.run_template(template, SAMPLE_PARAMS[template])
    assert rows or template in NO_ROWS_HERE, template
    if template not in NOT_RETRIEVAL:
        assert {"qualname", "kind", "signature", "import_line", "score", "match"} <= set(columns)


def test_did_you_mean_ranks_the_near_miss_first(retriever):
    _, rows = retriever.run_template("members_like", {"owner": "Cart", "name": "totl", "local": [], "forgotten": []})
    assert rows[0]["qualname"] == "shop.models.Cart.total"
    _, rows = retriever.run_template("import_error", {"module": "shop.modls", "last": "modls"})
    assert rows[0]["qualname"] == "shop.models"


def test_llm_fallback_retries_with_the_error_then_succeeds(repo, retriever):
    path = _place(repo, FIXTURES / "candidates" / "undef_members.py")
    cand = Candidate.from_file(path)
    d = Diagnostic("plugin-message", "E9901", "A message from a pylint plugin no rule covers", 7, 4)
    model = ScriptedModel(["DROP TABLE calls",
                           "Here you go:\n```sql\nSELECT qualname, nonsense FROM members\n```",
                           "```sql\nSELECT qualname, kind, signature FROM members_of('Cart') WHERE name = 'add'\n```"])
    retriever.model = model
    try:
        result = retriever.retrieve(cand, d)
    finally:
        retriever.model = None
    assert result.source == "llm"
    assert result.rows[0]["qualname"] == "shop.models.Cart.add"
    assert [a["error"] is None for a in result.attempts] == [False, False, True]
    assert "only SELECT" in result.attempts[0]["error"]
    assert "nonsense" in result.attempts[1]["error"]
    assert "nonsense" in model.calls[2][-1]["content"]  # the error went back to the model


def test_llm_that_never_gets_it_right_falls_back_to_hybrid_search(repo, retriever):
    path = _place(repo, FIXTURES / "candidates" / "undef_members.py")
    cand = Candidate.from_file(path)
    d = Diagnostic("plugin-message", "E9901", "A message from a pylint plugin about describe", 8, 4)
    retriever.model = ScriptedModel(["SELECT * FROM class_name WHERE class_name IS NULL"] * 3)
    try:
        result = retriever.retrieve(cand, d)
    finally:
        retriever.model = None
    assert len(result.attempts) == 3 and all(a["error"] for a in result.attempts)
    assert result.source == "hybrid" and result.rows and all(r.get("reason") for r in result.rows)


def test_keep_lines_includes_the_last_line_and_spanning_messages():
    ds = [Diagnostic("x", "E1", "m", line, 0, end) for line, end in ((4, 4), (5, 5), (9, 9), (10, 10), (2, 6))]
    kept = language("python").keep(ds, 5, 9)
    assert [(d.line, d.end_line) for d in kept] == [(5, 5), (9, 9), (2, 6)]


def test_parse_lines_rejects_nonsense():
    assert parse_lines("3-7") == (3, 7) and parse_lines("4") == (4, 4)
    with pytest.raises(Exception, match="A-B"):
        parse_lines("x-y")


def test_in_process_and_subprocess_linting_agree(repo, linter):
    path = _place(repo, FIXTURES / "candidates" / "api_errors.py")
    fast = sorted((d.symbol, d.line, d.message) for d in linter.lint(path))
    slow = sorted((d.symbol, d.line, d.message) for d in Linter(mode="subprocess").lint(path))
    assert fast == slow and fast


def test_in_process_linter_sees_changes_to_other_modules(repo, linter):
    path = _place(repo, FIXTURES / "candidates" / "undef_members.py")
    pricing = repo / "src" / "shop" / "pricing.py"
    cand = repo / "src" / "shop" / "uses_pricing.py"
    cand.write_text("from shop.pricing import apply_discount\n\nX = apply_discount(1, 2)\n")
    original = pricing.read_text()
    try:
        assert not linter.lint(cand)
        pricing.write_text(original.replace("def apply_discount(value, rate):", "def apply_discount(value):"))
        assert [d.symbol for d in linter.lint(cand, changed_modules=["shop.pricing"])] == ["too-many-function-args"]
    finally:
        pricing.write_text(original)
        linter.lint(cand, changed_modules=["shop.pricing"])


def test_context_is_rendered_within_budget(repo, retriever, linter):
    path = _place(repo, FIXTURES / "candidates" / "api_errors.py")
    report = diagnose(path, retriever=retriever, checker=linter, budget_tokens=200)
    text = render(report.retrievals, budget_tokens=200)
    assert "shop.pricing.apply_discount" in text and "def apply_discount(value, rate)" in text
    per_diagnostic = [len(block) / 4 for block in text.split("\n\n")]
    assert max(per_diagnostic) <= max(80, 200 // len(report.retrievals)) + 40


def test_helpers():
    assert extract_sql("Sure!\n```sql\nSELECT 1\n```\nbye") == "SELECT 1"
    assert extract_sql("I think SELECT name FROM classes") == "SELECT name FROM classes"
    assert query_terms("parseFloat in self.json_decoder") == ["parsefloat", "parse", "float", "json_decoder",
                                                                "json", "decoder"]


def _retrieve_written(repo, retriever, linter, name: str, text: str, symbol: str):
    """Write a module into the fixture package, lint it and retrieve for its first `symbol`
    message; the module is gone afterwards."""
    path = repo / "src" / "shop" / name
    path.write_text(text)
    try:
        diagnostics = [d for d in linter.lint(path) if d.symbol == symbol]
        assert diagnostics, f"pylint should flag {symbol} in {name}"
        return retriever.retrieve(Candidate.from_file(path), diagnostics[0])
    finally:
        path.unlink()


def test_a_class_being_written_offers_its_own_members_before_the_graph_knows_them(repo, retriever, linter):
    result = _retrieve_written(repo, retriever, linter, "basket.py",
                               "class Basket:\n    def __init__(self):\n        self.items = []\n\n"
                               "    def total_price(self):\n        return sum(self.items)\n\n"
                               "    def report(self):\n        return self.totl_price()\n", "no-member")
    assert result.source == "rule" and result.params["local"] == ["__init__", "items", "report", "total_price"]
    assert result.rows[0]["name"] == "total_price"


# -- issue 10, rows 7, 19 and 21 -------------------------------------------------------------------

def test_the_linter_sees_modules_created_deleted_and_renamed_after_its_first_run(repo):
    shop = repo / "src" / "shop"
    cand = shop / "uses_fresh.py"
    cand.write_text("from shop.fresh import helper\n\nX = helper()\n")
    with Linter() as linter:
        try:
            assert "import-error" in {d.symbol for d in linter.lint(cand)}
            (shop / "fresh.py").write_text("def helper():\n    return 1\n")  # created
            assert linter.lint(cand, changed_modules=["shop.fresh"]) == []
            (shop / "fresh.py").rename(shop / "renamed.py")  # renamed away
            assert "import-error" in {d.symbol for d in linter.lint(cand)}
            (shop / "renamed.py").rename(shop / "fresh.py")  # and back
            assert linter.lint(cand) == []
            (shop / "fresh.py").unlink()  # deleted
            assert "import-error" in {d.symbol for d in linter.lint(cand)}
        finally:
            for name in ("uses_fresh.py", "fresh.py", "renamed.py"):
                (shop / name).unlink(missing_ok=True)


def test_a_lint_that_overruns_is_stopped_and_the_next_one_works(repo):

    path = _place(repo, FIXTURES / "candidates" / "api_errors.py")
    with Linter() as linter:
        with pytest.raises(CheckTimeout, match="did not finish"):
            linter.lint(path, timeout_s=0.001)
        assert linter.lint(path)  # a fresh worker answers


def test_an_oversized_candidate_is_refused_with_one_line(repo):

    big = repo / "src" / "shop" / "big_candidate.py"
    big.write_text("x = 1\n" * 50_000)
    try:
        with Linter() as linter, pytest.raises(CheckError, match="over the 200 kB"):
            linter.lint(big)
    finally:
        big.unlink()


def test_a_broken_template_or_a_timeout_falls_back_and_is_recorded(repo, linter, monkeypatch):
    import codegraph.retrieval.engine as engine

    path = _place(repo, FIXTURES / "candidates" / "undef_imports.py")
    diagnostics = [d for d in linter.lint(path) if d.symbol == "no-name-in-module"]
    assert diagnostics
    with Retriever(repo / ".codegraph" / "graph.duckdb") as fresh:
        real = fresh._template
        monkeypatch.setattr(fresh, "_template", lambda name: "SELECT broken FROM nowhere" if name ==
                            "names_in_module_like" else real(name))
        result = fresh.retrieve(Candidate.from_file(path), diagnostics[0])
        assert result.source == "hybrid" and result.rows and all(r.get("reason") for r in result.rows)
        assert result.attempts[0]["rule"] == "names_in_module_like" and result.attempts[0]["error"]
        monkeypatch.setattr(fresh, "_template", real)
        monkeypatch.setattr(engine, "run_query", _always_times_out)
        result = fresh.retrieve(Candidate.from_file(path), diagnostics[0])
        assert result.attempts and all("time limit" in a["error"] for a in result.attempts)
        assert result.source == "hybrid" and result.rows  # the search still answered


def _always_times_out(*args, **kwargs):
    from codegraph.errors import QueryTimeout

    raise QueryTimeout("query stopped after the 2 s time limit")


# -- issue 13, row 5: diagnose = refine; the budget is a cap; identical messages collapse ----------

def _retrieval(symbol, message, line, rows):
    from codegraph.retrieval.engine import Retrieval

    return Retrieval(Diagnostic(symbol, "E1101", message, line, 0), "rule", rows=rows)


def _row(i):
    return {"qualname": f"shop.models.Thing{i}", "kind": "class", "name": f"Thing{i}", "signature": "(Base)",
            "docstring": "A thing that has a price and a very long docstring line. " * 3, "path": "src/shop/models.py",
            "start_line": i, "match": "fuzzy", "score": 1 - i / 100, "source": "class Thing:\n    pass\n" * 5}


@pytest.mark.parametrize("budget", [60, 120, 300, 1500])
def test_the_budget_is_a_hard_cap(budget):
    from codegraph.llm import estimate_tokens

    retrievals = [_retrieval("no-member", f"Instance of 'Cart' has no 'x{i}' member", i, [_row(j) for j in range(8)])
                  for i in range(6)]
    text = render(retrievals, budget_tokens=budget)
    assert estimate_tokens(text) <= budget
    assert text.startswith("line 0: no-member")


def test_identical_messages_are_one_block_with_all_their_lines():
    same = "Instance of 'Cart' has no 'totl' member"
    retrievals = [_retrieval("no-member", same, line, [_row(1), _row(2)]) for line in (4, 9, 17)]
    text = render(retrievals, budget_tokens=1500)
    assert text.count(same) == 1 and text.startswith("lines 4, 9, 17: no-member")
    assert text.count("shop.models.Thing1 (class)") == 1


def test_diagnose_keeps_a_syntax_error_the_candidate_causes_below_its_lines(repo, retriever, linter):
    path = repo / "src" / "shop" / "broken_below.py"
    path.write_text("def f(x):\n    return (x,\n\n\ndef g():\n    return 2\n")
    try:
        report = diagnose(path, retriever=retriever, checker=linter, lines=(1, 2))
    finally:
        path.unlink()
    assert [r.diagnostic.symbol for r in report.retrievals] == ["syntax-error"]


def test_diagnose_drops_imports_the_repository_already_makes(mini_repo):
    from codegraph.indexer import index_repository

    (mini_repo / "src" / "shop" / "uses_yaml.py").write_text("import yaml_is_not_installed_here\n\nX = 1\n")
    index_repository(mini_repo, jobs=1)
    cand = mini_repo / "src" / "shop" / "cand_yaml.py"
    cand.write_text("import yaml_is_not_installed_here\nimport nor_is_this_one\n\nY = 2\n")
    with Linter() as linter:
        report = diagnose(cand, checker=linter)
    assert [r.diagnostic.message for r in report.retrievals] == ["Unable to import 'nor_is_this_one'"]


# -- issue 13, row 3: rules for the messages models commonly trigger -------------------------------

_STORE = '''"""A store with errors and abstract bases."""
import abc


class ShopError(Exception):
    """Anything that goes wrong in the shop."""


class OutOfStock(ShopError):
    """The item is not available."""


class Store(abc.ABC):
    @abc.abstractmethod
    def stock(self, item):
        """How many are left."""


class Warehouse(Store):
    def stock(self, item):
        return 1


class Shelf:
    def __init__(self):
        self.rows = []

    def items(self):
        return list(self.rows)

    def count(self):
        return len(self.rows)
'''

_CANDIDATE = '''from store.core import Shelf, Store, OutOfStock


class TallShelf(Shelf):
    def total(value):
        return value


def check():
    shelf = Shelf()
    shelf.items.pop()
    raise OutOfStok("gone")


def make():
    return Store()


def guard(x):
    try:
        return x()
    except Shelf:
        return None
'''


@pytest.fixture(scope="module")
def store_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("store")
    (repo / "store").mkdir()
    (repo / "store" / "__init__.py").write_text("")
    (repo / "store" / "core.py").write_text(_STORE)
    index_repository(repo, jobs=1)
    return repo


@pytest.mark.parametrize("symbol,template,top", [
    ("no-self-argument", "class_members", None),
    ("no-member", "named_definitions", "store.core.Shelf.items"),  # `shelf` is a local: resolved by name
    ("abstract-class-instantiated", "subclasses", "store.core.Warehouse"),
    ("catching-non-exception", "exception_classes", None),
])
def test_new_rules_find_what_fixes_the_message(store_repo, symbol, template, top):
    cand = store_repo / "store" / "cand.py"
    cand.write_text(_CANDIDATE)
    with Linter() as linter, Retriever(store_repo / ".codegraph" / "graph.duckdb") as retriever:
        report = diagnose(cand, retriever=retriever, checker=linter)
    hits = [r for r in report.retrievals if r.diagnostic.symbol == symbol]
    assert hits, [r.diagnostic.symbol for r in report.retrievals]
    hit = hits[0]
    assert hit.source == "rule" and hit.rule == template, (hit.source, hit.rule, hit.attempts)
    if top:
        assert hit.rows[0]["qualname"] == top
    if symbol == "catching-non-exception":
        assert {r["qualname"] for r in hit.rows} == {"store.core.ShopError", "store.core.OutOfStock"}


def test_every_pylint_error_about_code_has_a_rule():
    python = language("python")
    assert uncovered(python) == []
    symbols = python.error_symbols()
    assert len(symbols) > 100 and set(python.not_about_code) <= set(symbols)
    assert {r.symbol for r in RULES} <= set(symbols)  # no rule for a message pylint does not have


# -- issue 13, row 4: the library layer answers for the standard library -------------------------

@pytest.fixture(scope="module")
def uses_stdlib(tmp_path_factory):
    repo = tmp_path_factory.mktemp("uses_stdlib")
    (repo / "app").mkdir()
    (repo / "app" / "__init__.py").write_text("")
    (repo / "app" / "store.py").write_text("import json\nimport shutil\nimport zipfile\n\n\n"
                                           "def save(data):\n    return json.dumps(data)\n")
    report = index_repository(repo, jobs=1)
    assert report.library_files > 0
    return repo


@pytest.mark.parametrize("code,symbol,expected,import_line", [
    ("def f(path):\n    return ZipFile(path)\n", "undefined-variable", "zipfile.ZipFile", "from zipfile import ZipFile"),
    ("def f(a, b):\n    return shutil.copyfile(a, b, follow_links=False)\n", "unexpected-keyword-arg",
     "shutil.copyfile", None),
])
def test_standard_library_names_come_from_the_graph(uses_stdlib, code, symbol, expected, import_line):
    cand = uses_stdlib / "app" / "cand.py"
    cand.write_text("import shutil\n\n\n" + code if "shutil." in code else code)
    with Linter() as linter, Retriever(uses_stdlib / ".codegraph" / "graph.duckdb") as retriever:
        report = diagnose(cand, retriever=retriever, checker=linter)
    hits = [r for r in report.retrievals if r.diagnostic.symbol == symbol]
    assert hits and hits[0].rows, [(r.diagnostic.symbol, r.source) for r in report.retrievals]
    top = hits[0].rows[0]
    assert top["qualname"] == expected
    if import_line:
        assert top["import_line"] == import_line
    if symbol == "unexpected-keyword-arg":
        assert any(p.startswith("follow_symlinks:") for p in top["parameters"])


def test_project_queries_keep_their_meaning_with_the_library_layer(uses_stdlib):
    import duckdb

    con = duckdb.connect(str(uses_stdlib / ".codegraph" / "graph.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT DISTINCT layer FROM files").fetchall() == [("project",)]
        assert con.execute("SELECT count(*) FROM symbols WHERE module = 'json'").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM all_symbols WHERE qualname = 'json.dumps' AND layer = 'stdlib'"
                           ).fetchone() == (1,)
        assert con.execute("SELECT * FROM definitions_named('dumps')").fetchall() == []  # project only
        assert con.execute("SELECT import_line, layer FROM import_candidates('ZipFile')").fetchall()[0] == (
            "from zipfile import ZipFile", "stdlib")
        assert con.execute("SELECT resolution FROM calls WHERE callee_text = 'json.dumps'").fetchall() == [("library",)]
    finally:
        con.close()


def _diagnosed(repo: Path, relative: str, source: str):
    """A candidate written into an indexed repository, diagnosed against its graph."""
    candidate = repo / relative
    candidate.write_text(source)
    with Linter() as linter, Retriever(repo / ".codegraph" / "graph.duckdb") as retriever:
        return diagnose(candidate, retriever=retriever, checker=linter)


def test_an_undefined_name_that_is_the_method_being_written_points_elsewhere(store_repo):
    """`count(...)` inside Shelf.count means another count, not the method itself (`self.count`)."""
    (store_repo / "store" / "helpers.py").write_text("def count(rows):\n    return len(rows)\n")
    index_repository(store_repo, jobs=1)
    report = _diagnosed(store_repo, "store/cand2.py", "from store.core import Shelf\n\n\nclass Tall(Shelf):\n"
                        "    def count(self):\n        return count(self.rows)\n\n    def size(self):\n"
                        "        return count(self.rows)\n")
    by_line = {r.diagnostic.line: r for r in report.retrievals if r.diagnostic.symbol == "undefined-variable"}
    assert by_line[6].rows[0]["qualname"] == "store.helpers.count"  # inside count itself: not self.count
    assert any(r["qualname"] == "store.cand2.Tall.count" or "self.count" in (r.get("import_line") or "")
               for r in by_line[9].rows)  # elsewhere in the class, the member is a fair answer


def test_a_misspelt_local_is_offered_from_the_names_the_function_binds(store_repo):
    """`measurments` for `measurements` (a fix from rich's history): the names the code can read
    without an import (its parameters, its bindings, its file's names) are cards too."""
    index_repository(store_repo, jobs=1)
    report = _diagnosed(store_repo, "store/cand3.py", "LIMIT = 3\n\n\ndef widths(rows, minimum=1):\n"
                        "    measurements = [len(r) for r in rows]\n    return max(measurments + [minimun, LIMT])\n")
    first = {re.search(r"'(\w+)'", r.diagnostic.message).group(1): r.rows[0] for r in report.retrievals
             if r.diagnostic.symbol == "undefined-variable"}
    assert {name: row["name"] for name, row in first.items()} == {
        "measurments": "measurements", "minimun": "minimum", "LIMT": "LIMIT"}
    assert first["measurments"]["kind"] == "local"
    assert "measurements (local)" in render(report.retrievals)


def test_a_name_written_for_a_nested_helper_is_offered_by_a_shared_word(store_repo):
    """`dummy_pager` for the test's own `def mock_pager` (a fix from rich's history): the
    spellings are far apart (Jaro-Winkler 0.78) but share a word, and the helper defined inside
    the function is one of the names it can read."""
    index_repository(store_repo, jobs=1)
    report = _diagnosed(store_repo, "store/cand4.py", "def test_pager():\n    def mock_pager(content):\n"
                        "        return content\n    calls = []\n    calls.append(dummy_pager)\n"
                        "    return unrelated_name\n")
    found = {re.search(r"'(\w+)'", r.diagnostic.message).group(1): r for r in report.retrievals
             if r.diagnostic.symbol == "undefined-variable"}
    assert found["dummy_pager"].source == "rule" and found["dummy_pager"].rows[0]["name"] == "mock_pager"
    assert not any(row["kind"] == "local" for row in found["unrelated_name"].rows)  # no word shared


def test_a_member_of_a_base_the_class_forgot_is_offered(store_repo):
    """`class LoopsTests:` among TestCase classes calling `self.asserTrue` (more-itertools'
    history): the class has no such member, but a base its module's other classes derive from
    has `assertTrue`; the card says which class uses that base."""
    (store_repo / "store" / "test_core.py").write_text("import unittest\n")  # unittest in the graph
    index_repository(store_repo, jobs=1)
    report = _diagnosed(store_repo, "store/test_cand.py", "from unittest import TestCase\n\n\n"
                        "class PrimeTests(TestCase):\n    def test_a(self):\n        self.assertTrue(1)\n\n\n"
                        "class LoopsTests:\n    def test_basic(self):\n        self.asserTrue(1)\n")
    (found,) = [r for r in report.retrievals if r.diagnostic.symbol == "no-member"]
    first = found.rows[0]
    assert first["qualname"] == "unittest.case.TestCase.assertTrue"
    assert "PrimeTests derives from" in first["reason"] and "missing base" in first["reason"]
    assert sum("missing base" in (r.get("reason") or "") for r in found.rows) <= 3


def test_a_test_beside_the_package_is_linted_with_the_package_importable(tmp_path):
    """tests/ without __init__.py: pylint alone puts tests/ on the path, not the project root, so
    `from pkg.core import Engine` infers nothing and a misspelt member goes unreported (rich's
    `console.current_style` for `_current_style`, five fixes in its history)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "core.py").write_text("class Engine:\n    def __init__(self):\n        self._speed = 1\n")
    (tmp_path / "tests").mkdir()
    index_repository(tmp_path, jobs=1)
    report = _diagnosed(tmp_path, "tests/test_core.py",
                        "from pkg.core import Engine\n\n\ndef test_speed():\n    assert Engine().speed == 1\n")
    test = tmp_path / "tests" / "test_core.py"
    (found,) = [r for r in report.retrievals if r.diagnostic.symbol == "no-member"]
    assert found.rows[0]["qualname"] == "pkg.core.Engine._speed"
    assert Linter(mode="subprocess").lint(test)[0].symbol == "no-member"  # the other mode sees it too


def test_a_typo_outranks_a_member_that_only_means_the_same(retriever, repo, monkeypatch):
    """Scope ranking blends spelling, meaning and proximity; a near-identical spelling (a typo)
    must still win over a member whose text matches the line's meaning better."""
    path = _place(repo, FIXTURES / "candidates" / "undef_members.py")
    cand = Candidate.from_file(path)
    d = Diagnostic("no-member", "E1101", "Instance of 'Cart' has no 'totl' member", 7, 4)
    rows = [{"qualname": "shop.models.Cart.count", "score": 0.6, "match": "fuzzy"},
            {"qualname": "shop.models.Cart.total", "score": 0.93, "match": "fuzzy"}]
    monkeypatch.setattr(retriever, "_meaning", lambda rows, text: [1.0, 0.0])  # count means it best
    ranked = retriever.rank([dict(r) for r in rows], d, cand)
    assert ranked[0]["qualname"] == "shop.models.Cart.total"


def test_a_call_on_a_line_that_also_assigns_an_attribute_is_read_in_its_function(repo, retriever, linter):
    """`self.cart = Cart(ownr=...)` on its own line, after `self.cart = None`: the attribute's
    row (its first value that is not None) spans that line too, and must not hide the function
    whose import of Cart the call needs."""
    result = _retrieve_written(repo, retriever, linter, "keeper.py",
                               "class Keeper:\n    def __init__(self):\n        self.cart = None\n\n"
                               "    def start(self):\n        from .models import Cart\n"
                               "        self.cart = Cart('me', curency='USD')\n", "unexpected-keyword-arg")
    assert result.source == "rule" and result.rows[0]["qualname"] == "shop.models.Cart.__init__"


@pytest.mark.parametrize("body", ["    return Cart('me', curency='USD').total()\n",
                                  "    with Cart('me', curency='USD') as cart:\n        return cart.total()\n"])
def test_of_two_calls_starting_at_one_column_the_one_the_message_names_is_read(repo, retriever, linter, body):
    """`Cart('me', curency='USD').total()`: both calls start at the same column; the message is
    about the inner one (where pylint says the call ends), never the chained one, nor the
    `__enter__` that `with` runs on it."""
    result = _retrieve_written(repo, retriever, linter, "chained.py",
                               "from .models import Cart\n\n\ndef owed():\n" + body, "unexpected-keyword-arg")
    assert result.source == "rule" and result.rows[0]["qualname"] == "shop.models.Cart.__init__"


def test_of_two_calls_starting_at_one_column_the_one_pylint_marks_the_end_of_is_read(repo, retriever, linter):
    """The same for a message that names no keyword."""
    result = _retrieve_written(repo, retriever, linter, "chained2.py",
                               "from .models import Cart\n\n\ndef owed():\n"
                               "    return Cart('me', None, 'x', 'y').total()\n", "too-many-function-args")
    assert result.source == "rule" and result.rows[0]["qualname"] == "shop.models.Cart.__init__"


@pytest.fixture(scope="module")
def tested_repo(tmp_path_factory):
    """A project with pytest tests: a conftest fixture, pytest's own in the library layer."""
    repo = tmp_path_factory.mktemp("tested")
    (repo / "app").mkdir()
    (repo / "app" / "__init__.py").write_text("")
    (repo / "app" / "core.py").write_text("def load(path):\n    return path\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef session_store():\n    return {}\n\n\n"
        "@pytest.fixture(name='clock')\ndef _frozen_clock():\n    return 0\n")
    (repo / "tests" / "test_core.py").write_text("from app.core import load\n\n\ndef test_load():\n    assert load(1)\n")
    index_repository(repo, jobs=1)
    return repo


def test_a_test_gets_the_fixtures_it_can_ask_for_as_cards(tested_repo):
    """In test code an undefined name may be a fixture to take as a parameter: pytest's own
    (`tmp_path`), the conftest's under the name it registers (`clock`), a near one by a shared
    word (`store` for session_store); outside tests, no fixture is offered."""
    report = _diagnosed(tested_repo, "tests/test_cand.py",
                        "from app.core import load\n\n\ndef test_paths():\n    assert load(tmp_path)\n"
                        "    assert clock == 0\n    assert store == {}\n")
    first = {re.search(r"'(\w+)'", r.diagnostic.message).group(1): r.rows[0] for r in report.retrievals
             if r.diagnostic.symbol == "undefined-variable"}
    assert first["tmp_path"]["qualname"] == "_pytest.tmpdir.tmp_path"
    assert first["tmp_path"]["import_line"] == "a pytest fixture: add tmp_path as a parameter of test_paths"
    assert first["clock"]["qualname"] == "tests.conftest._frozen_clock" and first["clock"]["match"] == "exact"
    assert first["store"]["name"] == "session_store"
    plain = _diagnosed(tested_repo, "app/cand.py", "def paths():\n    return tmp_path\n")
    (undefined,) = [r for r in plain.retrievals if r.diagnostic.symbol == "undefined-variable"]
    assert not any("fixture" in (row.get("import_line") or "") for row in undefined.rows)


def test_a_global_pytest_no_longer_has_is_answered_with_its_fixture(tested_repo):
    """`pytest.config` was removed in pytest 5 (flask's history): the pytestconfig fixture. (The
    template itself: whether pylint reports the message depends on the installed pytest, whose
    module-level __getattr__ in some versions hides it.)"""
    with Retriever(tested_repo / ".codegraph" / "graph.duckdb") as retriever:
        _, rows = retriever.run_template("names_in_module_like", {"module": "pytest", "name": "config"})
        _, plain = retriever.run_template("names_in_module_like", {"module": "app.core", "name": "config"})
    fixture = [row for row in rows if row["qualname"] == "_pytest.fixtures.pytestconfig"]
    assert fixture and "a pytest fixture: add pytestconfig" in fixture[0]["import_line"]
    assert [row["qualname"] for row in rows].index("_pytest.fixtures.pytestconfig") < 3
    assert not any("fixture" in (row["import_line"] or "") for row in plain)  # pytest's globals only


def test_the_offline_repair_adds_only_import_lines_and_writes_self_for_a_member():
    """A card's `import_line` may say how else to reach a name (`self.total  (a member of Cart)`,
    `a pytest fixture: ...`): only real import lines are added to the file; a member the code
    forgot `self.` for gets it."""
    d = Diagnostic("undefined-variable", "E0602", "Undefined variable 'total'", 2, 15)
    member = {"qualname": "shop.Cart.total", "name": "total", "match": "exact",
              "import_line": "self.total  (a member of shop.Cart)"}
    site = Site(["    def show(self):", "        return total + x.total"], 1, d, member, ["total"], (1, 2), [])
    assert undefined(site) == "total -> self.total"
    assert site.lines[1] == "        return self.total + x.total" and site.imports == []
    fixture = {"qualname": "_pytest.tmpdir.tmp_path", "name": "tmp_path", "match": "exact",
               "import_line": "a pytest fixture: add tmp_path as a parameter of test_x"}
    site = Site(["def test_x():", "    return tmp_path"], 1, d, fixture, ["tmp_path"], (1, 2), [])
    assert undefined(site) is None and site.imports == [] and site.lines[1] == "    return tmp_path"
    imported = {"qualname": "os.path.join", "name": "join", "match": "exact", "import_line": "from os.path import join"}
    site = Site(["def f():", "    return join('a')"], 1, d, imported, ["join"], (1, 2), [])
    assert undefined(site) == "from os.path import join" and site.imports == ["from os.path import join"]


def test_a_file_with_more_messages_than_a_context_shows_is_looked_up_only_that_far(store_repo):
    """Hostile input: thousands of undefined names would each cost a lookup (minutes in all)
    for a context that shows a few dozen; past MAX_RETRIEVED a message is listed, not looked up."""
    names = [f"undefined_{i}" for i in range(MAX_RETRIEVED + 15)]
    report = _diagnosed(store_repo, "store/cand_many.py",
                        "def f():\n    return [" + ", ".join(names) + "]\n")
    undefined = [r for r in report.retrievals if r.diagnostic.symbol == "undefined-variable"]
    assert len(undefined) == len(names)
    skipped = [r for r in report.retrievals[MAX_RETRIEVED:]]
    assert skipped and all(r.source == "none" and "not looked up" in r.error for r in skipped)
    assert all("not looked up" not in (r.error or "") for r in report.retrievals[:MAX_RETRIEVED])

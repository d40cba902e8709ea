"""Task-level context (issue 13, row 1): what code about to be written needs, before any answer."""

import json
import shutil
import textwrap

import pytest
from click.testing import CliRunner

from codegraph.cli import main
from codegraph.indexer import index_repository
from codegraph.llm import estimate_tokens
from codegraph.retrieval.task_context import task_context
from conftest import EXAMPLE

DESCRIPTION = ("Summarize a cart in one line: the number of items, then the total net price after the discount "
               "`rate`, formatted with two decimals.")


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    repo = tmp_path_factory.mktemp("ctx") / "shop"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".codegraph"))
    return index_repository(repo, jobs=1).db_path


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    repo = tmp_path_factory.mktemp("bank")
    pkg = repo / "bank"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ledger.py").write_text(textwrap.dedent('''
        """Accounts and their ledger."""


        def audit_entry(amount):
            """Check an entry before it is booked."""
            return amount != 0


        def only_the_target_uses_me(amount):
            """A helper nothing but Account.deposit calls."""
            return amount


        class Base:
            def __secret(self):
                """Name-mangled: a subclass cannot reach it."""

            def _protected(self):
                """Reachable from subclasses."""


        class Account(Base):
            """A bank account."""

            def __init__(self, owner):
                self.owner = owner
                self.balance = 0

            def __own(self):
                """Private, but the class's own: reachable."""

            def deposit(self, amount):
                """Add money to the account."""
                only_the_target_uses_me(amount)
                self.balance += amount

            def withdraw(self, amount):
                """Take money out."""
                audit_entry(amount)
                self.balance -= amount
    '''))
    return index_repository(repo, jobs=1).db_path


def test_the_example_task_gets_what_the_solution_uses(shop):
    found = task_context(shop, DESCRIPTION, "shop/report.py", "summarize", signature="(cart: Cart, rate: float = 0.1) -> str")
    names = found.qualnames()
    assert {"shop.pricing.apply_discount", "shop.pricing.round_money", "shop.models.Cart.count",
            "shop.models.Cart.items"} <= names
    assert "shop.report.summarize" not in names
    assert "# The module shop.report" in found.text and "# Classes the task names" in found.text
    assert all(item.reasons for item in found.items)
    assert "answers the description" in found.text and "member of Cart, which the task names" in found.text


@pytest.mark.parametrize("budget", [60, 150, 400, 2000])
def test_the_budget_is_a_hard_cap(shop, budget):
    found = task_context(shop, DESCRIPTION, "shop/report.py", "summarize", budget_tokens=budget)
    assert estimate_tokens(found.text) <= budget and found.tokens <= budget


def test_the_enclosing_class_is_listed_without_unreachable_private_members(bank):
    found = task_context(bank, "Take money out of the account after checking it.", "bank/ledger.py",
                         "Account.withdraw")
    names = found.qualnames()
    assert {"bank.ledger.Account.deposit", "bank.ledger.Account.balance", "bank.ledger.Account.owner",
            "bank.ledger.Account.__own", "bank.ledger.Base._protected"} <= names
    assert "bank.ledger.Base.__secret" not in names
    assert "bank.ledger.Account.withdraw" not in names
    assert "inherited from bank.ledger.Base" in found.text


def test_the_targets_own_body_is_left_out_unless_kept(bank):
    description = "Add money."
    left_out = task_context(bank, description, "bank/ledger.py", "Account.deposit")
    kept = task_context(bank, description, "bank/ledger.py", "Account.deposit", exclude_target=False)
    reasons = {i.qualname: i.reasons for i in left_out.items}
    assert not any("called" in r for r in reasons.get("bank.ledger.only_the_target_uses_me", []))
    kept_reasons = {i.qualname: i.reasons for i in kept.items}
    assert any("called 1x by the code beside the target" in r for r in kept_reasons["bank.ledger.only_the_target_uses_me"])


def test_cli_context_from_a_task_file_and_as_json(shop):
    repo = shop.parent.parent
    runner = CliRunner()
    result = runner.invoke(main, ["context", "--task", str(repo / "task.json"), "--db", str(shop), "--budget", "500"])
    assert result.exit_code == 0, result.output
    assert "shop.pricing.apply_discount" in result.output
    as_json = json.loads(runner.invoke(main, ["context", "--task", str(repo / "task.json"), "--db", str(shop),
                                              "--json"]).output)
    assert as_json["target"] == "shop.report.summarize" and as_json["tokens"] <= 2000
    missing = runner.invoke(main, ["context", "--db", str(shop), "--file", "shop/report.py"])
    assert missing.exit_code == 2 and "--symbol" in missing.output


def test_personalised_pagerank_matches_networkx_google_matrix():
    """The sparse power iteration equals networkx's definition (teleport and dead ends to the seed)."""
    import random

    import networkx as nx
    import numpy as np

    from codegraph.retrieval.task_context import _personalised_pagerank

    rng = random.Random(1)
    weights = {}
    for _ in range(300):
        a, b = f"m{rng.randrange(60)}", f"m{rng.randrange(70)}"
        if a != b:
            weights[(a, b)] = rng.randrange(1, 5)
    edges = [(a, b, n) for (a, b), n in weights.items()]
    graph = nx.DiGraph()
    for a, b, n in edges:
        graph.add_edge(a, b, weight=n)
    nodes = list(graph)
    matrix = nx.google_matrix(graph, alpha=0.85, personalization={n: float(n == "m3") for n in nodes},
                              nodelist=nodes, weight="weight")
    vector = np.array([float(n == "m3") for n in nodes])
    for _ in range(60):
        vector = vector @ matrix
    ours = _personalised_pagerank(edges, "m3")
    assert set(ours) == set(nodes)
    assert max(abs(ours[n] - v) for n, v in zip(nodes, vector.tolist())) < 1e-9
    assert _personalised_pagerank([], "alone") == {"alone": 1.0}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """A class with many bare attributes, a module imported as a module, and library imports:
    what a context has to rank (rich's Table.add_row, issue 29)."""
    repo = tmp_path_factory.mktemp("grid")
    pkg = repo / "grid"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text('class NotRenderableError(Exception):\n    """A cell that cannot be drawn."""\n\n\n'
                                   'def _internal():\n    pass\n')
    attributes = "".join(f"        self.option_{i} = None\n" for i in range(40))
    (pkg / "table.py").write_text(textwrap.dedent('''
        from dataclasses import dataclass, field
        from typing import Dict, List, Optional, Tuple
        from . import errors


        class Column:
            """A column of cells."""


        class Table:
            """A grid of cells."""

            def __init__(self):
        ''') + attributes + textwrap.dedent('''
            def add_column(self, header):
                """Add a column."""
                return Column()

            def add_row(self, *cells):
                """Add a row of cells."""
                for cell in cells:
                    if cell is None:
                        raise errors.NotRenderableError(cell)
                    self.add_column(cell)
        ''').replace("\n", "\n    ").replace("\n    class", "\nclass").replace("\n    def add", "\n    def add"))
    return index_repository(repo, jobs=1).db_path


def test_methods_and_the_projects_names_come_before_bare_attributes_and_library_imports(grid):
    found = task_context(grid, "Add a row of cells.", "grid/table.py", "Table.add_row", budget_tokens=2000)
    order = [i.qualname for i in sorted(found.items, key=lambda i: -i.score)]
    assert order.index("grid.table.Table.add_column") < order.index("grid.table.Table.option_0")
    assert order.index("grid.table.Column") < order.index("grid.table.Table.option_0")
    assert order.index("grid.errors") < order.index("typing.Dict")  # a project import before the library's
    # one object further: what the imported module `errors` defines, its private names left out
    assert "grid.errors.NotRenderableError" in found.qualnames()
    assert "\nin errors: class NotRenderableError(Exception)" in found.text
    assert "a module the target module imports" not in found.text  # the heading says why, once
    assert "grid.errors._internal" not in found.qualnames()
    assert "grid.table.Table.add_row" not in found.qualnames()  # never the target itself
    small = task_context(grid, "Add a row of cells.", "grid/table.py", "Table.add_row", budget_tokens=150)
    assert "grid.table.Table.add_column" in small.qualnames()
    # an attribute costs its name, not a reason its heading gives (unless something else found it too)
    assert any(line.startswith("option_") and "#" not in line for line in found.text.splitlines())


def test_what_the_functions_beside_the_target_import_in_their_bodies_is_offered(tmp_path):
    """A local import (a cycle kept lazy) is invisible in the module's imports: the target may
    need the same name. Its own body's imports stay hidden."""
    pkg = tmp_path / "app"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text("def load(key):\n    return key\n\n\ndef only_for_target():\n    pass\n")
    (pkg / "views.py").write_text(textwrap.dedent('''
        def show(key):
            """Show a record."""
            from app.models import load
            return load(key)


        def edit(key):
            """Edit a record."""
            from app.models import only_for_target
            return only_for_target()
    '''))
    db = index_repository(tmp_path, jobs=1).db_path
    found = task_context(db, "Edit a record.", "app/views.py", "edit")
    reasons = {i.qualname: i.reasons for i in found.items}
    assert "imported inside show" in reasons["app.models.load"]
    assert not any("imported inside edit" in r for rs in reasons.values() for r in rs)

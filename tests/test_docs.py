"""The docs are generated from the code or run by the tests, so they stay true."""

import re
from pathlib import Path

import duckdb
import pytest

from codegraph import docgen, schema
from codegraph.query_worker import query_database
from codegraph.semantic.models import HashingModel
from codegraph.semantic.store import DEFAULT_DIM, register_embed

DOCS = Path(__file__).parent.parent / "docs"
EXAMPLE = re.compile(r"```sql\n(.*?)```\n<!-- expect: (.*?) -->", re.S)


@pytest.mark.parametrize("page", sorted(docgen.PAGES))
def test_reference_pages_are_current(page):
    assert (DOCS / page).read_text() == docgen.PAGES[page](), (
        f"docs/{page} is stale: run `python -m codegraph.docgen docs/`")


def _examples():
    return EXAMPLE.findall((DOCS / "cookbook.md").read_text())


def test_every_cookbook_example_binds_against_the_schema():
    """Fast and without the stdlib: every table, column, macro and function an example names
    exists (the slow test below runs them on the stdlib)."""
    examples = _examples()
    assert len(examples) >= 10
    con = duckdb.connect(":memory:")
    con.execute(schema.ddl(DEFAULT_DIM))
    register_embed(con, HashingModel(DEFAULT_DIM), DEFAULT_DIM)
    for sql, _expect in examples:
        con.execute("EXPLAIN " + sql)
    con.close()


@pytest.mark.slow
@pytest.mark.parametrize("sql,expect", _examples(), ids=lambda v: v[:40] if isinstance(v, str) else None)
def test_cookbook_example_runs_on_the_stdlib(stdlib_db, sql, expect):
    result = query_database(stdlib_db, sql)
    assert result.rows, sql
    cells = " ".join(str(v) for row in result.rows for v in row) + " " + " ".join(result.columns)
    assert expect in cells

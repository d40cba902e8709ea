"""One declaration per table (codegraph/schema.py): the database, the rows, the Arrow schemas,
the docs and the version all follow it."""

import dataclasses

import duckdb
import pyarrow as pa
import pytest

from codegraph import schema
from codegraph.columns import arrow_schema, column_values
from codegraph.languages.python.extract import extract
from codegraph.semantic.store import DEFAULT_DIM


def test_the_database_has_exactly_the_declared_tables_and_columns(mini_db):
    con = duckdb.connect(str(mini_db), read_only=True)
    try:
        for table in schema.TABLES:
            actual = con.execute(
                "SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = $t AND table_schema = 'main' "
                "ORDER BY ordinal_position", {"t": table.name}).fetchall()
            declared = [(c.name, c.sql_type(DEFAULT_DIM), "NO" if c.required else "YES") for c in table.columns]
            assert actual == declared, table.name
        version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    finally:
        con.close()
    assert version == schema.SCHEMA_VERSION


def test_parser_rows_are_the_declared_named_tuples():
    source = (b"import os\n\nY = 2\n\n\nclass A(object):\n    x = 1\n\n    def m(self, a, *, b=2):\n"
              b"        def inner():\n            return a\n        c = inner()\n        return os.path.join(c)\n")
    facts = extract(source, "pkg/a.py", "pkg.a", False)
    for name, rows in facts.rows.items():
        table = schema.BY_NAME[name]
        assert rows, name
        for row in rows:
            assert type(row) is table.row
            assert row._fields == table.names("extract")
    method = next(r for r in facts.rows["members"] if r.name == "m")
    assert method.kind == "method" and method.signature == "(self, a, *, b=2)"
    assert [(p.name, p.kind) for p in facts.rows["parameters"] if p.owner_qualname == "pkg.a.A.m"] == [
        ("self", "positional"), ("a", "positional"), ("b", "keyword-only")]


def test_arrow_schemas_match_the_ddl():
    con = duckdb.connect(":memory:")
    con.execute(schema.ddl(DEFAULT_DIM))
    for table in schema.TABLES:
        empty = con.execute(f'SELECT * FROM "{table.name}" LIMIT 0').to_arrow_table()
        expected = arrow_schema(table, dim=DEFAULT_DIM)
        assert empty.schema.names == expected.names, table.name
        for field in expected:
            assert empty.schema.field(field.name).type == field.type, (table.name, field.name)
    con.close()


def test_the_version_is_a_hash_of_the_declaration(monkeypatch):
    before = schema._version()
    files = schema.BY_NAME["files"]
    changed = dataclasses.replace(files, columns=(*files.columns, schema.Column("extra", "INTEGER", "a new column")))
    monkeypatch.setattr(schema, "TABLES", tuple(changed if t is files else t for t in schema.TABLES))
    assert schema._version() != before
    monkeypatch.undo()
    assert schema._version() == before == schema.SCHEMA_VERSION


def test_ids_are_unique_even_for_names_defined_twice():
    source = (b"def f():\n    pass\n\nf = 1\n\n\ndef outer():\n    class X:\n        _fields_ = 1\n"
              b"    class X:\n        _fields_ = 2\n    return X\n")
    facts = extract(source, "m.py", "m", False)
    ids = [r.id for name in schema.DEFINITIONS for r in facts.rows[name]]
    assert len(ids) == len(set(ids))
    kinds = sorted(r.kind for r in facts.rows["globals"] if r.name == "f")
    assert kinds == ["function", "variable"]


@pytest.mark.slow
def test_stdlib_ids_are_unique(stdlib_con):
    assert stdlib_con.execute("SELECT count(*) = count(DISTINCT id) FROM symbols").fetchone() == (True,)
    assert stdlib_con.execute("SELECT count(*) = count(DISTINCT id) FROM embeddings").fetchone() == (True,)


def test_the_version_covers_the_code_that_fills_the_rows(monkeypatch):
    """A database built by another extractor or resolver is rebuilt, not mixed with new rows."""
    from importlib import resources

    hashed = {source.name for name in schema.ROW_MAKERS for source in schema._sources(resources.files("codegraph") / name)}
    assert {"extract.py", "resolve.py", "update.py", "resolution.py", "incremental.py", "columns.py", "base.py"} <= hashed
    before = schema._version()
    monkeypatch.setattr(schema, "ROW_MAKERS", tuple(n for n in schema.ROW_MAKERS if n != "update.py"))
    assert schema._version() != before


def test_a_column_of_a_table_s_slice_reads_as_the_slice_s_rows():
    """column_values shares equal strings through Arrow; a slice's list column (its offsets count
    from the whole table's first row) gives the slice's lists, not the table's first ones."""
    table = pa.table({"name": ["a", "b", None, "a"], "words": [["x"], ["y", "z"], None, ["x", "w"]]})
    for start in range(4):
        part = table.slice(start, 4 - start)
        assert column_values(part.column("words")) == [tuple(w) if w is not None else None
                                                       for w in part.column("words").to_pylist()]
        assert column_values(part.column("name")) == part.column("name").to_pylist()

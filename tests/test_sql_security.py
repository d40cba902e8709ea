"""Hostile SQL through the LLM path: rejected with a reason, or bounded; the file never changes."""

import hashlib

import pytest

from codegraph.db import connect_readonly
from codegraph.errors import QueryError, QueryRejected, QueryTimeout
from codegraph.refine.models import ScriptedModel
from codegraph.retrieval.candidate import Candidate
from codegraph.retrieval.engine import Retriever
from codegraph.retrieval.lint import Diagnostic
from codegraph.retrieval.sqlguard import Schema, run_untrusted, validate

HOSTILE = [
    "COPY files TO '/tmp/codegraph-stolen.csv'",
    "COPY (SELECT * FROM files) TO '/tmp/codegraph-stolen.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '/tmp/codegraph-export'",
    "ATTACH '/tmp/codegraph-other.duckdb' AS other",
    "DETACH graph",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_csv_auto('/etc/passwd')",
    "SELECT * FROM read_text('/etc/passwd')",
    "SELECT * FROM read_blob('/etc/passwd')",
    "SELECT * FROM read_parquet('/tmp/x.parquet')",
    "SELECT * FROM read_json_auto('/tmp/x.json')",
    "SELECT * FROM glob('/etc/*')",
    "SELECT * FROM '/etc/passwd'",
    "SELECT * FROM query('SELECT * FROM files')",
    "PRAGMA database_list",
    "PRAGMA enable_profiling",
    "SET threads = 1",
    "SET enable_external_access = true",
    "RESET enable_external_access",
    "CREATE TABLE evil AS SELECT 1",
    "CREATE MACRO evil() AS 1",
    "INSERT INTO meta VALUES ('x', 'y')",
    "UPDATE files SET path = 'x'",
    "DELETE FROM calls",
    "DROP TABLE calls",
    "ALTER TABLE files ADD COLUMN x INT",
    "CALL pragma_version()",
    "SELECT 1; DROP TABLE calls",
    "SELECT qualname FROM classes; SELECT 2",
    "SELECT getenv('HOME')",
    "SELECT current_setting('enable_external_access')",
    "SELECT * FROM duckdb_settings()",
    "CHECKPOINT",
    "VACUUM",
    "USE memory",
    "SELECT * FROM other.main.files",
    "SELECT * INTO evil FROM files",
    "SELECT * FROM no_such_table",
    "SELECT no_such_column FROM files",
]

BOUNDED = [
    # runs, but stopped by the time limit
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", "timeout"),
    ("SELECT count(*) FROM range(1000000000000) a", "timeout"),
    # runs, but only the capped number of rows comes back
    ("SELECT * FROM range(10000000)", "capped"),
    ("SELECT a.qualname, b.qualname FROM symbols a, symbols b", "capped"),
]


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def fenced(mini_db):
    con = connect_readonly(mini_db)
    yield con, Schema.from_connection(con)
    con.close()


@pytest.mark.parametrize("sql", HOSTILE)
def test_hostile_statement_is_rejected_with_a_reason(mini_db, fenced, sql):
    con, schema = fenced
    before = _digest(mini_db)
    with pytest.raises(QueryError) as info:
        run_untrusted(con, sql, schema)
    assert len(str(info.value)) > 10
    assert _digest(mini_db) == before
    assert not mini_db.with_name(mini_db.name + ".wal").exists()


@pytest.mark.parametrize("sql,how", BOUNDED)
def test_expensive_statement_is_bounded(mini_db, fenced, sql, how):
    con, schema = fenced
    before = _digest(mini_db)
    if how == "timeout":
        with pytest.raises(QueryTimeout):
            run_untrusted(con, sql, schema, timeout_s=1.0)
    else:
        result = run_untrusted(con, sql, schema, max_rows=50, timeout_s=10.0)
        assert len(result.rows) == 50 and result.truncated
    assert _digest(mini_db) == before


def test_at_least_thirty_hostile_statements():
    assert len(HOSTILE) + len(BOUNDED) >= 30


def test_validator_rejects_before_anything_runs():
    class NoSchema:
        tables, macros, columns = {"files"}, set(), {"path"}

    for sql in ("DROP TABLE files", "SELECT * FROM read_text('x')", "SELECT 1; SELECT 2"):
        with pytest.raises(QueryRejected):
            validate(sql, NoSchema)
    assert validate("SELECT path FROM files;", NoSchema) == "SELECT path FROM files"


def test_hostile_llm_answers_through_the_retriever_leave_the_database_alone(mini_db, tmp_path):
    before = _digest(mini_db)
    cand_path = tmp_path / "cand.py"
    cand_path.write_text("def f(x):\n    return x\n")
    cand = Candidate.from_file(cand_path, module="cand")
    d = Diagnostic("no-self-argument", "E0213", "Method should have self", 1, 0)
    answers = [f"```sql\n{sql}\n```" for sql in HOSTILE[:3]]
    with Retriever(mini_db, model=ScriptedModel(answers), llm_retries=2) as retriever:
        result = retriever.retrieve(cand, d)
    assert len(result.attempts) == 3 and all(a["error"] for a in result.attempts)
    assert result.source in ("lexical", "none")
    assert _digest(mini_db) == before

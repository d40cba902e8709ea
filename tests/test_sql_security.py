"""Hostile SQL through the LLM path: rejected with a reason, or bounded; the file never changes."""

import hashlib
import time

import pytest

from codegraph.db import connect_readonly
from codegraph.query_worker import QueryWorker
from codegraph.errors import QueryError, QueryRejected, QueryTimeout
from codegraph.llm import ScriptedModel
from codegraph.retrieval.candidate import Candidate
from codegraph.retrieval.engine import Retriever
from codegraph.languages import Diagnostic
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
    # table functions in other places than FROM (issue 10, row 10)
    "SELECT s.name FROM files, LATERAL duckdb_settings() s",
    "SELECT d.database_name FROM files f, LATERAL duckdb_databases() d",
    "SELECT * FROM files f CROSS JOIN LATERAL (SELECT * FROM duckdb_extensions()) e",
    "SELECT (SELECT count(*) FROM duckdb_secrets()) AS n",
    "SELECT * FROM files WHERE path IN (SELECT name FROM pragma_table_info('files'))",
    "SELECT " + "(" * 5000 + "1" + ")" * 5000,
]

BOUNDED = [
    # runs, but stopped by the time limit
    ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r", "timeout"),
    ("SELECT count(*) FROM range(1000000000000) a", "timeout"),
    # one long expression: DuckDB's interrupt cannot stop it, the query process is killed
    ("SELECT list_reduce(range(1, 30000000), (a, b) -> a + b) AS s", "timeout"),
    # results bigger than memory_limit covers: the byte cap, or the process's memory cap
    ("SELECT repeat('x', 1000000000) AS big FROM range(3)", "bytes"),
    ("SELECT repeat('x', 1000000) AS wide FROM range(1000)", "bytes"),
    # runs, but only the capped number of rows comes back
    ("SELECT * FROM range(10000000)", "capped"),
    ("SELECT a.qualname, b.qualname FROM symbols a, symbols b", "capped"),
]


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def fenced(mini_db):
    con = connect_readonly(mini_db)
    schema = Schema.from_connection(con)
    con.close()
    worker = QueryWorker(mini_db, memory_mb=3072)
    yield worker, schema
    worker.close()


@pytest.mark.parametrize("sql", HOSTILE)
def test_hostile_statement_is_rejected_with_a_reason(mini_db, fenced, sql):
    worker, schema = fenced
    before = _digest(mini_db)
    with pytest.raises(QueryError) as info:
        run_untrusted(worker, sql, schema)
    assert len(str(info.value)) > 10
    assert _digest(mini_db) == before
    assert not mini_db.with_name(mini_db.name + ".wal").exists()


@pytest.mark.parametrize("sql,how", BOUNDED)
def test_expensive_statement_is_bounded(mini_db, fenced, sql, how):
    worker, schema = fenced
    before = _digest(mini_db)
    started = time.monotonic()
    if how == "timeout":
        with pytest.raises(QueryTimeout, match="stopped after"):
            run_untrusted(worker, sql, schema, timeout_s=1.0)
        assert time.monotonic() - started < 1.0 + 5  # the limit and a grace to stop the process
    elif how == "bytes":
        try:
            result = worker.run(sql, max_rows=50, timeout_s=20.0, max_bytes=4_000_000)
        except QueryRejected as exc:  # the process hit its memory cap first: refused, not killed by the OS
            assert "memory" in str(exc)
        else:
            assert result.truncated and result.stopped_by == "bytes"
            assert sum(len(str(v)) for row in result.rows for v in row) <= 4_000_000
        assert time.monotonic() - started < 25
    else:
        result = run_untrusted(worker, sql, schema, max_rows=50, timeout_s=10.0)
        assert len(result.rows) == 50 and result.truncated
    assert _digest(mini_db) == before
    assert worker.run("SELECT count(*) FROM files").rows[0][0] > 0  # the worker serves the next query


def test_at_least_thirty_hostile_statements():
    assert len(HOSTILE) + len(BOUNDED) >= 30


def test_the_checked_rendering_runs_not_the_raw_text(fenced):
    worker, schema = fenced
    sql = "select   qualname from classes   where name = 'Item' -- a comment the model left"
    checked = validate(sql, schema)
    assert checked == "SELECT qualname FROM classes WHERE name = 'Item'"
    assert worker.run(checked).rows == [("shop.models.Item",)]


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
    d = Diagnostic("plugin-message", "E9901", "A message from a pylint plugin no rule covers", 1, 0)
    answers = [f"```sql\n{sql}\n```" for sql in HOSTILE[:3]]
    with Retriever(mini_db, model=ScriptedModel(answers), llm_retries=2) as retriever:
        result = retriever.retrieve(cand, d)
    assert len(result.attempts) == 3 and all(a["error"] for a in result.attempts)
    assert result.source in ("hybrid", "none")
    assert _digest(mini_db) == before


def test_a_query_runs_when_no_thread_can_be_started_for_its_soft_time_limit(mini_db, monkeypatch):
    """A query process near its address-space limit may fail to start the timer thread ("can't
    start new thread" in a CI run); the query must still run (QueryWorker's hard bound stays)."""
    import threading

    from codegraph.db import connect_readonly, run_query

    def no_thread(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Timer, "start", no_thread)
    con = connect_readonly(mini_db)
    try:
        assert run_query(con, "SELECT qualname FROM classes WHERE name = 'Item'").rows == [("shop.models.Item",)]
    finally:
        con.close()

"""The listed sets of columns.py: among() selects what `x IN (SELECT ...)` selects, and is tested
inside the table's scan (the reason it exists: the scan then reads the other columns of the
matching rows only)."""

import random

import duckdb
import pyarrow as pa
import pytest

from codegraph.columns import among, keep_values, register_values


_RNG = random.Random(7)
IDS = [_RNG.getrandbits(62) for _ in range(40)]  # file ids are hashes: no range prunes them


@pytest.fixture
def con():
    con = duckdb.connect()
    con.execute("CREATE TABLE calls (file_id BIGINT, arguments VARCHAR[])")
    con.executemany("INSERT INTO calls VALUES (?, ?)", [(IDS[i % 40], [f"a{i}"]) for i in range(400)])
    yield con
    con.close()


@pytest.mark.parametrize("chosen", [[], [0], [3, 5, 39], list(range(40))])
def test_among_selects_what_a_join_selects(con, chosen):
    ids = [IDS[i] for i in chosen] + [12345]  # and one no row has
    keep_values(con, "_gone", "file_id", ids, listed=True)
    register_values(con, "_parts", ids, pa.int64(), listed=True)
    joined = sorted(con.execute("SELECT file_id, arguments FROM calls WHERE file_id IN (SELECT file_id FROM _gone)").fetchall())
    assert sorted(con.execute(f"SELECT file_id, arguments FROM calls WHERE {among('file_id', '_gone')}").fetchall()) == joined
    assert sorted(con.execute(f"SELECT file_id, arguments FROM calls WHERE {among('file_id', '_parts')}").fetchall()) == joined
    assert len(joined) == 10 * len(chosen)
    rest = con.execute(f"SELECT count(*) FROM calls WHERE NOT {among('file_id', '_gone')}").fetchone()[0]
    assert rest == 400 - len(joined)


def test_among_is_tested_in_the_scan(con):
    keep_values(con, "_gone", "file_id", IDS[:2], listed=True)
    plan = con.execute(f"EXPLAIN SELECT arguments FROM calls WHERE {among('file_id', '_gone')}").fetchall()[0][1]
    scan = plan[plan.index("SEQ_SCAN"):]
    assert "Filters" in scan and "list_contains" in scan
    joined = con.execute("EXPLAIN SELECT arguments FROM calls WHERE file_id IN (SELECT file_id FROM _gone)").fetchall()[0][1]
    assert "JOIN" in joined  # what among() avoids


def test_a_set_kept_again_is_listed_again(con):
    keep_values(con, "_gone", "file_id", IDS[:1], listed=True)
    keep_values(con, "_gone", "file_id", IDS[1:3], listed=True)
    assert {r[0] for r in con.execute(f"SELECT file_id FROM calls WHERE {among('file_id', '_gone')}").fetchall()} == set(IDS[1:3])


def test_only_numbers_are_listed(con):
    with pytest.raises(TypeError):
        register_values(con, "_names", ["a'b"], listed=True)

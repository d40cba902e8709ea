"""Every table of the fixture repository's graph against reviewed golden rows.

Regenerate after an intended change with CODEGRAPH_UPDATE_GOLDEN=1 and review the diff.
"""

import json
import os
from pathlib import Path

import pytest

from codegraph.db import TABLES

GOLDEN = Path(__file__).parent / "golden"
# Columns that depend on the machine or the moment, not on the code.
VOLATILE = {"files": ["mtime_ns"], "skipped_files": ["mtime_ns", "size"]}


def _dump(con, table):
    exclude = VOLATILE.get(table, [])
    cols = [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = $t ORDER BY ordinal_position",
        {"t": table}).fetchall() if r[0] not in exclude]
    quoted = ", ".join(f'"{c}"' for c in cols)
    result = con.execute(f'SELECT {quoted} FROM "{table}" ORDER BY ALL').fetchall()
    return [dict(zip(cols, row)) for row in result]


@pytest.mark.parametrize("table", TABLES)
def test_table_matches_golden(mini_con, table):
    actual = json.loads(json.dumps(_dump(mini_con, table), default=str))
    path = GOLDEN / f"{table}.json"
    if os.environ.get("CODEGRAPH_UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=1, ensure_ascii=False) + "\n")
    expected = json.loads(path.read_text())
    assert actual == expected


def test_golden_covers_every_table():
    assert {p.stem for p in GOLDEN.glob("*.json")} == set(TABLES)

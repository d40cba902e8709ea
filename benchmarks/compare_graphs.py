"""Two graph databases compared table by table: every table of both layers and the symbols
views, `EXCEPT ALL` both ways. What a refactor that must not change the graph is checked with.

    python -m benchmarks.compare_graphs BEFORE.duckdb AFTER.duckdb

Exits 1 when a table or view differs; meta is listed, not compared (timestamps, versions)."""

from __future__ import annotations

import sys

import duckdb

VIEWS = ("symbols", "all_symbols")


def compare(before: str, after: str) -> list[str]:
    """The tables and views that differ, each with its counts; prints one line per table."""
    con = duckdb.connect()
    for alias, path in (("a", before), ("b", after)):
        con.execute(f"ATTACH '{path.replace(chr(39), chr(39) * 2)}' AS {alias} (READ_ONLY)")
    listed = "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = $d ORDER BY ALL"
    tables = con.execute(listed, {"d": "a"}).fetchall()
    others = set(con.execute(listed, {"d": "b"}).fetchall())
    differ = []
    for schema, table in [*tables, *(("main", v) for v in VIEWS)]:
        name = f"{schema}.{table}"
        if table == "meta":
            keys = con.execute(f"SELECT key FROM (SELECT key, value FROM a.{name} EXCEPT ALL SELECT key, value "
                               f"FROM b.{name}) ORDER BY key").fetchall()
            print(f"{name}: differs in {', '.join(k for (k,) in keys) or 'nothing'} (not compared)")
            continue
        if table not in VIEWS and (schema, table) not in others:
            differ.append(f"{name}: missing after")
            continue
        rows = con.execute(f"SELECT count(*) FROM a.{name}").fetchone()[0]
        only = [con.execute(f"SELECT count(*) FROM (SELECT * FROM {x}.{name} EXCEPT ALL SELECT * FROM {y}.{name})")
                .fetchone()[0] for x, y in (("a", "b"), ("b", "a"))]
        print(f"{name}: {rows} rows, {only[0]} only before, {only[1]} only after")
        if any(only):
            differ.append(f"{name}: {only[0]} rows only before, {only[1]} only after")
    con.close()
    return differ


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit("usage: python -m benchmarks.compare_graphs BEFORE.duckdb AFTER.duckdb")
    differ = compare(sys.argv[1], sys.argv[2])
    print("identical" if not differ else "DIFFERENT: " + "; ".join(differ))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()

"""The tables of schema.py as Arrow: their Arrow schemas, rows into Arrow and Arrow into DuckDB,
Arrow columns back as Python values (one conversion, equal strings shared) for the code that
walks rows in Python. What reads the graph (the CLI's queries, the MCP server) never needs it,
and never imports pyarrow."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import pyarrow as pa

from .schema import BY_NAME, Column, Table

if TYPE_CHECKING:  # connections are handed in: a parsing worker, which imports this, never opens one
    import duckdb

_ARROW_TYPES = {"BIGINT": pa.int64(), "INTEGER": pa.int32(), "VARCHAR": pa.string(), "BOOLEAN": pa.bool_(),
                "DOUBLE": pa.float64(), "FLOAT": pa.float32(), "VARCHAR[]": pa.list_(pa.string()),
                "TIMESTAMP": pa.timestamp("us")}


def arrow_type(column: Column, dim: int | None = None) -> pa.DataType:
    if column.type.startswith("FLOAT["):
        return pa.list_(pa.float32(), dim) if dim else pa.list_(pa.float32())
    return _ARROW_TYPES[column.type]


def arrow_schema(table: Table, *stages: str, dim: int | None = None) -> pa.Schema:
    """The table's columns of these stages (all without one) as an Arrow schema."""
    return pa.schema([(c.name, arrow_type(c, dim)) for c in table.columns if not stages or c.stage in stages])


def rows_to_arrow(schema: pa.Schema, rows: list[tuple]) -> pa.Table:
    """Row tuples (in the schema's column order) as one Arrow table."""
    if not rows:
        return schema.empty_table()
    arrays = [pa.array(col, type=schema.field(i).type) for i, col in enumerate(zip(*rows))]
    return pa.Table.from_arrays(arrays, schema=schema)


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> int:
    """Bulk insert through Arrow: hundreds of thousands of rows per second, never row by row."""
    if not data.num_rows:
        return 0
    con.register("_codegraph_batch", data)
    name = ".".join(f'"{part}"' for part in table.split("."))  # `library.classes`: the library layer
    try:
        con.execute(f'INSERT INTO {name} BY NAME SELECT * FROM _codegraph_batch')
    finally:
        con.unregister("_codegraph_batch")
    return data.num_rows


def update_by_id(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> None:
    """Set data's columns but `id` on the rows of `table` with its ids (`library.classes`: the
    library layer's)."""
    if not data.num_rows:
        return
    name = ".".join(f'"{part}"' for part in table.split("."))
    assignments = ", ".join(f'"{c}" = _codegraph_set."{c}"' for c in data.column_names if c != "id")
    con.register("_codegraph_set", data)
    try:
        con.execute(f"UPDATE {name} SET {assignments} FROM _codegraph_set WHERE {name}.id = _codegraph_set.id")
    finally:
        con.unregister("_codegraph_set")


def extracted(con: duckdb.DuckDBPyConnection, name: str, clause: str = "",
              columns: Iterable[str] | None = None) -> pa.Table:
    """The parser's columns of a table (`library.imports`: of that schema), or those of them
    named, as Arrow, the rows `clause` (a WHERE) selects: what an update hands a resolver again."""
    schema_name, _, bare = name.rpartition(".")
    cols = ", ".join(f'"{c}"' for c in (columns or BY_NAME[bare].names("extract")))
    source = f'{schema_name}."{bare}"' if schema_name else f'"{bare}"'
    return con.execute(f"SELECT {cols} FROM {source} {clause}").to_arrow_table()


def register_values(con: duckdb.DuckDBPyConnection, name: str, values, kind: pa.DataType = pa.string(),
                    listed: bool = False) -> None:
    """Values for SQL as the one-column table `name` (column v), read as `x IN (SELECT v FROM
    name)`, or with `listed` also as among(x, name): bound as a parameter, a list costs about
    70 µs a value (0.36 s for 5,000)."""
    values = list(values)
    con.register(name, pa.table({"v": pa.array(values, kind)}))
    if listed:
        _listed(con, name, values, kind)


def keep_values(con: duckdb.DuckDBPyConnection, name: str, column: str, values,
                kind: pa.DataType = pa.int64(), listed: bool = False) -> None:
    """Values as the temp table `name` of one column, for the statements of a transaction (a
    registered view would follow the Arrow table it was given); with `listed` read as
    among(x, name) too."""
    values = list(values)
    con.register("_codegraph_values", pa.table({column: pa.array(values, kind)}))
    try:
        con.execute(f'CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM _codegraph_values')
    finally:
        con.unregister("_codegraph_values")
    if listed:
        _listed(con, name, values, kind)


def _listed(con: duckdb.DuckDBPyConnection, name: str, values: list, kind: pa.DataType) -> None:
    """A set of numbers (file ids) as the connection's variable `name`, a list written out (0.3 ms
    for 30, where a bound list takes 2.4 ms)."""
    if not pa.types.is_integer(kind):
        raise TypeError(f"only numbers are listed, not {kind}")
    con.execute(f"SET VARIABLE {name} = [{', '.join(str(int(v)) for v in values)}]::BIGINT[]")


def sql_string(text: str | Path) -> str:
    """`text` as an SQL string literal (a path in ATTACH, read_parquet, a setting)."""
    return "'" + str(text).replace("'", "''") + "'"


def among(expr: str, name: str) -> str:
    """SQL: `expr` is one of the listed set `name` (register_values, keep_values). The test runs
    inside the table's scan, before the scan reads the rows' other columns, where `x IN (SELECT v
    FROM name)` is a join after the scan has read every column of every row (the changed files'
    calls with their arguments, on the stdlib's graph: 1.5 ms against 33 ms). It tests each value
    on each row (1,000 values: 0.05 s a scan of the stdlib's calls; a hash join stays near 1 ms
    for any number): for sets of the size of a change, as the files an update parses (where a
    statement returns rows of each, as the files an update learns, a set of 1,700 still gains)."""
    return f"list_contains(getvariable('{name}'), {expr})"


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple], schema_name: str | None = None) -> int:
    """Rows of a table's row type (BY_NAME[table].row), inserted through Arrow."""
    declared = BY_NAME[table]
    target = f"{schema_name}.{table}" if schema_name else table
    return insert_arrow(con, target, rows_to_arrow(arrow_schema(declared, *_row_stages(declared)), rows))


def _row_stages(table: Table) -> tuple[str, ...]:
    return tuple({c.stage for c in table.columns if c.stage != "resolve"})



def concat(name: str, tables: list[pa.Table], columns: Iterable[str] | None = None) -> pa.Table:
    """One table of the rows of `tables`, in the columns the parser gives `name` (or those of
    them named) and their types."""
    schema = arrow_schema(BY_NAME[name], "extract")
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    tables = [t.select(list(schema.names)).cast(schema) for t in tables if t.num_rows]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def column_lists(table: pa.Table, names: Iterable[str]) -> list[list]:
    return [column_values(table.column(n)) for n in names]


def column_values(column: pa.ChunkedArray) -> list:
    """A column as Python values; equal strings are one object (a qualname repeats on every row
    of its function: one copy, hashed once, whatever dictionary it is a key of)."""
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return _shared(column)
    if pa.types.is_list(kind) and pa.types.is_string(kind.value_type):
        lists = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        if not isinstance(lists, pa.ListArray):  # an empty column
            return column.to_pylist()
        words = _shared(lists.flatten())  # a slice's values only, so its offsets count from its first
        offsets = lists.offsets.to_numpy()
        offsets = (offsets - offsets[0]).tolist()
        valid = lists.is_valid().to_numpy(zero_copy_only=False).tolist()
        return [tuple(words[offsets[i]:offsets[i + 1]]) if valid[i] else None for i in range(len(lists))]
    return column.to_pylist()


def _shared(column: pa.Array | pa.ChunkedArray) -> list:
    if not len(column):
        return []
    encoded = (column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column).dictionary_encode()
    words = [*encoded.dictionary.to_pylist(), None]
    return [words[i] for i in encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).tolist()]


# An update's sets of file ids (update.py keeps them; Resolution.plan_update says what each holds)
IN_GONE = among("file_id", "_gone")
IN_FRESH = among("file_id", "_fresh")

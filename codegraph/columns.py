"""Arrow columns as Python values, for the code that walks rows in Python (the resolver, the
build's bookkeeping): one conversion, with equal strings shared."""

from __future__ import annotations

from typing import Iterable

import pyarrow as pa

from .schema import BY_NAME


def concat(name: str, tables: list[pa.Table]) -> pa.Table:
    """One table of the rows of `tables`, in the columns the parser gives `name` and their types."""
    schema = BY_NAME[name].arrow_schema("extract")
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
        words = _shared(lists.flatten())
        offsets = lists.offsets.to_numpy().tolist()
        valid = lists.is_valid().to_numpy(zero_copy_only=False).tolist()
        return [tuple(words[offsets[i]:offsets[i + 1]]) if valid[i] else None for i in range(len(lists))]
    return column.to_pylist()


def _shared(column: pa.Array | pa.ChunkedArray) -> list:
    if not len(column):
        return []
    encoded = (column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column).dictionary_encode()
    words = [*encoded.dictionary.to_pylist(), None]
    return [words[i] for i in encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False).tolist()]

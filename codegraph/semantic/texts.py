"""What each symbol is embedded as: its names, signature, docstring and the identifiers it uses."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from .models import sparse_features

_CLASS_SOURCE_LIMIT = 1500  # a class's methods are embedded on their own


def symbol_texts(tables: dict[str, list[tuple]], include_docstrings: bool = True) -> Iterator[tuple[int, int, list[tuple[str, float]]]]:
    """(id, file_id, [(text, weight)]) for every definition in extract rows."""
    for table in ("modules", "classes", "members", "globals", "nested_functions"):
        for row in tables.get(table, ()):
            get = lambda name: getattr(row, name, None)  # noqa: E731  (rows are the schema's NamedTuples)
            pieces: list[tuple[str, float]] = [(get("name") or "", 3.0), (get("qualname") or "", 1.0)]
            if get("signature"):
                pieces.append((get("signature"), 1.5))
            if get("annotation"):
                pieces.append((get("annotation"), 1.0))
            if get("value"):
                pieces.append((get("value"), 0.5))
            if table == "classes":
                pieces.append((" ".join(get("bases") or []), 1.5))
            if include_docstrings and get("docstring"):
                pieces.append((get("docstring"), 1.0))
            source = get("source")
            if source:
                if table == "classes":
                    source = source[:_CLASS_SOURCE_LIMIT]
                if not include_docstrings and get("docstring"):
                    source = _strip_docstring(source, get("docstring"))
                pieces.append((source, 0.5))
            yield get("id"), get("file_id"), pieces


def _strip_docstring(source: str, docstring: str) -> str:
    """Remove the docstring's words from the source (the benchmark queries with them)."""
    first = docstring.strip().splitlines()[0] if docstring.strip() else ""
    for quote in ('"""', "'''", '"', "'"):
        start = source.find(quote)
        if start != -1:
            end = source.find(quote, start + len(quote))
            if end != -1 and first[:20] in source[start:end + len(quote)]:
                return source[:start] + source[end + len(quote):]
    return source


def sparse_vectors(tables: dict[str, list[tuple]], dim: int, include_docstrings: bool = True):
    """Columnar sparse term frequencies: ids, file_ids, indptr, indices, values."""
    ids, file_ids, indptr, all_indices, all_values = [], [], [0], [], []
    for sid, fid, pieces in symbol_texts(tables, include_docstrings):
        indices, values = sparse_features(pieces, dim)
        ids.append(sid)
        file_ids.append(fid)
        all_indices.append(indices)
        all_values.append(values)
        indptr.append(indptr[-1] + len(indices))
    return (np.asarray(ids, np.int64), np.asarray(file_ids, np.int64), np.asarray(indptr, np.int64),
            np.concatenate(all_indices) if all_indices else np.zeros(0, np.int32),
            np.concatenate(all_values) if all_values else np.zeros(0, np.float32))

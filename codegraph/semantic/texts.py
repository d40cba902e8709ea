"""What each symbol is embedded as: its names, signature, docstring and the identifiers it uses."""

from __future__ import annotations

import functools
import math
import re
import zlib
from collections import Counter
from typing import Iterator, Sequence

import numpy as np

from ..schema import DEFINITIONS

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_NOISE = frozenset({"self", "cls", "the", "and", "for", "not", "none", "return", "def", "class", "import",
                    "from", "with", "this", "that", "true", "false", "else", "elif", "raise", "try",
                    "except", "lambda", "pass", "yield", "is", "in", "if", "or", "of", "to", "a", "an",
                    "be", "it", "as", "by", "on", "at", "args", "kwargs"})

_CLASS_SOURCE_LIMIT = 1500  # a class's methods are embedded on their own


def symbol_texts(tables: dict[str, list[tuple]], include_docstrings: bool = True) -> Iterator[tuple[int, int, list[tuple[str, float]]]]:
    """(id, file_id, [(text, weight)]) for every definition in extract rows."""
    for table in DEFINITIONS:
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


# -- texts (models that read text) ---------------------------------------------------------------

_DOCUMENT_CHARS = 2000  # a learned model reads its first 128 word pieces; the rest costs tokenizing only


def document(table: str, row) -> str:
    """A definition as a learned model reads it: its qualified name, then what it says of itself
    and its code (the source holds the signature and the docstring); fields where there is no source."""
    get = lambda name: getattr(row, name, None)  # noqa: E731
    head = get("qualname") or get("name") or ""
    source = get("source")
    if source:
        return f"{head}\n{source[:_DOCUMENT_CHARS]}"
    parts = [head, get("signature"), get("annotation") and f": {get('annotation')}", get("value") and f"= {get('value')}",
             get("docstring")]
    return "\n".join(p for p in parts if p)[:_DOCUMENT_CHARS]


def documents(tables: dict[str, list[tuple]]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(ids, file_ids, texts) of every definition in extract rows."""
    ids, file_ids, texts = [], [], []
    for table in DEFINITIONS:
        for row in tables.get(table, ()):
            ids.append(row.id)
            file_ids.append(row.file_id)
            texts.append(document(table, row))
    return np.asarray(ids, np.int64), np.asarray(file_ids, np.int64), texts


def merge_documents(parts: Sequence[tuple]) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Concatenate (ids, file_ids, texts) blocks from several workers."""
    parts = [p for p in parts if p is not None and len(p[0])]
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), []
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            [text for p in parts for text in p[2]])


# -- hashed features (the `hash` model) ---------------------------------------------------------

@functools.lru_cache(maxsize=200_000)
def _word_features(word: str) -> tuple[tuple[str, float], ...]:
    """Features of one identifier, computed once per distinct word."""
    lower = word.lower()
    if lower in _NOISE or len(lower) < 2:
        return ()
    out: dict[str, float] = {lower: 1.0}
    parts = [p.lower() for chunk in word.split("_") for p in _PART.findall(chunk)]
    if len(parts) > 1 or (parts and parts[0] != lower):
        for part in parts:
            if len(part) > 1 and part not in _NOISE:
                out[part] = out.get(part, 0.0) + 1.0
    for part in parts:
        if len(part) > 3:
            padded = f"<{part}>"
            for i in range(len(padded) - 2):
                gram = "#" + padded[i : i + 3]
                out[gram] = out.get(gram, 0.0) + 0.5
    return tuple(out.items())


@functools.lru_cache(maxsize=500_000)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    h = zlib.crc32(feature.encode())
    return h % dim, (1.0 if (h >> 31) & 1 else -1.0)


@functools.lru_cache(maxsize=200_000)
def _word_vector(word: str, dim: int) -> tuple[np.ndarray, np.ndarray] | None:
    """One identifier's hashed features, computed once per distinct word."""
    feats = _word_features(word)
    if not feats:
        return None
    indices = np.empty(len(feats), np.int64)
    values = np.empty(len(feats), np.float64)
    for i, (feature, value) in enumerate(feats):
        indices[i], sign = _bucket(feature, dim)
        values[i] = sign * value
    return indices, values


def sparse_features(pieces: Sequence[tuple[str, float]], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Sparse (indices, values) of weighted text pieces; counts of a word are damped (1 + log n)."""
    index_parts, value_parts = [], []
    log = math.log
    for text, weight in pieces:
        for word, count in Counter(_WORD.findall(text)).items():
            vector = _word_vector(word, dim)
            if vector is not None:
                index_parts.append(vector[0])
                value_parts.append(vector[1] * (weight * (1.0 + log(count))))
    if not index_parts:
        return np.zeros(0, np.int32), np.zeros(0, np.float32)
    dense = np.bincount(np.concatenate(index_parts), weights=np.concatenate(value_parts), minlength=dim)
    nonzero = np.flatnonzero(dense)
    return nonzero.astype(np.int32), dense[nonzero].astype(np.float32)


def dense_tf(indptr: np.ndarray, indices: np.ndarray, values: np.ndarray, dim: int) -> np.ndarray:
    """CSR rows of term frequencies as a dense (rows, dim) matrix."""
    rows = len(indptr) - 1
    matrix = np.zeros((rows, dim), np.float32)
    np.add.at(matrix, (np.repeat(np.arange(rows), np.diff(indptr)), indices), values)
    return matrix


def merge_sparse(parts: Sequence[tuple]) -> tuple:
    """Concatenate (ids, file_ids, indptr, indices, values) blocks from several workers."""
    parts = [p for p in parts if p is not None and len(p[0])]
    if not parts:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64),
                np.zeros(0, np.int32), np.zeros(0, np.float32))
    ids = np.concatenate([p[0] for p in parts])
    file_ids = np.concatenate([p[1] for p in parts])
    indptr, offset = [np.zeros(1, np.int64)], 0
    for p in parts:
        indptr.append(p[2][1:] + offset)
        offset += p[2][-1]
    return (ids, file_ids, np.concatenate(indptr), np.concatenate([p[3] for p in parts]),
            np.concatenate([p[4] for p in parts]))


# -- terms for BM25 --------------------------------------------------------------------------------

STOPWORDS = frozenset("""
a an the and or not of to in on at by for from with without into onto over under as is are was were be been
being it its this that these those there their them they we you your our can could should would may might
must will shall do does did done has have had having if then else when which who whom whose what where how
why all any each every some no nor only own same so than too very just also but such about against between
through during before after above below up down out off again further once here both few more most other
self cls none true false return returns def class import lambda pass yield raise try except finally
while args kwargs param params value values object str int bool float list dict tuple type obj
""".split())


def normalise(word: str) -> str:
    """Lower case, then a light stem: -ing, plurals and a final e go, so `paths` and `path`,
    `echoing` and `echo`, `pricing` and `price`, `modules` and `module` are one term each
    (`string` and `code` stay: their stems would be too short)."""
    word = word.lower()
    if len(word) > 6 and word.endswith("ing"):
        stem = word[:-3]
        if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
            stem = stem[:-1]
        return stem
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 4 and word.endswith("e") and not word.endswith("ee"):
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=200_000)
def _word_terms(word: str) -> tuple[str, ...]:
    parts = [p for chunk in word.split("_") for p in _PART.findall(chunk)]
    out = [normalise(p) for p in parts if len(p) > 1]
    whole = normalise(word.replace("_", ""))
    if len(parts) > 1 and len(whole) > 2:
        out.append(whole)  # `urlparse` and `url_parse` meet `urlparse`
    return tuple(t for t in out if t not in STOPWORDS and not t.isdigit())


def tokens(text: str) -> list[str]:
    """Terms of free text or code: identifiers split (snake_case, CamelCase), normalised."""
    out: list[str] = []
    for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text or ""):
        out.extend(_word_terms(word))
    return out


def term_weights(table: str, row) -> dict[str, float]:
    """A definition's terms, weighted by where they occur: its own name counts most, then its
    docstring's first line, the rest of the docstring, its signature, its owner's name."""
    get = lambda name: getattr(row, name, None)  # noqa: E731
    weights: dict[str, float] = {}

    def add(text: str | None, weight: float) -> None:
        for term in tokens(text or ""):
            weights[term] = weights.get(term, 0.0) + weight

    add(get("name"), 3.0)
    doc = (get("docstring") or "").strip()
    if doc:
        first, _, rest = doc.partition("\n")
        add(first, 1.5)
        add(rest[:2000], 0.5)
    add(get("signature"), 0.5)
    add(get("annotation"), 0.5)
    if table == "members":
        add((get("class_qualname") or "").rpartition(".")[2], 1.0)
    add((get("module") or get("qualname") or "").rpartition(".")[2], 0.5)
    return weights


def term_rows(tables: dict[str, list[tuple]]) -> tuple[list[int], list[int], list[str], list[float], list[float]]:
    """Columns of the `terms` table for every definition in extract rows."""
    ids, file_ids, terms, weights, lengths = [], [], [], [], []
    for table in DEFINITIONS:
        for row in tables.get(table, ()):
            found = term_weights(table, row)
            if not found:
                continue
            length = sum(found.values())
            for term, weight in found.items():
                ids.append(row.id)
                file_ids.append(row.file_id)
                terms.append(term)
                weights.append(weight)
                lengths.append(length)
    return ids, file_ids, terms, weights, lengths

"""Embedding models behind one interface, with a registry.

The default, `hash`, needs nothing: identifiers are split (snake_case, CamelCase), sub-word
trigrams are added, every feature is hashed (crc32, signed) into a fixed dimension, counts are
damped (1 + log tf) and weighted by an inverse document frequency learned from the indexed
repository, so rare identifiers count and `self` does not. `openai` calls any OpenAI-compatible
embeddings endpoint. Vectors are L2-normalised: cosine similarity is a dot product.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from abc import ABC, abstractmethod
from collections import Counter
from typing import Sequence

import numpy as np

from ..environment import getenv
from ..errors import CodegraphError
from ..llm import ModelError, OpenAIEndpoint
from ..registry import Registry

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_NOISE = frozenset({"self", "cls", "the", "and", "for", "not", "none", "return", "def", "class", "import",
                    "from", "with", "this", "that", "true", "false", "else", "elif", "raise", "try",
                    "except", "lambda", "pass", "yield", "is", "in", "if", "or", "of", "to", "a", "an",
                    "be", "it", "as", "by", "on", "at", "args", "kwargs"})


class EmbeddingError(CodegraphError):
    pass


class EmbeddingModel(ABC):
    id: str
    dim: int

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised."""


MODELS: Registry[EmbeddingModel] = Registry("embedding model", EmbeddingError)
register = MODELS.register


def get_model(name: str = "hash", **options) -> EmbeddingModel:
    return MODELS.create(name, **options)


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


@register("hash")
class HashingModel(EmbeddingModel):
    """Deterministic, dependency-free, offline; fit() learns the IDF of a corpus."""

    def __init__(self, dim: int = 512, idf: Sequence[float] | None = None) -> None:
        self.dim = dim
        self.id = f"hash-v1-{dim}"
        self.idf = np.asarray(idf, np.float32) if idf is not None else np.ones(dim, np.float32)

    def sparse(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        return sparse_features([(text, 1.0)], self.dim)

    def dense(self, sparse_rows: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        indptr = np.concatenate([[0], np.cumsum([len(i) for i, _ in sparse_rows])]).astype(np.int64)
        if not sparse_rows:
            return np.zeros((0, self.dim), np.float32)
        return dense_tf(indptr, np.concatenate([i for i, _ in sparse_rows]),
                        np.concatenate([v for _, v in sparse_rows]), self.dim)

    def _set_idf(self, rows: int, df: np.ndarray) -> "HashingModel":
        self.idf = (np.log((1 + rows) / (1 + df)) + 1.0).astype(np.float32)
        return self

    def fit(self, tf: np.ndarray) -> "HashingModel":
        return self._set_idf(tf.shape[0], (tf != 0).sum(axis=0))

    def fit_sparse(self, indptr: np.ndarray, indices: np.ndarray) -> "HashingModel":
        """fit() from CSR rows without building the dense matrix (indices are unique per row)."""
        return self._set_idf(len(indptr) - 1, np.bincount(indices, minlength=self.dim))

    def finish(self, tf: np.ndarray) -> np.ndarray:
        weighted = tf * self.idf
        norms = np.linalg.norm(weighted, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (weighted / norms).astype(np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.finish(self.dense([self.sparse(t) for t in texts]))


@register("openai")
class OpenAIEmbeddings(EmbeddingModel):
    """Any OpenAI-compatible /v1/embeddings endpoint (OpenAI, vLLM, Ollama, llama.cpp)."""

    def __init__(self, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                 dim: int | None = None, batch_size: int = 64, retries: int = 3, timeout_s: float = 60.0) -> None:
        self.model = model or getenv("CODEGRAPH_EMBED_MODEL", "text-embedding-3-small")
        try:
            # a batch of 64 vectors of 3,072 floats is about 4 MB of JSON; a whole repository has no cap
            self.endpoint = OpenAIEndpoint(base_url, api_key, env_prefix="CODEGRAPH_EMBED", timeout_s=timeout_s,
                                           call_s=max(timeout_s, 300.0), retries=retries, max_call_bytes=32 << 20,
                                           max_total_bytes=float("inf"))
        except ModelError as exc:
            raise EmbeddingError(str(exc)) from None
        self.batch_size = batch_size
        self.dim = dim or 0
        self.id = f"openai:{self.model}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), self.batch_size):
            batch = [t[:8000] or " " for t in texts[start : start + self.batch_size]]
            try:
                response = self.endpoint.call(lambda client: client.embeddings.create(model=self.model, input=batch),
                                              what=f"embedding model {self.model!r}")
                data = sorted(response.data, key=lambda d: d.index)
                out.extend(item.embedding for item in data)
            except ModelError as exc:
                raise EmbeddingError(str(exc)) from None
            except (AttributeError, TypeError) as exc:
                raise EmbeddingError(f"{self.endpoint.url} did not answer with embeddings: {exc}") from None
        matrix = np.asarray(out, np.float32)
        self.dim = matrix.shape[1] if matrix.size else self.dim
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return matrix / norms

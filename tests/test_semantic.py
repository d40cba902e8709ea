"""The semantic layer: deterministic vectors, model checks, incremental updates, the int8 cache vs exact search."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from codegraph.db import connect_readonly, get_meta
from codegraph.indexer import index_repository
from codegraph.semantic.models import EmbeddingError, HashingModel, get_model
from codegraph.semantic.search import search
from codegraph.semantic.store import VectorCache, check_model, exact_search, model_from_meta, vectors_path
from openai_server import FakeOpenAI


def test_hashing_vectors_are_deterministic_across_processes():
    here = HashingModel(64).embed(["parse_float JSONDecoder raw_decode"])[0]
    code = ("from codegraph.semantic.models import HashingModel;"
            "print(list(HashingModel(64).embed(['parse_float JSONDecoder raw_decode'])[0]))")
    there = eval(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                env={"PYTHONHASHSEED": "123", "PATH": ""}).stdout)
    assert np.allclose(here, np.asarray(there, np.float32))
    assert abs(float(np.linalg.norm(here)) - 1.0) < 1e-5


def test_identifier_parts_make_code_and_prose_meet():
    model = HashingModel(512)
    docs = model.embed(["def parse_float(self, text): ...", "def send_mail(host, to): ..."])
    query = model.embed(["parse a float"])[0]
    assert (docs @ query)[0] > (docs @ query)[1]


@pytest.fixture
def indexed(mini_repo):
    report = index_repository(mini_repo, jobs=1)
    return mini_repo, report.db_path


def test_every_definition_gets_a_vector_and_the_model_is_recorded(indexed):
    _, db_path = indexed
    con = connect_readonly(db_path)
    meta = get_meta(con)
    assert meta["embedding_model"] == "hash-v1-512" and meta["embedding_dim"] == "512"
    missing = con.execute("SELECT count(*) FROM symbols WHERE id NOT IN (SELECT id FROM embeddings)").fetchone()
    assert missing == (0,)
    con.close()


def test_search_with_another_model_is_refused(indexed):
    _, db_path = indexed
    con = connect_readonly(db_path)
    with pytest.raises(EmbeddingError, match="never mix"):
        search(con, db_path, "add an item", model=HashingModel(256))
    with pytest.raises(EmbeddingError, match="never mix"):
        check_model(get_meta(con), HashingModel(128))
    con.close()


def test_cached_and_exact_search_agree(indexed):
    _, db_path = indexed
    con = connect_readonly(db_path)
    for query in ("add an item to the cart", "apply a discount", "parse text into an item", "total price"):
        fast = [h["qualname"] for h in search(con, db_path, query, 5, mode="vector")]
        exact = [h["qualname"] for h in search(con, db_path, query, 5, mode="vector", exact=True)]
        assert fast == exact, query
    con.close()


def test_update_embeds_only_changed_files_and_the_index_follows(indexed):
    repo, db_path = indexed
    con = connect_readonly(db_path)
    cache_before = VectorCache.read(vectors_path(db_path), token=get_meta(con)["vectors_token"], verify=True)
    assert cache_before is not None and len(cache_before.ids) == con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    before = dict(con.execute("SELECT id, vector FROM embeddings").fetchall())
    con.close()
    pricing = repo / "src" / "shop" / "pricing.py"
    pricing.write_text(pricing.read_text() + "\n\ndef shipping_cost(weight_kg, express=False):\n"
                       "    return 4.5 + weight_kg * (2 if express else 1)\n")
    report = index_repository(repo, jobs=1)
    assert report.parsed == 1
    con = connect_readonly(db_path)
    after = dict(con.execute("SELECT id, vector FROM embeddings").fetchall())
    pricing_ids = {r[0] for r in con.execute(
        "SELECT id FROM symbols WHERE path = 'src/shop/pricing.py'").fetchall()}
    unchanged = [i for i in before if i not in pricing_ids]
    assert all(before[i] == after[i] for i in unchanged)
    assert len(after) == len(before) + 1
    meta = get_meta(con)
    assert report.vectors.get("updated") == len(after)  # the cache followed the update, file by file
    cache = VectorCache.read(vectors_path(db_path), token=meta["vectors_token"], verify=True)
    assert sorted(cache.ids.tolist()) == sorted(after)
    top = search(con, db_path, "cost of shipping by weight", 1)
    assert top[0]["qualname"] == "shop.pricing.shipping_cost"
    exact = exact_search(con, model_from_meta(meta).embed(["cost of shipping by weight"])[0], 1)
    assert exact[0].id == top[0]["id"]
    con.close()


def test_embed_function_joins_vectors_and_graph_in_sql(indexed):
    from click.testing import CliRunner

    from codegraph.cli import main

    _, db_path = indexed
    sql = ("SELECT s.qualname FROM embeddings e JOIN symbols s USING (id) WHERE s.kind = 'method' "
           "ORDER BY array_cosine_similarity(e.vector, embed('add an item to the cart')) DESC LIMIT 1")
    result = CliRunner().invoke(main, ["sql", sql, "--db", str(db_path), "--csv"])
    assert result.exit_code == 0, result.output
    assert result.output.split() == ["qualname", "shop.models.Cart.add"]


def test_index_without_embeddings(mini_repo, tmp_path):
    report = index_repository(mini_repo, tmp_path / "plain.duckdb", jobs=1, embed=False)
    assert "embeddings" not in report.counts
    con = connect_readonly(report.db_path)
    with pytest.raises(EmbeddingError, match="no embeddings"):
        search(con, report.db_path, "anything", mode="vector")
    words_only = search(con, report.db_path, "apply a discount to a price", 3)  # BM25 needs no vectors
    con.close()
    assert words_only[0]["qualname"] == "shop.pricing.apply_discount"


def test_openai_embeddings_batch_and_retry_against_a_local_server():
    with FakeOpenAI(script=["429", "ok", "500", "ok"], dim=6) as server:
        model = get_model("openai", model="emb-test", base_url=server.base_url, api_key="k", batch_size=2)
        vectors = model.embed(["a", "bb", "ccc"])
    assert vectors.shape == (3, 6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    posts = [r for r in server.requests if r["path"].endswith("/embeddings")]
    assert len(posts) == 4  # two batches, each retried once
    assert posts[-1]["body"]["input"] == ["ccc"] and posts[0]["auth"] == "Bearer k"


def test_openai_embeddings_give_up_with_a_clear_error():
    with FakeOpenAI(script=["429"] * 10) as server:
        model = get_model("openai", model="emb-test", base_url=server.base_url, api_key="k", retries=1)
        with pytest.raises(EmbeddingError, match="failed after its retries"):
            model.embed(["a"])


# -- issue 10, row 14: the vector cache is validated, rebuilt by index, written atomically ---------

_SEARCH = ("import sys, json; from codegraph.db import connect_readonly; from codegraph.semantic.search import search; "
           "con = connect_readonly(sys.argv[1]); print(json.dumps([h['qualname'] for h in search(con, sys.argv[1], "
           "'cost of a discount', 3)]))")


def _search_in_a_child(db_path):
    """In a separate process, so a crash (a segfault on a bad file) shows as a failed run."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _SEARCH, str(db_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_index_builds_the_cache_and_search_survives_a_deleted_or_damaged_one(mini_repo):
    report = index_repository(mini_repo, jobs=1)
    cache = vectors_path(report.db_path)
    assert cache.is_file() and report.vectors.get("rebuilt")
    expected = _search_in_a_child(report.db_path)
    cache.unlink()
    assert _search_in_a_child(report.db_path) == expected  # exact search, same answer
    assert not cache.exists()  # search only reads
    assert index_repository(mini_repo, jobs=1).vectors.get("rebuilt")  # a no-op index repairs it
    data = bytearray(cache.read_bytes())
    data[len(data) // 2 :] = os.urandom(len(data) - len(data) // 2)
    cache.write_bytes(bytes(data))
    assert _search_in_a_child(report.db_path) == expected  # re-ranked by the table's own vectors
    cache.write_bytes(data[: len(data) // 3])  # truncated
    assert _search_in_a_child(report.db_path) == expected
    full = index_repository(mini_repo, jobs=1, full=True)
    con = connect_readonly(full.db_path)
    assert VectorCache.read(cache, token=get_meta(con)["vectors_token"], verify=True) is not None
    con.close()
    assert not list(cache.parent.glob("*.tmp-*"))

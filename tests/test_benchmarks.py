"""The benchmark harness's shared parts: metrics, the per-task result store, sharding."""

import ast
import json
import shutil
import subprocess
import sys
from math import prod
from pathlib import Path

import pytest

from benchmarks import java_update_replay as replay
from benchmarks import retrieval_bench
from benchmarks.dynamic_callgraph import MISS_KINDS, miss_kinds, sample_edges
from benchmarks.javac_callgraph import oracle_edges, static_edges
from benchmarks.repoclassbench_java import blob_hash, checkout, locate, surefire
from benchmarks.metrics import dependency_invocation_rate, pass_at_k, reference_dependencies, summarise
from benchmarks.mutations import KINDS, mutated
from benchmarks.runner import ResultStore, run_all, shard
from codegraph.indexer import index_repository


def _product_form(n: int, c: int, k: int) -> float:
    """The numerically stable form in Chen et al. (2021), as an independent check."""
    if n - c < k:
        return 1.0
    return 1.0 - prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@pytest.mark.parametrize(("n", "c", "k"), [(10, 0, 1), (10, 1, 1), (10, 3, 5), (20, 7, 10), (5, 5, 5), (7, 2, 6)])
def test_pass_at_k_is_the_unbiased_estimator(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(_product_form(n, c, k))


def test_pass_at_k_values_and_bad_input():
    assert pass_at_k(10, 1, 1) == pytest.approx(0.1)
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)
    with pytest.raises(ValueError, match="at least 5 samples"):
        pass_at_k(3, 1, 5)
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)


def _sample(success, success_at=None, lint=True, rate=None, dir_=None, iterations=3):
    return {"success": success, "success_at": success_at, "lint_clean": lint, "test_rate": rate, "dir": dir_,
            "iterations": iterations, "seconds": 2.0, "prompt_tokens": 100, "completion_tokens": 10}


def test_summarise_counts_what_the_samples_say():
    records = [
        {"task_id": "a", "samples": [_sample(True, 1, rate=1.0, dir_=1.0), _sample(False, rate=0.5, dir_=0.0)]},
        {"task_id": "b", "samples": [_sample(True, 3, rate=1.0), _sample(True, 2, rate=1.0)]},
        {"task_id": "c", "error": "could not install"},
    ]
    s = summarise(records, iterations=3)
    assert s["tasks"] == 2 and s["samples"] == 4
    assert s["pass@1"] == pytest.approx((0.5 + 1.0) / 2)
    assert "pass@5" not in s  # two samples per task cannot estimate pass@5
    assert s["pass_rate_after_iteration"] == [0.25, 0.5, 0.75]
    assert s["test_rate"] == pytest.approx(0.875) and s["dir"] == pytest.approx(0.5)
    assert s["prompt_tokens"] == 400 and s["completion_tokens"] == 40
    assert summarise([{"task_id": "x", "error": "boom"}], 3) == {"tasks": 0}


def test_dependency_invocation_rate_counts_calls_and_attribute_use():
    provided = {"pkg.util.parse_header", "pkg.models.Request", "pkg.util.quote"}
    code = "def f(x):\n    r = Request(x)\n    return parse_header (r.headers)\n# quote is only mentioned\n"
    assert dependency_invocation_rate(provided, code) == pytest.approx(2 / 3)
    assert dependency_invocation_rate(set(), code) is None


def _square(task_id: str, options: dict) -> dict:
    if task_id == "bad":
        raise RuntimeError("this task breaks")
    return {"task_id": task_id, "value": int(task_id) ** options["power"]}


def test_reference_dependencies_are_what_the_reference_calls_by_name(tmp_path):
    """DIR's denominator: the names the reference calls, not what Python runs for them (C()'s
    __init__, len(x)'s __len__, a property) nor what a parameter may hold."""

    (tmp_path / "m.py").write_text(
        "class Box:\n    def __init__(self):\n        self.n = 0\n"
        "    def __len__(self):\n        return 0\n"
        "    @property\n    def size(self):\n        return 1\n\n"
        "def helper(x):\n    return x\n\n"
        "def apply(cb):\n    return cb(1)\n\n"
        "def reference():\n    box = Box()\n    apply(helper)\n    return len(box), box.size\n")
    db_path = index_repository(tmp_path, tmp_path / "g.duckdb", jobs=1, embed=False, libraries=False).db_path
    assert reference_dependencies(db_path, "m.reference") == {"m.Box", "m.apply"}
    code = "def reference():\n    box = Box()\n    apply(helper)\n    return len(box)\n"
    assert dependency_invocation_rate(reference_dependencies(db_path, "m.reference"), code) == 1.0


@pytest.mark.parametrize("workers", [1, 2])
def test_run_all_writes_one_file_per_task_resumes_and_records_errors(tmp_path, workers):
    store = ResultStore(tmp_path / "results")
    first = run_all(_square, ["2", "3", "bad"], store, {"power": 2}, workers=workers)
    assert sorted(r["task_id"] for r in first) == ["2", "3", "bad"]
    assert json.loads(store.path("3").read_text())["value"] == 9
    assert "this task breaks" in json.loads(store.path("bad").read_text())["error"]
    again = run_all(_square, ["2", "3", "4", "bad"], store, {"power": 2}, workers=workers)
    assert [r["task_id"] for r in again] == ["4"]  # finished tasks, errors included, are skipped
    retried = run_all(_square, ["2", "bad"], store, {"power": 2}, workers=workers, retry_errors=True)
    assert [r["task_id"] for r in retried] == ["bad"]
    assert sorted(r["task_id"] for r in run_all(_square, ["2", "3"], store, {"power": 3}, rerun=True)) == ["2", "3"]
    assert json.loads(store.path("3").read_text())["value"] == 27
    assert not list(store.directory.glob("*.part"))
    assert {r["task_id"] for r in store.load()} == {"2", "3", "4", "bad"}


def test_task_ids_become_safe_file_names(tmp_path):
    store = ResultStore(tmp_path)
    assert store.path("a/b c::d").name == "a_b_c__d.json"


def test_shards_partition_the_task_list():
    ids = [str(i) for i in range(10)]
    parts = [shard(ids, f"{i}/3") for i in range(3)]
    assert sorted(sum(parts, [])) == sorted(ids) and all(parts)
    assert shard(ids, None) == ids
    with pytest.raises(SystemExit, match="I/N"):
        shard(ids, "three")
    with pytest.raises(SystemExit, match="0..N-1"):
        shard(ids, "3/3")


def test_cost_bench_times_a_full_index_and_updates_of_a_copy(mini_repo):
    import sys

    from benchmarks.cost_bench import run

    models = mini_repo / "src/shop/models.py"
    before = models.read_text()
    results = run({"current": sys.executable}, mini_repo, mini_repo, "src/shop/models.py", rounds=1, updates=2)
    current = results["current"]
    assert current["full"][0]["seconds"] > 0 and current["full"][0]["peak_kib"] > 10_000
    if sys.platform.startswith("linux"):  # what the build's processes hold together, from /proc
        assert current["full"][0]["peak_total_kib"] > 10_000
    assert "resolve" in current["full"][0]["timings"]
    assert len(current["updates"][0]) == 2 and all(s > 0 for s in current["updates"][0])  # each an update, not a rebuild
    assert models.read_text() == before  # the copy is edited, never the repository
    assert not list(mini_repo.rglob("*.duckdb"))


def test_cost_bench_times_each_edit_at_scale_as_an_update_of_a_copy(mini_repo):
    import sys

    from benchmarks.cost_bench import SCALE_EDITS, run, scale_edits

    models = mini_repo / "src/shop/models.py"
    before = models.read_text()
    old = before.splitlines()[0]
    edits = [("appended", "src/shop/models.py", None, "\n\ndef added(x):\n    return x\n"),
             ("replaced", "src/shop/models.py", old, old + "  # edited")]
    results = run({"current": sys.executable}, mini_repo, None, "", rounds=1, updates=0, edits=edits)
    assert set(results["current"]["scale_s"]) == {"appended", "replaced"}
    assert all(len(s) == 1 and s[0] > 0 for s in results["current"]["scale_s"].values())
    assert all(len(n) == 1 and isinstance(n[0], int) for n in results["current"]["scale_reresolved"].values())
    assert models.read_text() == before and not list(mini_repo.rglob("*.duckdb"))
    assert scale_edits(mini_repo) == []  # the stdlib's edits need the stdlib's files
    assert {name for name, *_ in SCALE_EDITS} >= {"function in a leaf module", "changed base"}


def test_update_replay_compares_each_update_with_a_rebuild_and_reports_differences(tmp_path, monkeypatch):
    from benchmarks import update_replay

    old, new = tmp_path / "old", tmp_path / "new"
    files = {"p/__init__.py": "", "p/a.py": "def run(cb):\n    cb()\n",
             "p/b.py": "from p.a import run\nfrom p.c import make\n\n\ndef go():\n    run(make())\n",
             "p/c.py": "from p import d\n\n\ndef make():\n    return d.handler\n", "p/d.py": "X = 1\n",
             "p/gone.py": "Y = 2\n"}
    for tree in (old, new):
        for name, text in files.items():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            (tree / name).write_text(text)
    (new / "p/d.py").write_text("X = 1\n\n\ndef handler():\n    pass\n")  # edited: make() now returns it
    (new / "p/gone.py").unlink()
    (new / "p/e.py").write_text("Z = 3\n")
    assert update_replay.changed_files(old, new) == ["p/d.py", "p/e.py", "p/gone.py"]
    result = update_replay.replay(old, new, tmp_path / "w1")
    assert result["files_changed"] == 3 and result["steps_compared"] == 3 and result["differences"] == []
    # an update that misses what a changed value reaches is caught, at the step that made it
    monkeypatch.setattr("codegraph.languages.python.incremental._VALUE_USERS_SQL", "SELECT NULL AS file_id FROM _ids, _names WHERE false")
    broken = update_replay.replay(old, new, tmp_path / "w2")
    assert {(d["step"], d["file"], d["table"]) for d in broken["differences"]} >= {(0, "p/d.py", "calls")}
    assert (old / "p/gone.py").exists() and not (old / "p/e.py").exists()  # the trees it reads stay as they were


def test_update_replay_return_edits_change_only_return_statements(tmp_path):
    from benchmarks import update_replay

    tree = tmp_path / "tree"
    (tree / "p").mkdir(parents=True)
    (tree / "p/__init__.py").write_text("")
    (tree / "p/a.py").write_text("class A:\n    def f(self):\n        pass\n\n\nclass B:\n    def f(self):\n"
                                 "        pass\n\n\ndef make():\n    return A()\n\n\ndef pick():\n    return make\n")
    (tree / "p/u.py").write_text("from p.a import make\n\n\ndef use():\n    make().f()\n")
    old, new = update_replay.return_edits(tree, tmp_path / "edits")
    assert (old / "p/a.py").read_text() == (tree / "p/a.py").read_text()
    edited = (new / "p/a.py").read_text().splitlines()
    before = (tree / "p/a.py").read_text().splitlines()
    assert [(x, y) for x, y in zip(before, edited) if x != y] == [("    return A()", "    return B()"),
                                                                  ("    return make", "    return pick")]
    assert update_replay.changed_files(old, new) == ["p/a.py"]
    result = update_replay.replay(old, new, tmp_path / "w")
    assert result["differences"] == [] and result["other_files_reresolved"] == [1]  # u.py reads make's return


_MUTABLE = '''from os.path import join, split


def load(path, mode):
    return open(path, mode)


def save(path, mode):
    return join(path, mode)


def check(value: "Base", other: Base):
    return value


class Base:
    pass


class Other:
    pass


class Store(Base):
    def __init__(self, path, mode):
        self.path = path

    @property
    def name(self):
        return self.read(self.path, 1)

    def read(self, path, size):
        handler = load
        return load(path, size)

    def copy(self, other: Base) -> Base:
        return sorted(other, key=load)

    def write(self, data):
        return self.read(data, 0)
'''


def test_mutations_make_one_edit_of_each_kind_on_its_own_line_and_the_module_still_parses():
    text, made = mutated(_MUTABLE, "p/store.py")
    ast.parse(text)
    assert {e.kind for e in made} == {"call retargeted", "method call retargeted", "arguments swapped",
                                      "value renamed", "base changed", "method renamed", "parameter added",
                                      "stored attribute changed", "decorator dropped", "imported name dropped",
                                      "annotation changed", "keyword argument changed", "definition renamed"}
    assert len({e.line for e in made}) == len(made) == len(KINDS)
    before, after = _MUTABLE.splitlines(), text.splitlines()
    assert len(before) == len(after) and sum(x != y for x, y in zip(before, after)) == len(made)
    changed = dict((x.strip(), y.strip()) for x, y in zip(before, after) if x != y)
    assert changed["from os.path import join, split"] == "from os.path import join"
    assert changed["class Store(Base):"] == "class Store(Other):"
    assert changed["self.path = path"] == "self.path = mode"
    assert changed["@property"] == ""
    assert changed["handler = load"] == "handler = save"
    assert changed["return sorted(other, key=load)"] == "return sorted(other, key=save)"
    annotated = [e for e in made if e.kind == "annotation changed"]
    assert len(annotated) == 1 and annotated[0].text == "Other"
    assert mutated(_MUTABLE, "p/store.py") == (text, made)  # the same path, the same edits
    assert mutated("x = 1\n", "p/x.py") is None and mutated("def (:\n", "p/y.py") is None


def test_update_replay_mutation_edits_say_what_each_file_got(tmp_path):
    from benchmarks import update_replay

    tree = tmp_path / "tree"
    (tree / "p").mkdir(parents=True)
    (tree / "p/__init__.py").write_text("")
    (tree / "p/store.py").write_text(_MUTABLE)
    old, new, done = update_replay.mutation_edits(tree, tmp_path / "edits")
    assert (old / "p/store.py").read_text() == _MUTABLE and (new / "p/store.py").read_text() != _MUTABLE
    assert set(done) == {"p/store.py"} and any(d.startswith("base changed (line ") for d in done["p/store.py"])
    result = update_replay.replay(old, new, tmp_path / "w", edits=done)
    assert result["files_changed"] == 1 and result["differences"] == []
    (tree / "p/other.py").write_text(_MUTABLE)
    _, _, both = update_replay.mutation_edits(tree, tmp_path / "both")
    _, _, one = update_replay.mutation_edits(tree, tmp_path / "one", at_most=1)
    assert set(both) == {"p/store.py", "p/other.py"} and len(one) == 1 and set(one) < set(both)


def test_update_replay_makes_the_stdlib_pair_from_the_scale_edits_it_can_apply(tmp_path):
    from benchmarks.update_replay import changed_files, stdlib_pair

    fake = tmp_path / "lib"
    (fake / "__pycache__").mkdir(parents=True)
    (fake / "colorsys.py").write_text("def f():\n    return 1\n")
    (fake / "__pycache__" / "colorsys.cpython-311.pyc").write_bytes(b"\0")
    (fake / "fractions.py").write_text("class Other:\n    pass\n")  # no `class Fraction(numbers.Rational):` to edit
    old, new = stdlib_pair(fake, tmp_path / "trees")
    assert changed_files(old, new) == ["colorsys.py"]  # a function and a class appended; fractions.py left alone
    assert "class _CostBenchAdded(dict)" in (new / "colorsys.py").read_text()
    assert not (old / "__pycache__").exists() and (fake / "colorsys.py").read_text() == "def f():\n    return 1\n"


def test_compare_graphs_finds_a_changed_row_and_nothing_in_equal_builds(mini_repo, tmp_path):
    from benchmarks.compare_graphs import compare

    one = index_repository(mini_repo, tmp_path / "one.duckdb", jobs=1, libraries=False, embed=False).db_path
    two = index_repository(mini_repo, tmp_path / "two.duckdb", jobs=1, libraries=False, embed=False).db_path
    assert compare(str(one), str(two)) == []
    first = sorted(mini_repo.rglob("*.py"))[0]
    first.write_text(first.read_text() + "\n\ndef added_for_the_comparison():\n    return 1\n")
    three = index_repository(mini_repo, tmp_path / "three.duckdb", jobs=1, libraries=False, embed=False).db_path
    differ = compare(str(one), str(three))
    assert any(d.startswith("main.globals: 0 rows only before, 1 only after") for d in differ), differ
    assert any(d.startswith("main.symbols:") for d in differ), differ


def test_sdists_are_found_however_they_spell_their_name_and_never_in_another_version(tmp_path, monkeypatch):
    for name in ("Markdown-3.6.tar.gz", "more_itertools-10.3.0.tar.gz", "click-8.1.3.tar.gz", "click-8.1.7.tar.gz"):
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setattr(retrieval_bench, "CACHE", tmp_path)
    assert retrieval_bench._sdist("markdown==3.6").name == "Markdown-3.6.tar.gz"
    assert retrieval_bench._sdist("more-itertools==10.3.0").name == "more_itertools-10.3.0.tar.gz"
    assert retrieval_bench._sdist("click==8.1.3").name == "click-8.1.3.tar.gz"
    assert retrieval_bench._sdist("click==8.1.7").name == "click-8.1.7.tar.gz"


def test_an_sdist_pip_downloads_and_then_fails_to_prepare_is_used_and_one_that_never_came_says_why(tmp_path,
                                                                                                    monkeypatch):
    monkeypatch.setattr(retrieval_bench, "CACHE", tmp_path)

    def pip(args, **kwargs):  # as pip does for a build backend it cannot build from source: the file, then exit 1
        if "tinydb==4.8.0" in args:
            (tmp_path / "tinydb-4.8.0.tar.gz").write_bytes(b"")
        return subprocess.CompletedProcess(args, 1, "", "error: metadata-generation-failed")
    monkeypatch.setattr(retrieval_bench.subprocess, "run", pip)
    assert retrieval_bench._sdist("tinydb==4.8.0").name == "tinydb-4.8.0.tar.gz"
    with pytest.raises(SystemExit, match="no source distribution of nothere==1.0: error: metadata-generation-failed"):
        retrieval_bench._sdist("nothere==1.0")


def test_the_oracle_puts_each_miss_in_a_kind_by_what_the_callers_sites_say(tmp_path):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "m.py").write_text(
        "class A:\n    def run(self):\n        return 1\n    def __eq__(self, other):\n        return True\n"
        "    @property\n    def size(self):\n        return 2\n\n\n"
        "def unknown(x, y):\n    x.run_later()\n    return x == y\n\n\n"
        "def handler():\n    return 3\n\n\n"
        "def elsewhere():\n    return A().run()\n")
    db = tmp_path / "g.duckdb"
    index_repository(tmp_path / "repo", db, jobs=1, embed=False, libraries=False)
    missed = {("m.elsewhere", "m.A.__hash__"), ("m.unknown", "m.B.run_later"), ("m.elsewhere", "m.C.run"),
              ("m.elsewhere", "m.A.size"), ("m.elsewhere", "m.handler"), ("m.unknown", "m.A.__len__")}
    kinds = {kind: n for kind, n in miss_kinds(db, missed).items() if n}
    assert kinds == {"not named: equality, hashing, ordering, truth": 1, "named, unresolved": 1,
                     "named, resolved elsewhere": 1, "not named: a property": 1,
                     "not named: a callback, registry or dispatch": 1,
                     "not named: container protocol (x[k], len, in, iter)": 1}
    assert set(miss_kinds(db, set())) == set(MISS_KINDS)
    drawn = sample_edges(db, {("m.elsewhere", "m.A.run"), ("m.elsewhere", "m.A")}, "seed", k=1)
    assert len(drawn) == 1 and drawn == sample_edges(db, {("m.elsewhere", "m.A.run"), ("m.elsewhere", "m.A")}, "seed", k=1)
    assert drawn[0][2] in (["type"], ["local"])


def test_resolve_profile_times_each_question_by_what_it_found(mini_repo, tmp_path, monkeypatch):
    """Every call of the repository is asked once at the top and lands in a group; a `self.f()`
    answered by the caller's class is a plain answer; the resolver is left as it was."""
    import json
    import sys

    from benchmarks import resolve_profile
    from codegraph.languages.python.resolve import Resolver

    original = Resolver.resolve_call
    out = tmp_path / "profile.json"
    monkeypatch.setattr(sys, "argv", ["resolve_profile", str(mini_repo), "--out", str(out)])
    resolve_profile.main()
    assert Resolver.resolve_call is original
    profile = json.loads(out.read_text())
    groups = profile["groups"]
    assert {g["question"] for g in groups} >= {"resolve_call", "resolve_call_all"}
    assert any(g["shape"] == "self+1" and g["how"] == "self" and g["found"] == "found" for g in groups)
    assert 0 < profile["summary"]["plain_answers_s"] <= profile["summary"]["questions_s"]
    assert [resolve_profile.shape(t) for t in ("f", "self.a.b", "os.path.join", "f(x).g", "super().f")] == [
        "bare", "self+2", "name+2", "call-result", "super"]


def test_library_bench_reads_the_library_from_the_cache_after_its_first_build(mini_repo, tmp_path):
    """Run as a command: the bench makes its process a subreaper, which pytest's must not become
    (every orphan of a later test would stay a zombie beside it)."""
    out = tmp_path / "library.json"
    checkout = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "benchmarks.library_bench", str(mini_repo), "--side", f"here={checkout}",
                           "--rounds", "1", "--out", str(out)], cwd=checkout, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    runs = {r["mode"]: r for r in json.loads(out.read_text())["runs"]}
    assert runs["defaults, cache's first build"]["library_resolved"] is True
    assert runs["defaults, cache's first build"]["library_parsed"] == runs["defaults, cache's first build"]["library_files"] > 0
    warm = runs["defaults, with the cache"]
    assert warm["library_resolved"] is False and warm["library_parsed"] == 0 and warm["library_files"] > 0
    assert runs["floor (--no-embed --no-libraries)"]["library_files"] == 0


def _git_repo(root: Path, commits: list[dict[str, str]]) -> None:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for i, files in enumerate(commits):
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm",
                        f"commit {i}"], check=True)


def test_name_fixes_finds_the_commits_that_fixed_a_name_and_asks_the_graph(tmp_path):
    """A misspelt member and a missing import fixed by one commit are two name fixes, each with the
    name the fix introduced; a rename of a definition and its uses in one commit is none (pylint
    is clean before it); the evaluation answers each as `codegraph diagnose` does."""
    from benchmarks import name_fixes

    util = ('import os\n\n\ndef helper(path):\n    """Join a path under the home folder."""\n'
            '    return os.pathh.join(os.path.expanduser("~"), path)\n\n\n'
            'def main():\n    """Print the home folder."""\n    print(helper("x"), dumps({}))\n')
    fixed = util.replace("os.pathh.join", "os.path.join").replace("import os\n", "import os\nfrom json import dumps\n")
    renamed = fixed.replace("def helper(", "def helper2(").replace('helper("x")', 'helper2("x")')
    repo = tmp_path / "repo"
    _git_repo(repo, [{"pkg/__init__.py": "", "pkg/util.py": util}, {"pkg/util.py": fixed},
                     {"pkg/util.py": renamed}])
    found = name_fixes.mine({"demo": str(repo)}, "2000-01-01", None, 1)
    assert [(f["message_id"], f["names"], f["how"], f["function"]["symbol"]) for f in found] == [
        ("E1101", ["path"], "swapped on the line", "helper"),
        ("E0602", ["dumps"], "an import the commit added", "main")]
    answers = name_fixes.evaluate("current", str(Path(name_fixes.__file__).parent.parent), {"demo": str(repo)},
                                  found, tmp_path)
    assert [a["answered"] for a in answers] == [True, True]
    summary = name_fixes.summarise(answers)
    assert summary["all"]["fixes"] == 2 and set(summary) == {"E0602", "E1101", "all"}


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (.ci/run installs one)")
def test_the_javac_oracle_records_what_the_compiler_attributes_and_the_graph_agrees(tmp_path):
    """The edges javac's attribution gives a small program, as JLS 15.12 and 8.8.7 say: a call,
    an instance creation, an implicit super() and a call from an anonymous class's method; none
    to a class outside the sources (the anonymous Runnable's Object constructor)."""
    tree = tmp_path / "proj" / "src" / "main" / "java" / "p"
    tree.mkdir(parents=True)
    (tree / "A.java").write_text("package p;\npublic class A {\n  public A() {}\n"
                                 "  void f() { g(1); new B(); }\n  void g(int x) {}\n  void g(String s) {}\n}\n")
    (tree / "B.java").write_text("package p;\npublic class B extends A {\n  B() { }\n"
                                 "  void h() { Runnable r = new Runnable() { public void run() { f(); } }; }\n}\n")
    truth, said = oracle_edges(tree.parent, [], tmp_path)
    assert said == "2 files, 0 errors"
    assert truth == {("p.A.f()", "p.A.g(int)"), ("p.A.f()", "p.B.<init>()"), ("p.B.<init>()", "p.A.<init>()"),
                     ("p.B$1.run()", "p.A.f()")}
    db = tmp_path / "g.duckdb"
    index_repository(tmp_path / "proj", db, embed=False, libraries=False)
    assert static_edges(db) == truth


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_repoclassbench_java_finds_the_commit_by_the_ground_truths_blob(tmp_path):
    """The newest commit holding the ground truth at its path and the test file: not the commit
    that introduced the class (no test yet), not the one that changed it since."""
    repo = tmp_path / "r"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q")
    truth = "class Foo {}\n"
    (repo / "src" / "Foo.java").write_text(truth)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one")
    (repo / "src" / "FooTest.java").write_text("class FooTest {}\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "two")
    wanted = _git(repo, "rev-parse", "HEAD")
    (repo / "src" / "Foo.java").write_text("class Foo { int x; }\n")
    _git(repo, "commit", "-qam", "three")
    (tmp_path / "truth.java").write_text(truth)
    assert blob_hash(truth) == _git(repo, "hash-object", str(tmp_path / "truth.java"))
    task = {"task_id": 7, "repo": "r", "file": "src/Foo.java", "test_file": "src/FooTest.java", "truth": truth}
    assert locate([task], {"r": str(repo / ".git")}) == {7: wanted}
    assert locate([{**task, "truth": "class Other {}\n"}], {"r": str(repo / ".git")}) == {7: None}
    out = tmp_path / "out"
    assert checkout(str(repo / ".git"), wanted, out) == []
    assert (out / "src" / "Foo.java").read_text() == truth and (out / "src" / "FooTest.java").exists()


def test_repoclassbench_java_reads_surefire_reports_by_test_class(tmp_path):
    """A TestNG run reports one suite for all its classes: each test case counts for its class."""
    reports = tmp_path / "m" / "target" / "surefire-reports"
    reports.mkdir(parents=True)
    (reports / "TEST-TestSuite.xml").write_text(
        '<testsuite name="TestSuite" tests="3"><testcase classname="a.b.FooTest" name="x"/>'
        '<testcase classname="a.b.FooTest" name="y"><failure message="no"/></testcase>'
        '<testcase classname="a.b.BarTest" name="z"/></testsuite>')
    found = surefire(tmp_path)
    assert found["FooTest"] == {"tests": 2, "failures": 1, "errors": 0, "skipped": 0}
    assert found["BarTest"]["tests"] == 1 and found["BarTest"]["failures"] == 0


def test_the_java_update_replay_edits_interfaces_and_compares_with_a_rebuild(tmp_path):
    """benchmarks.java_update_replay: each edit changes the interface it names, and a step
    updates, rebuilds beside and compares (a graph left unresolved would differ)."""
    tree = tmp_path / "p" / "src" / "main" / "java" / "p"
    tree.mkdir(parents=True)
    (tree / "Base.java").write_text("package p;\npublic class Base { public void run(int n) { } }\n")
    (tree / "Kid.java").write_text("package p;\npublic class Kid extends Base { void go() { run(1); } }\n")
    kid, base = (tree / "Kid.java").read_bytes(), (tree / "Base.java").read_bytes()
    assert b"extends" not in replay._unbased(kid) and b"run(Object codegraphAdded)" in replay._overload(base)
    assert b"void run" not in replay._removed(base) and replay._unbased(base) is None
    root, db = tmp_path / "p", tmp_path / "g.duckdb"
    index_repository(root, db, embed=False, libraries=False)
    (tree / "Base.java").write_bytes(replay._removed(base))
    step = replay._step(root, db, tmp_path, "removed", 2, False)
    assert step["equal"] and step["mode"] == "update" and step["other_files_reresolved"] == 1


def test_the_java_update_replay_makes_the_edits_a_model_makes_of_types_names_and_imports():
    source = (b"package p;\nimport java.util.List;\nimport java.util.*;\n"
              b"public class A extends B implements Runnable {\n    private List<String> items;\n"
              b"    @Override public String toString() { return \"a\"; }\n"
              b"    public List<String> name(int x) { return items; }\n    public void run() { }\n}\n")
    edited = {kind: edit(source) for kind, edit in replay._EDITS.items()}
    assert b"private Object items;" in edited["field Object"]
    assert b"public Object toString()" in edited["returns Object"]  # the first method returning a type
    assert b"name(Object x)" in edited["takes Object"]
    assert b"implements" not in edited["unimplemented"] and b"extends B" in edited["unimplemented"]
    assert b"import java.util.List;" not in edited["unimported"] and b"import java.util.*;" in edited["unimported"]
    assert b"nameRenamed(int x)" in edited["renamed"]  # not toString, an override
    assert all(edit(b"package p;\ninterface I { void f(Object o); }\n") is None
               for kind, edit in replay._EDITS.items() if kind in ("field Object", "unimplemented", "unimported"))

"""The RepoClassBench harness's pure parts, on the real data file (no network, no checkout)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import repoclassbench as rcb

needs_data = pytest.mark.skipif(not rcb.DATA.is_file(), reason="shared/data/repoclassbench is not beside the clone")


@needs_data
def test_the_data_file_loads_as_the_brief_counts_it():
    tasks = rcb.load_tasks()
    assert len(tasks) == 97
    assert sum(len(t.tests) for t in tasks) == 4168
    by_repo = {}
    for t in tasks:
        by_repo[t.repo] = by_repo.get(t.repo, 0) + 1
    assert by_repo["litestar-org/litestar"] == 41 and by_repo["psf/requests"] == 2
    assert all(not t.file.startswith("/") for t in tasks)
    litestar = next(t for t in tasks if t.repo.startswith("litestar"))
    assert litestar.file.startswith("litestar/")


def test_flipped_class_names_are_found_case_insensitively():
    source = "import x\n\n\n@decorate\nclass Session(Base):\n    a = 1\n\n    def f(self):\n        return 1\n\n\ndef after():\n    pass\n"
    start, end, name = rcb.class_span(source, "SESsiON")
    assert name == "Session"
    lines = source.split("\n")
    assert lines[start] == "@decorate" and lines[end - 1].strip() == "return 1"
    replaced = rcb.with_class(source, (start, end, name), rcb.placeholder(name))
    assert "class Session:\n    pass" in replaced and "def after" in replaced and "def f" not in replaced


def test_flipped_test_ids_map_back(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("class TestRequests:\n    def test_HTTP_200_OK_GET(self): pass\n")
    mapped = rcb.real_test_ids(tmp_path, ["tests/test_x.py::tEsTrEqUeStS::TEST_http_200_ok_get[param]",
                                          "tests/test_x.py::TestRequests::test_HTTP_200_OK_GET@redis",
                                          "tests/missing.py::test_gone"])
    assert mapped == ["tests/test_x.py::TestRequests::test_HTTP_200_OK_GET[param]",
                      "tests/test_x.py::TestRequests::test_HTTP_200_OK_GET"]


def _environment_here(root: Path) -> rcb.Environment:
    """An Environment over this interpreter (it has pytest), without building a virtualenv."""
    env = object.__new__(rcb.Environment)
    env.root, env.venv, env.env = root, Path(sys.prefix), dict(os.environ)
    return env


def test_the_evaluator_counts_passed_failed_skipped_and_ids_that_never_ran(tmp_path):
    (tmp_path / "test_a.py").write_text(
        "import pytest\n\ndef test_ok(): pass\n\ndef test_bad(): assert False\n\n"
        "@pytest.mark.skip(reason='optional dependency')\ndef test_skip(): pass\n")
    (tmp_path / "test_broken.py").write_text("import no_such_module\n\ndef test_x(): pass\n")
    env = _environment_here(tmp_path)
    result = env.run_tests(["test_a.py::test_ok", "test_a.py::test_bad", "test_a.py::test_skip",
                            "test_broken.py::test_x", "test_a.py::test_gone"], timeout=120)
    assert (result["passed"], result["failed"], result["skipped"], result["expected"]) == (1, 3, 1, 5)
    assert result["test_rate"] == pytest.approx(1 / 4, abs=1e-3)
    assert not (tmp_path / ".bench-junit.xml").exists()


def test_the_declared_test_extra_is_found_in_pyproject_or_setup_cfg(tmp_path):
    assert rcb._declared_test_extra(tmp_path) is None
    (tmp_path / "setup.cfg").write_text("[options.extras_require]\ntesting =\n    hypothesis\ndocs = sphinx\n")
    assert rcb._declared_test_extra(tmp_path) == "testing"
    (tmp_path / "pyproject.toml").write_text('[project.optional-dependencies]\ntest = ["pytest-mock"]\n')
    assert rcb._declared_test_extra(tmp_path) == "test"


def test_a_damaged_class_misspells_one_of_its_own_methods():
    source = "class A:\n    def run(self):\n        return self.helper()\n\n    def helper(self):\n        return 1\n"
    damaged, what = rcb._hallucinate(source, "A")
    assert what == "self.helper -> self.hepler" and "self.hepler()" in damaged and "def helper" in damaged


def _git(repo: Path, *args: str) -> str:
    cmd = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


def _commit_all(repo: Path, message: str) -> str:
    if not (repo / ".git").exists():
        _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", message)
    return _git(repo, "rev-parse", "HEAD")


def test_checkout_writes_what_a_size_capped_clone_has_and_lists_what_it_lacks(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "mod.py").write_text("class A:\n    pass\n")
    (repo / "pkg" / "big.h5").write_bytes(b"\0" * 1000)
    (repo / "run.sh").write_text("#!/bin/sh\n")
    (repo / "run.sh").chmod(0o755)
    commit = _commit_all(repo, "c")
    complete = rcb.checkout(repo / ".git", commit, tmp_path / "a")
    assert complete == [] and (tmp_path / "a" / "pkg" / "big.h5").stat().st_size == 1000
    big = _git(repo, "rev-parse", "HEAD:pkg/big.h5")
    (repo / ".git" / "objects" / big[:2] / big[2:]).unlink()  # what a size-capped mirror looks like
    missing = rcb.checkout(repo / ".git", commit, tmp_path / "b")
    assert missing == ["pkg/big.h5"]
    assert (tmp_path / "b" / "pkg" / "mod.py").read_text() == "class A:\n    pass\n"
    assert (tmp_path / "b" / "run.sh").stat().st_mode & 0o111


def test_the_commit_is_the_one_whose_class_matches_the_ground_truth(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    old = "class Widget:\n    def size(self):\n        return 1\n"
    new = "class Widget(Base):\n    def size(self) -> int:\n        return self.compute_the_size_now()\n"
    commits = []
    for body, message in ((old, "base"), (new, "Merge pull request #7 from x/fix")):
        (repo / "pkg" / "w.py").write_text(body)
        commits.append(_commit_all(repo, message))
    tasks = {f"t{i}": rcb.BenchTask(f"t{i}", "x/y", "x__y-7", commits[0], "wIDGET", "pkg/w.py", [], truth, "", "")
             for i, truth in enumerate((old, new))}
    monkeypatch.setattr(rcb, "tasks_by_id", lambda: tasks)
    assert rcb.task_commit(repo / ".git", "t0")[0] == commits[0]
    chosen, scores = rcb.task_commit(repo / ".git", "t1")
    assert chosen == commits[1] and scores[commits[1][:12]] > 0.95 > scores[commits[0][:12]]

"""The RepoClassBench harness's pure parts, on the real data file (no network, no checkout)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "benchmarks"))
import repoclassbench as rcb  # noqa: E402

pytestmark = pytest.mark.skipif(not rcb.DATA.is_file(), reason="shared/data/repoclassbench is not beside the clone")


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

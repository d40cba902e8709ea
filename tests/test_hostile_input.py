"""A repository full of things that break naive indexers: every one is reported, none is fatal."""

import os
import random

import duckdb

from codegraph.indexer import index_repository


def _nested_defs(depth: int) -> str:
    lines = [f"{'    ' * i}def f{i}(a{i}):" for i in range(depth)]
    lines.append(f"{'    ' * depth}return a0")
    return "\n".join(lines) + "\n"


def _nested_expression(depth: int) -> str:
    return "x = " + "[" * depth + "1" + "]" * depth + "\n" + "y = " + "(" * depth + "2" + ")" * depth + "\n"


def _nested_blocks(depth: int) -> str:
    return "".join(f"{' ' * i}if True:\n" for i in range(depth)) + " " * depth + "z = 1\n"


def _hostile_repo(root):
    rng = random.Random(1234)
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .good import ok\n")
    (pkg / "good.py").write_text("def ok():\n    return 1\n")
    (pkg / "random_bytes.py").write_bytes(bytes(rng.randrange(256) for _ in range(4096)))
    (pkg / "latin1_no_cookie.py").write_bytes("name = 'café'\n".encode("latin-1"))
    (pkg / "latin1_with_cookie.py").write_bytes("# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1"))
    (pkg / "huge.py").write_bytes(b"x = 1\n" * (20 * 1024 * 1024 // 6 + 1))
    (pkg / "deep_defs.py").write_text(_nested_defs(500))
    (pkg / "deep_expr.py").write_text(_nested_expression(500))
    (pkg / "deep_blocks.py").write_text(_nested_blocks(500))
    (pkg / "garbage.py").write_text("def (:\n  class\n)))) ]]] lambda lambda\n\x0c\tdef ok2(): pass\n")
    (pkg / "empty.py").write_text("")
    os.symlink(root, pkg / "loop")  # a directory symlink back to the root
    os.symlink(pkg / "missing.py", pkg / "dangling.py")
    return root


def test_hostile_repository_indexes_and_reports_every_skip(tmp_path):
    repo = _hostile_repo(tmp_path / "repo")
    report = index_repository(repo, jobs=2)
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped["pkg/random_bytes.py"] in {"binary", "undecodable"}
    assert skipped["pkg/latin1_no_cookie.py"] == "undecodable"
    assert skipped["pkg/huge.py"] == "too-large"
    assert skipped["pkg/loop"] == "symlink"
    assert skipped["pkg/dangling.py"] == "unreadable"
    con = duckdb.connect(str(report.db_path), read_only=True)
    indexed = {r[0] for r in con.execute("SELECT path FROM files").fetchall()}
    assert {"pkg/__init__.py", "pkg/good.py", "pkg/latin1_with_cookie.py", "pkg/deep_defs.py",
            "pkg/deep_expr.py", "pkg/deep_blocks.py", "pkg/garbage.py", "pkg/empty.py"} <= indexed
    # what could be recovered was: the deepest nested function and a def after the garbage
    assert con.execute("SELECT count(*) FROM nested_functions WHERE module = 'pkg.deep_defs'").fetchone() == (499,)
    assert con.execute("SELECT value FROM globals WHERE qualname = 'pkg.latin1_with_cookie.name'").fetchone() == (
        "'café'",)
    assert con.execute("SELECT parse_errors > 0 FROM files WHERE path = 'pkg/garbage.py'").fetchone() == (True,)
    assert con.execute("SELECT resolved_qualname FROM imports WHERE module = 'pkg'").fetchone() == ("pkg.good.ok",)
    con.close()


def test_size_limit_is_configurable(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "big.py").write_text("x = 1\n" * 40_000)  # 240 kB
    small_limit = index_repository(repo, tmp_path / "a.duckdb", jobs=1, max_file_size=100_000)
    assert [(s.path, s.reason) for s in small_limit.skipped] == [("big.py", "too-large")]
    default = index_repository(repo, tmp_path / "b.duckdb", jobs=1)
    assert default.skipped == [] and default.counts["files"] == 1

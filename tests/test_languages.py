"""The language seam: a language registered from outside the package is discovered, extracted
into the same tables and updated like Python, with no change to codegraph itself."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from codegraph.cli import main
from codegraph.indexer import index_repository
from codegraph.languages import (Checker, Diagnostic, FileFacts, Language, Rule, for_file, language, register,
                                 stable_id, unregister)
from codegraph.retrieval.diagnose import diagnose
from codegraph.schema import BY_NAME, EXTRACTED


class Toy(Language):
    """`fn name(a, b)` defines a function, `call name` calls one."""

    name, suffixes = "toy", (".toy",)

    def extract(self, data, path, module, is_package, budget_s=None):
        rows = {table: [] for table in EXTRACTED}
        rows["modules"].append(BY_NAME["modules"].row(stable_id(path, "module"), stable_id(path), module.rpartition(".")[2],
                                                      module, path, False, None, None, 1, None))
        for number, line in enumerate(data.decode().splitlines(), 1):
            word, _, rest = line.partition(" ")
            if word == "fn":
                name, _, params = rest.rstrip(")").partition("(")
                rows["globals"].append(BY_NAME["globals"].row(stable_id(path, name), stable_id(path), name, f"{module}.{name}",
                                                              module, path, "function", f"({params})", *[None] * 4,
                                                              number, number, None, line))
                rows["parameters"] += [BY_NAME["parameters"].row(stable_id(path), stable_id(path, name), f"{module}.{name}",
                                                                 i, p.strip(), "positional", None, None) for i, p in enumerate(params.split(","))]
            elif word == "call":
                rows["calls"].append(BY_NAME["calls"].row(stable_id(path), None, module, number, 0, number, len(line), rest,
                                                          rest, "call", []))
        return FileFacts(path, module, stable_id(path), hashlib.sha256(data).hexdigest(), len(data.splitlines()), 0, rows)


class ToyChecker(Checker):
    """Reports `call name` where the file defines no `fn name`."""

    def lint(self, path, changed_modules=(), timeout_s=None):
        lines = Path(path).read_text().splitlines()
        defined = {line.split()[1].partition("(")[0] for line in lines if line.startswith("fn ")}
        return [Diagnostic("unknown-function", "T1", f"No function '{line[5:]}' here", number, 5)
                for number, line in enumerate(lines, 1) if line.startswith("call ") and line[5:] not in defined]


class CheckedToy(Toy):
    """The toy with a checker and a one-row rule table, all a language needs for diagnose."""

    checker_name = "toycheck"
    categories = {"unknown-function": "UNDEF-O"}

    def checker(self, mode=None):
        return ToyChecker()

    def rules(self):
        return (Rule("unknown-function", "undefined_name",
                     lambda d, ctx: {"name": re.search(r"'(\w+)'", d.message).group(1),
                                     "module": ctx.candidate.module, "owner": "", "function": "", "local": []},
                     "where the function is defined"),)

    def error_symbols(self):
        return {"unknown-function": "T1", "bad-config": "T9"}


@pytest.fixture
def toy():
    register(Toy)
    yield language("toy")
    unregister("toy")


def _rows(db_path, sql):
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_language_registered_outside_the_package_indexes_and_updates(toy, tmp_path):
    repo = tmp_path / "repo"
    (repo / "shapes").mkdir(parents=True)
    (repo / "shapes" / "area.toy").write_text("fn square(side)\nfn rect(w, h)\ncall square\n")
    (repo / "main.py").write_text("def main():\n    return 1\n")
    (repo / "notes.txt").write_text("fn not_code(x)\n")
    report = index_repository(repo, jobs=1, libraries=False, embed=False)
    db_path = report.db_path
    assert report.skipped == [] and report.parsed == 2
    assert _rows(db_path, "SELECT path, module FROM files ORDER BY path") == [
        ("main.py", "main"), ("shapes/area.toy", "shapes.area")]
    assert _rows(db_path, "SELECT qualname, signature, start_line FROM globals ORDER BY qualname") == [
        ("main.main", "()", 1), ("shapes.area.rect", "(w, h)", 2), ("shapes.area.square", "(side)", 1)]
    assert _rows(db_path, "SELECT owner_qualname, position, name FROM parameters WHERE owner_qualname LIKE 'shapes%' "
                          "ORDER BY 1, 2") == [("shapes.area.rect", 0, "w"), ("shapes.area.rect", 1, "h"),
                                               ("shapes.area.square", 0, "side")]
    assert _rows(db_path, "SELECT caller_qualname, callee_text, line FROM calls WHERE callee_text = 'square'") == [
        ("shapes.area", "square", 3)]
    # a language without a resolution: its rows go in as extracted, not through Python's resolver
    assert _rows(db_path, "SELECT resolution, resolved_callee FROM calls WHERE callee_text = 'square'") == [(None, None)]
    assert _rows(db_path, "SELECT path, language FROM files ORDER BY path") == [
        ("main.py", "python"), ("shapes/area.toy", "toy")]

    (repo / "shapes" / "area.toy").write_text("fn square(side)\nfn circle(r)\n")
    (repo / "shapes" / "more.toy").write_text("fn cube(side)\n")
    report = index_repository(repo, jobs=1, libraries=False, embed=False)
    assert report.mode == "update" and report.parsed == 2
    assert _rows(db_path, "SELECT qualname FROM globals WHERE qualname LIKE 'shapes%' ORDER BY 1") == [
        ("shapes.area.circle",), ("shapes.area.square",), ("shapes.more.cube",)]
    assert _rows(db_path, "SELECT count(*) FROM calls WHERE callee_text = 'square'") == [(0,)]
    (repo / "shapes" / "more.toy").write_text("fn cube(side)\ncall cube\n")
    (repo / "main.py").write_text("def main():\n    return helper()\n\n\ndef helper():\n    return 1\n")
    report = index_repository(repo, jobs=1, libraries=False, embed=False)
    assert report.mode == "update" and report.parsed == 2
    assert _rows(db_path, "SELECT callee_text, resolved_callee, resolution FROM calls ORDER BY 1") == [
        ("cube", None, None), ("helper", "main.helper", "local")]


def test_the_registry_finds_languages_by_suffix_and_refuses_a_second_claim(toy):
    assert for_file("a.toy") is toy and for_file("pkg/a.py").name == "python" and for_file("a.txt") is None

    class Impostor(Toy):
        name = "impostor"

    with pytest.raises(ValueError, match=r"\.toy files are already read by toy"):
        register(Impostor)
    unregister("toy")
    assert for_file("a.toy") is None
    register(Toy)


def test_a_registered_language_with_a_checker_and_rules_is_diagnosed_like_python(tmp_path):
    register(CheckedToy)
    try:
        repo = tmp_path / "repo"
        (repo / "shapes").mkdir(parents=True)
        (repo / "shapes" / "area.toy").write_text("fn square(side)\nfn rect(w, h)\n")
        report = index_repository(repo, jobs=1, libraries=False, embed=False)
        candidate = repo / "shapes" / "use.toy"
        candidate.write_text("fn main()\ncall rect\ncall main\n")
        found = diagnose(candidate, report.db_path)
        (retrieval,) = found.retrievals
        assert (retrieval.diagnostic.symbol, retrieval.diagnostic.line, retrieval.source, retrieval.rule) == (
            "unknown-function", 2, "rule", "undefined_name")
        assert retrieval.rows[0]["qualname"] == "shapes.area.rect" and "shapes.area.rect" in found.context
        listed = CliRunner().invoke(main, ["rules", "--language", "toy"])
        assert listed.exit_code == 0 and listed.output.split() == [
            "unknown-function", "UNDEF-O", "undefined_name", "where", "the", "function", "is", "defined"]
        uncovered = CliRunner().invoke(main, ["rules", "--language", "toy", "--uncovered"])
        assert uncovered.output.strip() == "T9 bad-config"
        assert "## toy (toycheck)" in CliRunner().invoke(main, ["rules", "--markdown"]).output
    finally:
        unregister("toy")

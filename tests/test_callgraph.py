"""The call graph against hand-written expectations (benchmarks/callgraph/, one feature each)."""

import pytest

from benchmarks.callgraph_bench import PROGRAMS, evaluate

pytestmark = pytest.mark.slow

# Features the resolver covers completely: all of them.
COVERED = ("direct", "import", "self", "constructor", "object", "annotation", "alias", "shadowing", "nested",
           "lambda", "decorator", "implicit", "return", "container", "namespace", "override", "property",
           "descriptor", "dunder", "cls", "super", "parameter", "dispatch")


@pytest.fixture(scope="module")
def result():
    return evaluate(sorted(p for p in PROGRAMS.iterdir() if (p / "expected.json").is_file()))


def test_there_are_programs_for_every_feature(result):
    assert result["all"]["programs"] >= 100
    assert set(COVERED) <= set(result["features"])


def test_no_false_edges_anywhere(result):
    false = {name: p["false"] for name, p in result["programs"].items() if p["false"]}
    assert not false


def test_a_locally_bound_name_never_calls_the_module_level_definition(result):
    shadowing = [p for p in result["programs"].values() if p["feature"] == "shadowing"]
    assert len(shadowing) >= 10 and not any(p["false"] for p in shadowing)


@pytest.mark.parametrize("feature", COVERED)
def test_covered_features_find_every_edge(result, feature):
    missed = {name: p["missed"] for name, p in result["programs"].items() if p["feature"] == feature and p["missed"]}
    assert not missed

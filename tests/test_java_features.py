"""The Java call graph on one small program per language feature (tests/java_features/: 74
programs, each naming the JLS section it exercises), against the compiler: javac's attributed
trees (benchmarks/javac/CallOracle.java) give each program's edges, nobody here does. A program
passes when the graph's calls rows that resolved into the program are exactly javac's: in the
graph with Java's library layer (the JDK as stubs, the default build) and in one without (but
for the programs whose first line says they need the layer)."""

import shutil
from pathlib import Path

import pytest

from benchmarks.javac_callgraph import oracle_edges, static_edges
from codegraph.indexer import index_repository

FEATURES = Path(__file__).parent / "java_features"
PROGRAMS = sorted(p.name for p in (FEATURES / "src" / "main" / "java").iterdir() if p.is_dir())

pytestmark = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (.ci/run installs one)")


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    root = tmp_path_factory.mktemp("features") / "repo"
    shutil.copytree(FEATURES, root)
    scratch = root.parent / "scratch"
    scratch.mkdir()
    truth, said = oracle_edges(root / "src" / "main" / "java", [], scratch)
    assert "0 errors" in said, said  # every program compiles: the truth is whole
    graphs = {}
    for layer in (True, False):
        db = scratch / f"graph-{layer}.duckdb"
        index_repository(root, db, embed=False, libraries=layer, full=True)
        graphs[layer] = static_edges(db)
    return truth, graphs


def test_there_are_at_least_60_programs_each_naming_its_jls_section():
    assert len(PROGRAMS) >= 60
    for program in PROGRAMS:
        main = FEATURES / "src" / "main" / "java" / program / "Main.java"
        assert main.read_text().startswith("// JLS "), program


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("layer", [True, False], ids=["library-layer", "no-layer"])
def test_the_graph_has_exactly_the_compiler_s_edges(edges, program, layer):
    truth, graphs = edges
    main = FEATURES / "src" / "main" / "java" / program / "Main.java"
    if not layer and "(library layer)" in main.read_text().splitlines()[0]:
        pytest.skip("the program's types are the JDK's: without the layer they are not known")
    expected = {e for e in truth if e[0].startswith(program + ".")}
    found = {e for e in graphs[layer] if e[0].startswith(program + ".")}
    assert expected, f"{program} makes no call javac attributes to the program's own code"
    assert found == expected, f"missed {sorted(expected - found)}, extra {sorted(found - expected)}"

"""The command line over the library: options, output formats, errors and exit codes."""

import csv
import io
import json
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from codegraph.cli import main


@pytest.fixture
def runner():
    return CliRunner()


def test_index_prints_a_summary_and_writes_the_default_database(runner, mini_repo):
    result = runner.invoke(main, ["index", str(mini_repo)])
    assert result.exit_code == 0, result.output
    assert "full build" in result.output
    assert "src/shop/util/text.py (1 error node)" in result.output
    assert (mini_repo / ".codegraph" / "graph.duckdb").is_file()
    again = runner.invoke(main, ["index", str(mini_repo)])
    assert "up to date" in again.output


def test_index_json_report(runner, mini_repo, tmp_path):
    result = runner.invoke(main, ["index", str(mini_repo), "--db", str(tmp_path / "g.duckdb"), "--json"])
    report = json.loads(result.output)
    assert report["mode"] == "full" and report["counts"]["classes"] == 4


def test_sql_finds_the_database_upwards_and_formats(runner, mini_repo, monkeypatch):
    runner.invoke(main, ["index", str(mini_repo), "-q"])
    monkeypatch.chdir(mini_repo / "src" / "shop")
    monkeypatch.delenv("CODEGRAPH_DB", raising=False)
    table = runner.invoke(main, ["sql", "SELECT qualname FROM classes ORDER BY qualname"])
    assert table.exit_code == 0, table.output
    assert "shop.models.Cart" in table.output and "(4 rows" in table.output
    as_json = json.loads(runner.invoke(main, ["sql", "SELECT name, bases FROM classes ORDER BY name", "--json"]).output)
    assert as_json["rows"][0] == {"name": "Base", "bases": []}
    as_csv = list(csv.reader(io.StringIO(runner.invoke(main, ["sql", "SELECT name FROM classes ORDER BY 1", "--csv"]).output)))
    assert as_csv == [["name"], ["Base"], ["Cart"], ["Item"], ["Special"]]


def test_sql_from_env_and_stdin(runner, mini_db, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CODEGRAPH_DB", str(mini_db))
    result = runner.invoke(main, ["sql", "-"], input="SELECT count(*) AS n FROM modules")
    assert result.exit_code == 0 and "6" in result.output


def test_sql_row_cap(runner, mini_db):
    result = runner.invoke(main, ["sql", "SELECT * FROM range(100)", "--db", str(mini_db), "--max-rows", "5"])
    assert "(5 rows, stopped at the row cap" in result.output


@pytest.mark.parametrize("sql,message", [
    ("DELETE FROM files", "read-only"),
    ("CREATE TABLE t (x INT)", "read-only"),
    ("SELECT * FROM read_text('/etc/hostname')", "disabled by configuration"),
    ("COPY files TO '/tmp/stolen.csv'", "not COPY"),
    ("SELEC 1", "syntax error"),
    ("SELECT nope FROM files", "nope"),
])
def test_sql_refuses_writes_and_file_access_with_a_clear_error(runner, mini_db, sql, message):
    before = mini_db.read_bytes()
    result = runner.invoke(main, ["sql", sql, "--db", str(mini_db)])
    assert result.exit_code == 1
    assert message.lower() in result.output.lower()
    assert mini_db.read_bytes() == before


def test_sql_time_limit(runner, mini_db):
    slow = "SELECT count(*) FROM range(100000000) a, range(100000) b"
    result = runner.invoke(main, ["sql", slow, "--db", str(mini_db), "--timeout", "0.5"])
    assert result.exit_code == 1 and "time limit" in result.output


def test_missing_database_says_how_to_fix_it(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CODEGRAPH_DB", raising=False)
    result = runner.invoke(main, ["sql", "SELECT 1"])
    assert result.exit_code == 1 and "codegraph index" in result.output


def test_bad_usage_exits_2(runner, tmp_path):
    assert runner.invoke(main, ["index", str(tmp_path / "nope")]).exit_code == 2
    assert runner.invoke(main, ["sql", "  ", "--db", "x"]).exit_code == 2


def test_stats(runner, mini_db):
    result = runner.invoke(main, ["stats", "--db", str(mini_db), "--json"])
    info = json.loads(result.output)
    from codegraph.schema import SCHEMA_VERSION
    assert info["counts"]["modules"] == 6 and info["meta"]["schema_version"] == SCHEMA_VERSION


@pytest.mark.skipif(shutil.which("duckdb") is None, reason="the duckdb shell (pip install 'codegraph[shell]')")
def test_the_duckdb_shell_opens_the_file_and_knows_the_macros(mini_db):
    proc = subprocess.run(["duckdb", "-readonly", "-csv", str(mini_db), "-c",
                           "SELECT defined_in FROM members_of('Special') WHERE name = 'describe'"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["defined_in", "shop.models.Item"]


def test_diagnose_prints_diagnostics_sql_source_and_context(runner, mini_repo):
    runner.invoke(main, ["index", str(mini_repo), "-q"])
    candidate = mini_repo / "src" / "shop" / "cand.py"
    candidate.write_text("from shop.models import Itme\n\n\ndef f(cart):\n    return Itme(cart)\n")
    result = runner.invoke(main, ["diagnose", str(candidate)])
    assert result.exit_code == 1, result.output  # errors remain, as linters report it
    assert "E0611 no-name-in-module [UNDEF-API]" in result.output
    assert "via rule names_in_module_like" in result.output
    assert "from shop.models import Item" in result.output  # the card's import line
    unbound = mini_repo / "src" / "shop" / "unbound.py"
    unbound.write_text("def f():\n    return Cart('me'), apply_discount(1, 2)\n")
    imports = json.loads(runner.invoke(main, ["tool", "imports", str(unbound)]).output)
    assert imports["Cart"][0] == "from shop.models import Cart"
    assert imports["apply_discount"][0] == "from shop.pricing import apply_discount"
    as_json = json.loads(runner.invoke(main, ["diagnose", str(candidate), "--json", "--lines", "1-1"]).output)
    (r,) = as_json["retrievals"]
    assert r["rows"][0]["qualname"] == "shop.models.Item" and "SELECT" in r["sql"]
    clean = runner.invoke(main, ["diagnose", str(candidate), "--lines", "4-5"])
    assert "no errors on the candidate's lines" in clean.output and clean.exit_code == 0


def test_rules_lists_every_rule(runner):
    from codegraph.languages.python.rules import RULES

    result = runner.invoke(main, ["rules"])
    assert result.exit_code == 0
    assert len(result.output.strip().splitlines()) == len(RULES)


def test_tools(runner, mini_db):
    info = json.loads(runner.invoke(main, ["tool", "class-info", "Special", "--db", str(mini_db)]).output)
    assert info[0]["constructor"] == "(self)" or "__init__" not in {m["name"] for m in info[0]["members"]}
    assert {m["name"] for m in info[0]["members"]} >= {"describe", "create", "gross"}
    sig = json.loads(runner.invoke(main, ["tool", "signature", "total", "--db", str(mini_db)]).output)
    assert {s["qualname"] for s in sig} == {"shop.pricing.total", "shop.models.Cart.total"}
    body = json.loads(runner.invoke(main, ["tool", "body", "shop.pricing.apply_discount", "--db", str(mini_db)]).output)
    assert "def clamp" in body[0]["source"]
    relevant = json.loads(runner.invoke(main, ["tool", "relevant", "apply a discount", "--db", str(mini_db)]).output)
    assert relevant[0]["qualname"] == "shop.pricing.apply_discount"
    related = json.loads(runner.invoke(main, ["tool", "related", "shop.pricing.total", "--db", str(mini_db)]).output)
    assert {r["qualname"] for r in related if r["relation"] == "caller"} == {"shop.models.Cart.total",
                                                                           "shop.util.text.label"}


# -- issue 10, row 26: first-run faults ----------------------------------------------------------

def test_diagnose_refuses_files_that_are_not_python(runner, mini_repo, tmp_path):
    runner.invoke(main, ["index", str(mini_repo), "-q"])
    png = mini_repo / "src" / "shop" / "logo.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    notes = mini_repo / "src" / "shop" / "notes.txt"
    notes.write_text("remember the milk\n")
    for path in (png, notes):
        result = runner.invoke(main, ["diagnose", str(path)])
        assert result.exit_code == 1 and "is not a file codegraph can check: give one of java (.java), python (.py)" \
            in result.output, result.output


def test_bad_lines_option_is_a_usage_error(runner, mini_repo):
    runner.invoke(main, ["index", str(mini_repo), "-q"])
    result = runner.invoke(main, ["diagnose", str(mini_repo / "src" / "shop" / "models.py"), "--lines", "40-x"])
    assert result.exit_code == 2 and "--lines" in result.output


def test_stats_does_not_print_the_idf_weights(runner, mini_db):
    result = runner.invoke(main, ["stats", "--db", str(mini_db)])
    assert result.exit_code == 0
    assert "embedding_idf: (512 IDF weights" in result.output and len(result.output) < 3000


def test_empty_query_suggests_a_query_that_runs(runner, mini_db):
    result = runner.invoke(main, ["sql", "  ", "--db", str(mini_db)])
    assert result.exit_code == 2
    suggested = result.output.split('e.g. "')[1].split('"')[0]
    ran = runner.invoke(main, ["sql", suggested, "--db", str(mini_db)])
    assert ran.exit_code == 0, ran.output


def test_codegraph_folder_ignores_itself_for_git(runner, mini_repo):
    runner.invoke(main, ["index", str(mini_repo), "-q"])
    assert (mini_repo / ".codegraph" / ".gitignore").read_text().splitlines()[-1] == "*"
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(mini_repo)], check=True)
        status = subprocess.run(["git", "-C", str(mini_repo), "status", "--porcelain"], capture_output=True,
                                text=True, check=True).stdout
        assert ".codegraph" not in status


def test_a_folder_without_source_files_warns(runner, tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "readme.md").write_text("# nothing to see\n")
    result = runner.invoke(main, ["index", str(tmp_path / "docs"), "--db", str(tmp_path / "g.duckdb")])
    assert result.exit_code == 0 and "warning: no source files (.java, .py) found" in result.output
    from codegraph.indexer import index_repository

    # nothing imports a library: no environment is read for one (the JDK's stubs are not written)
    assert index_repository(tmp_path / "docs", tmp_path / "g2.duckdb", embed=False).library_environment == ""


def test_progress_reports_every_phase(mini_repo):
    from codegraph.indexer import index_repository

    phases, counted = [], []

    def progress(phase, done, total, detail):
        phases.append(phase)
        if phase == "embedding":
            counted.append((done, total))

    report = index_repository(mini_repo, jobs=1, progress=progress)
    assert list(dict.fromkeys(phases)) == ["parsing", "libraries", "resolving", "embedding", "writing", "vector cache"]
    assert counted[-1] == (report.counts["embeddings"],) * 2  # the embedding counts definitions to the last
    (mini_repo / "src" / "shop" / "new.py").write_text("def new():\n    return 1\n")
    phases.clear()
    index_repository(mini_repo, jobs=1, progress=progress)
    assert list(dict.fromkeys(phases)) == ["parsing", "writing", "embedding", "vector cache"]


def test_tool_commands_close_their_connection(runner, mini_db):
    import duckdb

    result = runner.invoke(main, ["tool", "signature", "shop.pricing.apply_discount", "--db", str(mini_db)])
    assert result.exit_code == 0 and "apply_discount" in result.output
    con = duckdb.connect(str(mini_db))  # read-write in this process: refused while a read-only one is open
    con.close()


# -- issue 29: the small ones ------------------------------------------------------------------

def test_a_lookup_of_nothing_says_so(runner, mini_db):
    for command in ("body", "signature", "class-info", "related"):
        result = runner.invoke(main, ["tool", command, "no.such.func", "--db", str(mini_db)])
        assert result.exit_code == 1 and "nothing named 'no.such.func'" in result.output, (command, result.output)
    found = runner.invoke(main, ["tool", "body", "shop.pricing.apply_discount", "--db", str(mini_db)])
    assert found.exit_code == 0 and json.loads(found.output)[0]["qualname"] == "shop.pricing.apply_discount"


def test_a_search_without_words_is_refused(runner, mini_db):
    for query in ("", "  ", "?!"):
        result = runner.invoke(main, ["search", query, "--db", str(mini_db)])
        assert result.exit_code == 1 and "no words to search for" in result.output, (query, result.output)


def test_stats_counts_the_library_imports_instead_of_listing_them(runner, mini_repo):
    runner.invoke(main, ["index", str(mini_repo), "-q", "--no-embed"])
    result = runner.invoke(main, ["stats", "--db", str(mini_repo / ".codegraph" / "graph.duckdb")])
    line = next(line for line in result.output.splitlines() if "library_imports" in line)
    assert line.strip().endswith("imported names (--json lists them)") and "[" not in line


def test_context_says_what_the_task_names_and_the_graph_does_not_hold(runner, mini_db):
    args = ["context", "--db", str(mini_db), "--file", "src/shop/models.py", "--description", "add an item"]
    typo = runner.invoke(main, [*args, "--symbol", "Crat.add_item"])
    assert typo.exit_code == 0
    assert "note: no class Crat in src/shop/models.py" in typo.output
    assert "note: Crat.add_item is not defined in src/shop/models.py yet" in typo.output
    known = runner.invoke(main, [*args, "--symbol", "Cart.add"])
    assert known.exit_code == 0 and "note:" not in known.output

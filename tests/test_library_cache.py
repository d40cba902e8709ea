"""The library layer's cache (issue 28, row 2): a project's full build parses only the library
files the environment's cache does not hold as they are now, resolves no library layer the cache
holds, and the graph is the same; the library's rows never depend on the project; and the report
names the imported packages the environment does not have."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from codegraph.parsing import extract_chunk
from codegraph.indexer import index_repository
from codegraph import library_cache
from codegraph.library_cache import LibraryCache, find_layer, write_layer
from codegraph import db
from codegraph.formatting import index_summary
from codegraph.errors import SchemaMismatch
from codegraph.columns import arrow_schema
from codegraph.schema import BY_NAME, LAYERED, LIBRARY_SCHEMA, RESOLVED_TABLES
from codegraph.sources import SourceFile
from codegraph.languages.python import library as python_library


def _library_rows(db_path, schema: str = LIBRARY_SCHEMA) -> dict[str, list]:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {name: con.execute(f"SELECT * FROM {schema}.{name} ORDER BY ALL").fetchall() for name in LAYERED}
    finally:
        con.close()


def test_a_second_build_reads_the_library_from_the_cache_and_makes_the_same_graph(mini_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    cold = index_repository(mini_repo, tmp_path / "cold.duckdb", jobs=1, embed=False)
    warm = index_repository(mini_repo, tmp_path / "warm.duckdb", jobs=1, embed=False)
    monkeypatch.setenv("CODEGRAPH_CACHE", "off")
    uncached = index_repository(mini_repo, tmp_path / "uncached.duckdb", jobs=1, embed=False)
    assert cold.library_files > 20 and cold.library_parsed == cold.library_files and cold.library_resolved
    assert warm.library_files == cold.library_files and warm.library_parsed == 0 and not warm.library_resolved
    assert uncached.library_parsed == uncached.library_files == cold.library_files and uncached.library_resolved
    rows = _library_rows(warm.db_path)
    assert rows["calls"] and rows == _library_rows(cold.db_path) == _library_rows(uncached.db_path)
    con = duckdb.connect(str(warm.db_path), read_only=True)
    try:  # the library classes' resolved bases came from the cache too
        assert con.execute(f"SELECT count(*) FROM {LIBRARY_SCHEMA}.classes WHERE len(base_qualnames) > 0").fetchone()[0]
    finally:
        con.close()
    assert _library_rows(warm.db_path, "main") == _library_rows(uncached.db_path, "main")
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "cache").iterdir()) == ["layers", "library", "located"]


def test_a_library_file_changed_since_it_was_kept_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "helpers.py"
    source.write_text("import os\n\n\nclass Helper:\n    def run(self, path):\n        return os.path.join(path, 'x')\n")
    st = source.stat()
    f = SourceFile("<site>/helpers.py", str(source), "helpers", False, st.st_size, st.st_mtime_ns, "python")
    parsed = extract_chunk([f], 0, "site")
    cache = LibraryCache.open("an environment")
    try:
        cache.keep(parsed.file_rows, parsed.tables)
        rows, imports, todo = cache.known([(f, "site")])
        assert todo == [] and rows == parsed.file_rows
        assert imports.to_pylist() == parsed.tables["imports"].to_pylist() != []
        tables = cache.rows([r.file_id for r in rows])
        assert {n: t.to_pylist() for n, t in tables.items()} == {n: t.to_pylist() for n, t in parsed.tables.items()}
        edited = dataclasses.replace(f, mtime_ns=f.mtime_ns + 1)
        assert cache.known([(edited, "site")])[2] == [(edited, "site")]
        assert cache.known([(f, "stdlib")])[2] == [(f, "stdlib")]  # another layer is another file
    finally:
        cache.close()
    other = LibraryCache.open("another environment")
    try:
        assert other.known([(f, "site")])[2] == [(f, "site")]
    finally:
        other.close()
    monkeypatch.setenv("CODEGRAPH_CACHE", "off")
    assert LibraryCache.open("an environment") is None
    assert len(os.listdir(tmp_path / "cache")) == 2


def test_imported_packages_the_environment_lacks_are_named_with_what_to_do(tmp_path):
    """httpx's dependencies were silently missing until --python named its venv: the report says
    which imports have no package here (built-in and extension modules have one), and a virtualenv
    in the repository is named, never run (its interpreter is the repository's code)."""
    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "__init__.py").write_text("")
    (repo / "app" / "main.py").write_text("import json\nimport _json, math, sys\nimport httpx_not_here\n"
                                          "from rich_absent.console import Console\n")
    report = index_repository(repo, jobs=1, embed=False)
    (note,) = [w for w in report.warnings if "not in the library layer" in w]
    assert "2 imported packages" in note and "httpx_not_here, rich_absent" in note and "--python with" in note
    (repo / ".venv" / "bin").mkdir(parents=True)
    ran = tmp_path / "ran"
    (repo / ".venv" / "bin" / "python").write_text(f"#!/bin/sh\ntouch {ran}\n")
    (repo / ".venv" / "bin" / "python").chmod(0o755)
    again = index_repository(repo, jobs=1, embed=False, full=True)
    assert any("--python .venv/bin/python (the repository's virtualenv)" in w for w in again.warnings)
    assert not ran.exists()
    assert not [w for w in index_repository(repo, jobs=1, embed=False, libraries=False, full=True).warnings
                if "library layer" in w]


def test_the_library_is_resolved_from_the_library_alone(tmp_path):
    """What library code calls is what the environment holds, whatever the project defines: a
    resolver that also knew the project guessed `self._KEYCRE.sub(...)` in configparser to be the
    project's only `sub` method. The library's rows are the same for every project."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("import configparser\n\n\nclass Replacer:\n    def sub(self, text):\n"
                                 "        return text\n\n\ndef run(r: Replacer):\n    return r.sub('x')\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "tool.py").write_text("import configparser\n")
    report = index_repository(repo, tmp_path / "app.duckdb", jobs=1, embed=False)
    con = duckdb.connect(str(report.db_path), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM calls WHERE resolved_callee = 'app.Replacer.sub'").fetchone()[0] == 1
        assert con.execute(f"SELECT count(*) FROM {LIBRARY_SCHEMA}.calls WHERE callee_text LIKE '%._KEYCRE.sub'"
                           ).fetchone()[0] >= 2
        assert con.execute(f"SELECT count(*) FROM {LIBRARY_SCHEMA}.calls WHERE resolved_callee LIKE 'app.%'"
                           ).fetchone()[0] == 0
    finally:
        con.close()
    alone = index_repository(other, tmp_path / "other.duckdb", jobs=1, embed=False)
    assert not alone.library_resolved  # the same layer: from the cache
    assert _library_rows(alone.db_path) == _library_rows(report.db_path)


def test_the_cache_keeps_the_layers_used_last(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(library_cache, "MAX_LAYERS", 2)
    con = duckdb.connect(str(tmp_path / "graph.duckdb"))
    db.create_schema(con, str(tmp_path))
    for key in ("a", "b"):
        write_layer(key, con, LIBRARY_SCHEMA)
        os.utime(library_cache._layers_here() / key / "used", (1, 1 if key == "a" else 2))
    assert find_layer("a") is not None  # used again: b is now the oldest
    write_layer("c", con, LIBRARY_SCHEMA)
    assert find_layer("b") is None and find_layer("a") is not None and find_layer("c") is not None
    assert sorted(p.name for p in library_cache._layers_here().iterdir()) == ["a", "c"]
    write_layer("d", con, LIBRARY_SCHEMA)  # past the limit, but every layer was used today: all kept
    assert sorted(p.name for p in library_cache._layers_here().iterdir()) == ["a", "c", "d"]
    con.close()


def test_a_graph_reads_its_library_layer_in_place_and_rebuilds_when_it_is_gone(mini_repo, tmp_path, monkeypatch):
    """Issue 28 row 2: a build that finds its resolved layer writes none of the library's rows:
    the graph's library tables are views of the layer's files, which a read-only connection (the
    one untrusted SQL gets) may read, and no other file. A graph whose layer is gone says how to
    rebuild, and `codegraph index` rebuilds it."""
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    index_repository(mini_repo, tmp_path / "cold.duckdb", jobs=1, embed=False)
    warm = index_repository(mini_repo, tmp_path / "warm.duckdb", jobs=1, embed=False)
    assert f"library layer read in place from the cache: {warm.library_layer}" in index_summary(warm)
    assert Path(warm.library_layer).parent.parent == (tmp_path / "cache" / "layers").resolve()
    con = db.open_graph(warm.db_path)
    try:
        views = {r[0] for r in con.execute(
            f"SELECT view_name FROM duckdb_views() WHERE schema_name = '{LIBRARY_SCHEMA}'").fetchall()}
        assert views == set(LAYERED) - {"files"}  # the files' sizes and times are this build's own
        assert con.execute("SELECT count(*) FROM all_calls WHERE resolved_callee LIKE 'os.%'").fetchone()[0] > 0
        secret = tmp_path / "cache" / "secret.csv"
        secret.write_text("token\nhunter2\n")
        for outside in (secret, "/etc/passwd"):
            with pytest.raises(duckdb.Error, match="disabled by configuration"):
                con.execute(f"SELECT * FROM read_csv('{outside}')").fetchall()
    finally:
        con.close()
    assert (tmp_path / "warm.duckdb").stat().st_size < (tmp_path / "cold.duckdb").stat().st_size
    meta = duckdb.connect(str(warm.db_path), read_only=True)
    layer = meta.execute("SELECT value FROM meta WHERE key = 'library_layer'").fetchone()[0]
    meta.close()
    shutil.rmtree(layer)
    with pytest.raises(SchemaMismatch, match="gone .* re-run `codegraph index`"):
        db.open_graph(warm.db_path)
    again = index_repository(mini_repo, tmp_path / "warm.duckdb", jobs=1, embed=False)
    assert again.mode == "full" and again.library_resolved
    assert _library_rows(again.db_path) == _library_rows(tmp_path / "cold.duckdb")


def test_a_graph_cannot_point_its_views_at_other_files(tmp_path, monkeypatch):
    """A graph file comes with the repository and may be hostile: views into any folder but the
    layers' read nothing, and a layer outside them is refused before any query."""
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    secret = tmp_path / "secret.csv"
    secret.write_text("token\nhunter2\n")
    path = tmp_path / "hostile.duckdb"
    con = duckdb.connect(str(path))
    db.create_schema(con, str(tmp_path))
    con.execute(f"CREATE VIEW leak AS SELECT * FROM read_csv('{secret}')")
    con.close()
    reader = db.open_graph(path)
    second = db.open_graph(path)  # the same file twice in a process: one DuckDB instance, locked by the first
    try:
        for con in (reader, second):
            with pytest.raises(duckdb.Error, match="disabled by configuration"):
                con.execute("SELECT * FROM leak").fetchall()
    finally:
        second.close()
        reader.close()
    con = duckdb.connect(str(path))
    db.set_meta(con, library_layer=str(tmp_path))
    con.close()
    with pytest.raises(SchemaMismatch, match="outside the cache folder"):
        db.open_graph(path)


def _virtualenv(folder: Path) -> Path:
    """A real virtualenv (no pip: fast); returns its site-packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    (site,) = folder.glob("lib/python3*/site-packages")
    return site


def _library_names(db_path) -> set[str]:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {q for (q,) in con.execute(f"SELECT qualname FROM {LIBRARY_SCHEMA}.modules").fetchall()}
    finally:
        con.close()


def test_the_library_comes_from_the_repositorys_virtualenv_read_never_run(tmp_path):
    """Issue 28 row 2: the project's own environment, found without --python. Its interpreter
    and .pth code are the repository's code: never run; a file or folder of it that points
    outside the virtualenv (or, for .pth folders, the repository) is not read."""
    repo = tmp_path / "repo"
    repo.mkdir()
    site = _virtualenv(repo / ".venv")
    ran = tmp_path / "ran"
    for python in (repo / ".venv" / "bin").glob("python*"):
        python.unlink()
        python.write_text(f"#!/bin/sh\ntouch {ran}\n")
        python.chmod(0o755)
    (site / "fancylib").mkdir()
    (site / "fancylib" / "__init__.py").write_text("def fancy(x):\n    return x\n")
    secret = tmp_path / "secret_token.py"
    secret.write_text("TOKEN = 'hunter2'\n")
    (site / "secret_token.py").symlink_to(secret)
    outside = tmp_path / "outside"
    (outside / "elsewhere").mkdir(parents=True)
    (outside / "elsewhere" / "__init__.py").write_text("def far():\n    pass\n")
    (repo / "vendored" / "nearby").mkdir(parents=True)
    (repo / "vendored" / "nearby" / "__init__.py").write_text("def near():\n    pass\n")
    (site / "paths.pth").write_text(f"{outside}\n../../../../vendored\nimport os; open({str(ran)!r}, 'w')\n")
    (repo / "app.py").write_text("import json\nimport fancylib\nimport secret_token\nimport elsewhere\nimport nearby\n"
                                 "import click\n\n\ndef main():\n    return fancylib.fancy(json.dumps(1))\n")
    report = index_repository(repo, tmp_path / "graph.duckdb", jobs=1, embed=False)
    names = _library_names(report.db_path)
    assert {"fancylib", "json", "nearby"} <= names and not names & {"secret_token", "elsewhere", "click"}  # nearby: a .pth folder in the repository
    assert "the repository's .venv" in report.library_environment
    (note,) = [w for w in report.warnings if "not in .venv" in w]
    assert "2 imported packages" in note and "click, elsewhere" in note  # secret_token is there, not read
    con = duckdb.connect(str(report.db_path), read_only=True)
    try:
        assert con.execute("SELECT resolved_callee FROM calls WHERE callee_text = 'fancylib.fancy'").fetchone() == \
            ("fancylib.fancy",)
        assert not con.execute(f"SELECT count(*) FROM {LIBRARY_SCHEMA}.globals WHERE value LIKE '%hunter2%'").fetchone()[0]
    finally:
        con.close()
    assert not ran.exists()


def test_an_activated_virtualenv_other_than_codegraphs_gives_the_library(tmp_path, monkeypatch):
    """$VIRTUAL_ENV (the shell's, when codegraph runs from an environment of its own, as pipx
    installs it): read from its files, its .pth folders followed wherever they are."""
    venv = tmp_path / "env"
    site = _virtualenv(venv)
    (tmp_path / "src" / "devpkg").mkdir(parents=True)
    (tmp_path / "src" / "devpkg" / "__init__.py").write_text("def dev():\n    pass\n")
    (site / "devpkg.pth").write_text(f"{tmp_path / 'src'}\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "app.py").write_text("import devpkg\n\ndevpkg.dev()\n")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    report = index_repository(repo, tmp_path / "graph.duckdb", jobs=1, embed=False)
    assert "devpkg" in _library_names(report.db_path) and "$VIRTUAL_ENV" in report.library_environment
    monkeypatch.delenv("VIRTUAL_ENV")
    again = index_repository(repo, tmp_path / "graph.duckdb", jobs=1, embed=False)
    assert "other library settings" in again.rebuilt_because
    assert "devpkg" not in _library_names(again.db_path)  # another environment: built afresh


def test_a_virtualenv_whose_interpreter_is_gone_still_has_a_standard_library(tmp_path):
    """A `.venv` made by a Python since removed (pyvenv.cfg's home leads nowhere): its
    site-packages, and the standard library of the interpreter running codegraph, the nearest
    there is; not every stdlib import reported missing."""
    repo = tmp_path / "repo"
    site = repo / ".venv" / "lib" / "python3.99" / "site-packages"
    (site / "fancylib").mkdir(parents=True)
    (site / "fancylib" / "__init__.py").write_text("def fancy():\n    pass\n")
    (repo / ".venv" / "pyvenv.cfg").write_text(f"home = {tmp_path / 'gone' / 'bin'}\nversion = 3.99.0\n")
    (repo / "app.py").write_text("import json\nimport fancylib\n")
    report = index_repository(repo, tmp_path / "graph.duckdb", jobs=1, embed=False)
    assert {"json", "fancylib"} <= _library_names(report.db_path)
    assert not [w for w in report.warnings if "not in .venv" in w]


def test_what_the_finder_found_is_kept_until_a_folder_it_read_changes(tmp_path, monkeypatch):
    """Finding the library's modules cost a quarter of a warm build of click: the answers are kept
    in the cache, and asked again only once a folder the lookups listed changed (a package
    installed), never when only a file's contents did."""
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    site = _virtualenv(repo / ".venv")
    (site / "fancylib").mkdir()
    (site / "fancylib" / "__init__.py").write_text("def fancy(x):\n    return x\n")
    (repo / "app.py").write_text("import json\nimport fancylib\nimport laterlib\n")
    asked: list[list[str]] = []
    real = python_library._describe_here
    monkeypatch.setattr(python_library, "_describe_here", lambda names, search: asked.append(names) or real(names, search))
    first = index_repository(repo, tmp_path / "a.duckdb", jobs=1, embed=False)
    assert asked and "fancylib" in _library_names(first.db_path)
    asked.clear()
    (site / "fancylib" / "__init__.py").write_text("def fancy(x):\n    return x\n\n\ndef plain():\n    pass\n")
    second = index_repository(repo, tmp_path / "b.duckdb", jobs=1, embed=False)
    assert asked == [] and _library_names(second.db_path) == _library_names(first.db_path)
    con = duckdb.connect(str(second.db_path), read_only=True)
    try:  # the edited file was parsed again: its new function is there
        assert con.execute(f"SELECT count(*) FROM {LIBRARY_SCHEMA}.globals WHERE qualname = 'fancylib.plain'"
                           ).fetchone()[0] == 1
    finally:
        con.close()
    (site / "laterlib.py").write_text("def late():\n    pass\n")  # installed: site-packages changed
    third = index_repository(repo, tmp_path / "c.duckdb", jobs=1, embed=False)
    assert asked and "laterlib" in _library_names(third.db_path)
    assert not [w for w in third.warnings if "laterlib" in w]


def test_a_library_file_touched_but_the_same_is_the_same_layer_and_updates_go_on(tmp_path, monkeypatch):
    """A package reinstalled as it was: its files' times change, not their contents, so the layer
    is the one the cache holds; the graph records the files as they are now, so the next update
    finds nothing changed instead of rebuilding every time."""
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    site = _virtualenv(repo / ".venv")
    (site / "fancylib").mkdir()
    library_file = site / "fancylib" / "__init__.py"
    library_file.write_text("def fancy(x):\n    return x\n")
    (repo / "app.py").write_text("import fancylib\n\n\ndef main():\n    return fancylib.fancy(1)\n")
    db_path = tmp_path / "g.duckdb"
    index_repository(repo, db_path, jobs=1, embed=False)
    assert index_repository(repo, db_path, jobs=1, embed=False, full=True).library_layer  # read in place
    os.utime(library_file, ns=(library_file.stat().st_atime_ns, library_file.stat().st_mtime_ns + 10**9))
    touched = index_repository(repo, db_path, jobs=1, embed=False)
    assert touched.mode == "full" and touched.library_layer and not touched.library_resolved
    after = index_repository(repo, db_path, jobs=1, embed=False)
    assert after.mode == "unchanged" and not after.rebuilt_because
    con = db.open_graph(db_path)
    try:
        assert con.execute(f"SELECT mtime_ns FROM {LIBRARY_SCHEMA}.files WHERE path LIKE '%fancylib/__init__.py'"
                           ).fetchone()[0] == library_file.stat().st_mtime_ns
        assert con.execute("SELECT resolved_callee FROM calls WHERE callee_text = 'fancylib.fancy'").fetchone() == \
            ("fancylib.fancy",)
    finally:
        con.close()

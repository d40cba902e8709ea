"""Java's library layer: the JDK's API and the project's jars as stubs in the graph. The
expectations are the JDK's own declarations (java.lang.String's `format(String, Object...)`,
ArrayList's supertypes) and those of a jar compiled here by javac."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from codegraph import db as db_module
from codegraph.columns import concat, extracted
from codegraph.indexer import index_repository
from codegraph.languages import language
from codegraph.languages.java.library import classpath_jars
from codegraph.languages.java.dependencies import declared_jars
from codegraph.languages.java.jdk import jdk_types
from codegraph.languages.java.resolve import JavaResolver, resolve_tables
from codegraph.retrieval.diagnose import diagnose
from codegraph.schema import LIBRARY_SCHEMA, RESOLVED_TABLES

pytestmark = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("jar") is None,
                                reason="needs a JDK (.ci/run installs one)")

_CART = """\
package com.ex;

import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import dep.Util;

public class Cart {
    private final List<String> items = new ArrayList<>();

    public void add(String item) { items.add(item.trim()); }

    public String show() { return String.format("%s %d", Util.twice(items.size()), items.size()); }

    public int count(ArrayList<String> more) { return more.size(); }

    public long stamp() { return new Timestamp(0L).getTime(); }
}
"""


def _jar(tmp_path: Path) -> Path:
    """dep.jar: dep.Util and dep.Other, compiled with their parameter names (-parameters)."""
    src = tmp_path / "dep-src" / "dep"
    src.mkdir(parents=True)
    (src / "Util.java").write_text("package dep;\npublic class Util {\n    public static final int MAX = 7;\n"
                                   "    public static int twice(int value) { return 2 * value; }\n"
                                   "    int hidden() { return 0; }\n}\n")
    (src / "Other.java").write_text("package dep;\npublic interface Other extends Comparable<Other> { Util util(); }\n")
    classes = tmp_path / "dep-classes"
    subprocess.run(["javac", "-parameters", "-d", str(classes), str(src / "Util.java"), str(src / "Other.java")],
                   check=True)
    jar = tmp_path / "dep.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    return jar


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src/main/java/com/ex").mkdir(parents=True)
    (root / "src/main/java/com/ex/Cart.java").write_text(_CART)
    return root


def _rows(db: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_the_jdk_and_a_jar_are_rows_and_calls_end_there(tmp_path, monkeypatch):
    jar = _jar(tmp_path)
    monkeypatch.setenv("CODEGRAPH_JAVA_CLASSPATH", f"{jar}:{tmp_path / 'absent.jar'}")
    root, db = _repo(tmp_path), tmp_path / "g.duckdb"
    report = index_repository(root, db, embed=False)
    assert report.library_files > 1000 and "1 jar" in report.library_environment
    calls = dict(_rows(db, "SELECT callee_text, resolved_callee || ' ' || resolution FROM calls"))
    assert calls["String.format"] == "java.lang.String.format(String,Object[]) library"
    assert calls["item.trim"] == "java.lang.String.trim() library"
    assert calls["items.add"] == "java.util.List.add(E) library"
    assert calls["Util.twice"] == "dep.Util.twice(int) library"
    assert calls["more.size"] == "java.util.ArrayList.size() library"  # ArrayList's own, over List's
    # java.base whole; of the JDK's other modules, the packages imported (java.sql, not java.awt)
    assert calls["new Timestamp(0L).getTime"] == "java.sql.Timestamp.getTime() library"
    packages = dict(_rows(db, "SELECT regexp_extract(module, '^(java\\.[a-z]+)\\.', 1) AS p, count(*) FROM all_files "
                              "WHERE layer = 'jdk' GROUP BY p"))
    assert packages.get("java.sql", 0) > 10 and "java.awt" not in packages and packages["java.util"] > 100
    # the stubs' declarations: signatures with the jar's parameter names, constants, supertypes
    members = dict(_rows(db, "SELECT qualname, coalesce(signature, annotation) FROM all_members WHERE "
                             "class_qualname IN ('dep.Util', 'java.lang.String')"))
    assert members["dep.Util.twice(int)"] == "(int value) -> int"
    assert "dep.Util.hidden()" not in members  # package-private: not the jar's API
    assert members["java.lang.String.format(String,Object[])"].endswith("-> String")
    # a method named as people write it, without its parameter types: each overload
    assert _rows(db, "SELECT qualname FROM canonical('java.lang.String.format') ORDER BY 1") == [
        ("java.lang.String.format(Locale,String,Object[])",), ("java.lang.String.format(String,Object[])",)]
    assert _rows(db, "SELECT layer, path FROM all_files WHERE module = 'dep.Other'") == [
        ("jar", "<java>/dep/Other.java")]  # the imported package whole
    assert _rows(db, "SELECT base_qualnames FROM all_classes WHERE qualname = 'java.util.ArrayList'") == [
        (["java.util.AbstractList", "java.util.List", "java.util.RandomAccess", "java.lang.Cloneable",
          "java.io.Serializable"],)]
    # the project's own rows are those a build without the layer makes, but where calls end
    bare = tmp_path / "bare.duckdb"
    index_repository(root, bare, embed=False, libraries=False)
    same = "SELECT caller_qualname, callee_text, line, resolved_callee FROM calls WHERE resolution <> 'library' " \
           "AND resolution <> 'external' ORDER BY ALL"
    assert _rows(db, same) == _rows(bare, same)
    assert _rows(bare, "SELECT count(*) FROM calls WHERE resolution = 'library'") == [(0,)]


def test_an_edit_of_imports_updates_in_place_and_equals_a_rebuild(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGRAPH_JAVA_CLASSPATH", str(_jar(tmp_path)))
    root, db = _repo(tmp_path), tmp_path / "g.duckdb"
    index_repository(root, db, embed=False)
    cart = root / "src/main/java/com/ex/Cart.java"
    cart.write_text(_CART.replace("import dep.Util;", "import dep.Util;\nimport java.util.Map;").replace(
        "public int count(", "public int keys(Map<String, Integer> m) { return m.keySet().size(); }\n"
                             "    public int count("))
    assert index_repository(root, db, embed=False).mode == "update"  # the JDK is in whole: no rebuild
    rebuilt = tmp_path / "rebuilt.duckdb"
    index_repository(root, rebuilt, embed=False, full=True)
    query = "SELECT caller_qualname, callee_text, resolved_callee, resolution FROM calls ORDER BY ALL"
    assert _rows(db, query) == _rows(rebuilt, query)
    assert ("com.ex.Cart.keys(Map)", "m.keySet", "java.util.Map.keySet()", "library") in _rows(db, query)


def test_an_import_in_no_jar_is_named_with_how_to_fix_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGRAPH_JAVA_CLASSPATH", "")
    root = _repo(tmp_path)
    report = index_repository(root, tmp_path / "g.duckdb", embed=False)
    note = next(w for w in report.warnings if "in no jar" in w)
    assert "dep" in note and "CODEGRAPH_JAVA_CLASSPATH" in note
    # a static import of a member class's constant of the repository's own is no jar's to find
    (root / "src/main/java/com/ex/Sorts.java").write_text(
        "package com.ex;\npublic class Sorts { public enum Kind { ONE, TWO } }\n")
    (root / "src/main/java/com/ex/Use.java").write_text(
        "package com.ex;\nimport static com.ex.Sorts.Kind.ONE;\nclass Use { Object k = ONE; }\n")
    report = index_repository(root, tmp_path / "g.duckdb", embed=False, full=True)
    note = next(w for w in report.warnings if "in no jar" in w)
    assert note.startswith("1 imported package is") and "Sorts" not in note


def test_a_damaged_jar_is_left_out_and_the_rest_indexed(tmp_path, monkeypatch):
    bad = tmp_path / "bad.jar"
    bad.write_bytes(b"PK\x03\x04 not a zip at all")
    monkeypatch.setenv("CODEGRAPH_JAVA_CLASSPATH", f"{bad}:{_jar(tmp_path)}")
    db = tmp_path / "g.duckdb"
    index_repository(_repo(tmp_path), db, embed=False)
    assert _rows(db, "SELECT resolution FROM calls WHERE callee_text = 'Util.twice'") == [("library",)]


def test_the_pom_declares_the_jars_found_in_the_local_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEGRAPH_JAVA_CLASSPATH", raising=False)
    m2 = tmp_path / "home/.m2/repository"
    for group, artifact, version in (("com.acme", "tools", "1.2"), ("org.x", "managed", "3.0"),
                                     ("org.x", "test-only", "0.1")):
        folder = m2.joinpath(*group.split("."), artifact, version)
        folder.mkdir(parents=True)
        (folder / f"{artifact}-{version}.jar").write_bytes(b"PK")
    evil = f"{tmp_path}/evil"  # a version that is a path: joined, it would leave the local repository
    planted = Path(f"{evil}/a-{evil}.jar")
    planted.parent.mkdir(parents=True)
    planted.write_bytes(b"PK")
    root = tmp_path / "repo"
    (root / "core").mkdir(parents=True)
    ns = 'xmlns="http://maven.apache.org/POM/4.0.0"'
    (root / "pom.xml").write_text(f"""<project {ns}><groupId>g</groupId><artifactId>top</artifactId>
      <version>1</version><properties><tools.version>1.2</tools.version></properties>
      <dependencyManagement><dependencies><dependency><groupId>org.x</groupId><artifactId>managed</artifactId>
      <version>3.0</version></dependency></dependencies></dependencyManagement></project>""")
    (root / "core/pom.xml").write_text(f"""<project {ns}><parent><groupId>g</groupId><artifactId>top</artifactId>
      <version>1</version></parent><artifactId>core</artifactId><dependencies>
      <dependency><groupId>com.acme</groupId><artifactId>tools</artifactId><version>${{tools.version}}</version></dependency>
      <dependency><groupId>org.x</groupId><artifactId>managed</artifactId></dependency>
      <dependency><groupId>org.x</groupId><artifactId>test-only</artifactId><version>0.1</version><scope>test</scope></dependency>
      <dependency><groupId>org.x</groupId><artifactId>absent</artifactId><version>9</version></dependency>
      <dependency><groupId>org.x</groupId><artifactId>unknown</artifactId><version>${{nowhere}}</version></dependency>
      <dependency><groupId>org.x</groupId><artifactId>a</artifactId><version>{evil}</version></dependency>
      </dependencies></project>""")
    (root / "core/bad").mkdir()
    (root / "core/bad/pom.xml").write_text("<project><unclosed></project>")
    found = {p.name for p in declared_jars(root)}
    assert found == {"tools-1.2.jar", "managed-3.0.jar", "test-only-0.1.jar"}
    assert {Path(p).name for p in classpath_jars(root)} == found


def test_a_jar_class_s_member_misspelt_gets_the_jar_s_members_in_the_cards(tmp_path, monkeypatch):
    """javac's `cannot find symbol: method twise(int), location: class dep.Util`: the card is the
    jar's `static int twice(int value)`, from the layer's rows (no list of the JDK knows a jar)."""
    jar = _jar(tmp_path)
    monkeypatch.setenv("CODEGRAPH_JAVA_CLASSPATH", str(jar))
    root, db = _repo(tmp_path), tmp_path / "g.duckdb"
    index_repository(root, db, embed=False)
    path = root / "src/main/java/com/ex/Cart.java"
    path.write_text(_CART.replace("Util.twice(items.size())", "Util.twise(items.size())"))
    checker = language("java").checker()
    try:
        report = diagnose(path, db, checker=checker)
    finally:
        checker.close()
    retrieval = next(r for r in report.retrievals if r.diagnostic.symbol.startswith("cant.resolve"))
    assert retrieval.rows[0]["qualname"] == "dep.Util.twice(int)"
    assert "static int twice(int value)" in report.context


def test_without_a_jdk_there_is_no_layer_and_names_outside_stay_dotted(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGRAPH_JDK", "off")
    db = tmp_path / "g.duckdb"
    report = index_repository(_repo(tmp_path), db, embed=False)
    assert report.library_files == 0 and not report.library_environment
    assert _rows(db, "SELECT resolved_callee, resolution FROM calls WHERE callee_text = 'String.format'") == [
        ("java.lang.String.format", "external")]


def test_gradle_builds_declare_jars_found_in_gradle_s_cache_or_the_local_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GRADLE_USER_HOME", str(tmp_path / "gradle"))
    monkeypatch.delenv("CODEGRAPH_JAVA_CLASSPATH", raising=False)
    files = tmp_path / "gradle/caches/modules-2/files-2.1"
    for group, artifact, version in (("com.google.guava", "guava", "33.0.0-jre"), ("org.x", "cataloged", "2.1"),
                                     ("org.x", "kotlin-dsl", "1.0")):
        folder = files / group / artifact / version / "0a1b2c"
        folder.mkdir(parents=True)
        (folder / f"{artifact}-{version}.jar").write_bytes(b"PK")
    m2 = tmp_path / "home/.m2/repository/org/y/from-m2/4.0"
    m2.mkdir(parents=True)
    (m2 / "from-m2-4.0.jar").write_bytes(b"PK")
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    (root / "gradle").mkdir()
    (root / "gradle/libs.versions.toml").write_text(
        '[versions]\nx = "2.1"\n[libraries]\nx-cataloged = { module = "org.x:cataloged", version.ref = "x" }\n')
    (root / "app/build.gradle").write_text(
        "dependencies {\n    implementation 'com.google.guava:guava:33.0.0-jre'\n"
        "    testImplementation \"org.y:from-m2:4.0\"\n    implementation libs.x.cataloged\n"
        "    implementation 'org.absent:nowhere:1.0'\n    implementation \"org.z:unset:${zVersion}\"\n}\n")
    (root / "lib").mkdir()
    (root / "lib/build.gradle.kts").write_text('dependencies { api("org.x:kotlin-dsl:1.0") }\n')
    assert sorted(p.name for p in declared_jars(root)) == [
        "cataloged-2.1.jar", "from-m2-4.0.jar", "guava-33.0.0-jre.jar", "kotlin-dsl-1.0.jar"]


def test_a_resolver_that_learns_the_library_as_lookups_ask_answers_as_one_that_learned_it_all(tmp_path, monkeypatch):
    """JavaResolver's `later`: the library's files learned the first time a lookup may need them
    give every answer and every fact read that learning all of them first gives; and a project
    class of a library class's name hides the library's, whenever it is asked (a GWT project's
    emulated `java.util.Objects`, here with one method of the JDK's)."""
    monkeypatch.setenv("CODEGRAPH_JAVA_CLASSPATH", str(_jar(tmp_path)))
    root, db = _repo(tmp_path), tmp_path / "g.duckdb"
    (root / "src/main/java/java/util").mkdir(parents=True)
    (root / "src/main/java/java/util/Objects.java").write_text(
        "package java.util;\npublic final class Objects { public static boolean isNull(Object o) { return o == null; } }\n")
    (root / "src/main/java/com/ex/Uses.java").write_text(
        "package com.ex;\nimport java.util.*;\nimport dep.Other;\nclass Uses {\n"
        "    int go(Other o, Map<String, List<Integer>> m) {\n"
        "        Objects.isNull(o); Objects.requireNonNull(m);\n"
        "        return o.util().hashCode() + m.get(\"a\").get(0).intValue() + Collections.emptyList().size(); }\n}\n")
    index_repository(root, db, embed=False)
    con = db_module.connect_readonly(db)
    try:
        java = "WHERE file_id IN (SELECT file_id FROM files WHERE language = 'java')"
        project = {name: extracted(con, name, java) for name in (*RESOLVED_TABLES, "classes", "members",
                                                                 "parameters", "bindings")}
        library = {name: extracted(con, f"{LIBRARY_SCHEMA}.{name}") for name in ("classes", "members", "parameters",
                                                                                 "imports", "bindings")}
    finally:
        con.close()
    files = frozenset(library["classes"].column("file_id").to_pylist())
    assert len(files) > 1000  # java.base whole, and the jar
    hidden = pa.array([f for f, q in zip(*(library["classes"].column(c).to_pylist() for c in ("file_id", "qualname")))
                       if q == "java.util.Objects"])
    assert len(hidden) == 1
    shown = {name: table.filter(pc.invert(pc.is_in(table.column("file_id"), hidden))) for name, table in library.items()}
    state = {name: project[name] for name in ("classes", "members", "parameters", "imports", "bindings")}
    at_once = JavaResolver({name: concat(name, [state[name], shown[name]]) if name != "bindings" else state[name]
                            for name in state}, jdk_types(), files)
    lazily = JavaResolver(state, jdk_types(), files, later=[library])
    assert len(dict.keys(lazily.classes)) < len(dict.keys(at_once.classes)) / 2  # not learned until asked
    eager, eager_bases = resolve_tables(at_once, project, project["classes"])
    lazy, lazy_bases = resolve_tables(lazily, project, project["classes"])
    for name in eager:
        assert lazy[name].equals(eager[name]), name
    assert lazy_bases.equals(eager_bases)
    calls = dict(zip(lazy["calls"].column("callee_text").to_pylist(), lazy["calls"].column("resolution").to_pylist()))
    assert calls["m.get(\"a\").get"] == "library" and calls["o.util"] == "library"
    assert calls["Objects.isNull"] != "library" and calls["Objects.requireNonNull"] is None  # the repository's class
    assert len(dict.keys(lazily.classes)) < len(dict.keys(at_once.classes)) / 2

"""javac's messages to SQL to cards: each frequent message, made by a mistake a model makes in a
small Maven-shaped repository, answered with the definition that fixes it (the expectations are
the repository's own names and the JDK's, written by hand)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codegraph.indexer import index_repository
from codegraph.languages import language
from codegraph.languages.java.rules import accepts, jdk_members
from codegraph.retrieval.diagnose import diagnose
from codegraph.retrieval.engine import Retriever
from codegraph.retrieval.rules import template_names

pytestmark = pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (.ci/run installs one)")

_FILES = {
    "com/ex/Cart.java": """\
package com.ex;

import java.util.ArrayList;
import java.util.List;

public class Cart {
    private final List<Item> items = new ArrayList<>();

    public void add(Item item) { items.add(item); }

    public static class Sizes { public static final int MAX = 9; }

    public int total() {
        int sum = 0;
        for (Item i : items) sum += i.price();
        return sum;
    }
}
""",
    "com/ex/Item.java": "package com.ex;\n\npublic record Item(String name, int price) {}\n",
    "com/ex/util/Money.java": """\
package com.ex.util;

public final class Money {
    public static final Integer CENTS = 100;
    public static String format(int cents) { return cents / 100 + "." + cents % 100; }
    public static String format(int cents, String currency) { return format(cents) + " " + currency; }
}
""",
    "com/ex/Base.java": "package com.ex;\n\npublic abstract class Base {\n    public abstract int size();\n}\n",
    "com/ex/Small.java": "package com.ex;\n\npublic class Small extends Base {\n    public int size() { return 0; }\n}\n",
    # six taps near the code with an INSTANCE each, and the sink the code expects further away
    **{f"com/ex/io/{name}Tap.java": f"package com.ex.io;\n\npublic class {name}Tap {{\n"
                                    f"    public static final {name}Tap INSTANCE = new {name}Tap();\n}}\n"
       for name in ("Closed", "Null", "Empty", "Broken", "Proxy", "Tagged")},
    "com/ex/io/Plain.java": "package com.ex.io;\n\npublic class Plain {}\n",
    "com/ex/sinks/Sink.java": "package com.ex.sinks;\n\npublic abstract class Sink {}\n",
    "com/ex/sinks/ClosedSink.java": "package com.ex.sinks;\n\npublic class ClosedSink extends Sink {\n"
                                    "    public static final ClosedSink INSTANCE = new ClosedSink();\n}\n",
    # a test that uses a dependency the checker cannot see (no classpath): the repository imports it
    "com/ex/CartTest.java": "package com.ex;\n\nimport org.junit.Test;\n\npublic class CartTest {\n"
                            "    @Test public void adds() { new Cart().add(new Item(\"a\", 1)); }\n}\n",
}

_CANDIDATE = """\
package com.ex;

import java.util.Map;
import com.ex.utils.Money;
import org.junit.Test;

public class Shop implements Runnable {
    private final Cart cart = new Cart();

    @Test
    public String checkout(Map<String, Integer> prices, String who) {
        cart.ad(new Item("a", 1));
        int t = cart.totl;
        LinkedList<String> l = new LinkedList<>();
        Item i = new Item(3);
        int n = who.lenght();
        Base b = new Base();
        return "" + t + n + cart.items;
    }
}
"""


@pytest.fixture(scope="module", params=[True, False], ids=["library-layer", "no-layer"])
def java_repo(tmp_path_factory, request) -> Path:
    """The repository indexed with Java's library layer (the JDK's classes are rows: the default)
    and without it (the JDK's come from its list): the same cards either way."""
    root = tmp_path_factory.mktemp("javarepo")
    for rel, text in _FILES.items():
        path = root / "src" / "main" / "java" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    index_repository(root, root / "graph.duckdb", embed=False, libraries=request.param)
    return root


def _report(root: Path, text: str, monkeypatch, name: str = "Shop.java"):
    monkeypatch.setenv("CODEGRAPH_JAVA_CLASSPATH", "")  # no Maven: the dependency stays unseen
    path = root / "src" / "main" / "java" / "com" / "ex" / name
    path.write_text(text)
    try:
        checker = language("java").checker()
        try:
            return diagnose(path, root / "graph.duckdb", checker=checker)
        finally:
            checker.close()
    finally:
        path.unlink()


def _by_line(report) -> dict[int, list]:
    out: dict[int, list] = {}
    for r in report.retrievals:
        out.setdefault(r.diagnostic.line, []).append(r)
    return out


def test_each_frequent_javac_message_gets_the_definition_that_fixes_it(java_repo, monkeypatch):
    report = _report(java_repo, _CANDIDATE, monkeypatch)
    found = _by_line(report)
    first = {line: rs[0] for line, rs in found.items()}
    # a wrong package in an import: the class where it really is, with the import to write
    assert first[4].diagnostic.symbol == "doesnt.exist"
    assert first[4].rows[0]["import_line"] == "import com.ex.util.Money;"
    # an invented method and an invented field on a typed receiver: the type's real members, nearest first
    assert first[12].diagnostic.symbol == "cant.resolve.location.args"
    assert first[12].rows[0]["qualname"] == "com.ex.Cart.add(Item)"
    assert first[13].rows[0]["qualname"] == "com.ex.Cart.total()"
    # a JDK class used without its import
    assert any(r["import_line"] == "import java.util.LinkedList;" for r in first[14].rows)
    # a constructor called with the wrong arguments: the constructors there are
    assert first[15].diagnostic.symbol == "cant.apply.symbol"
    assert [r["qualname"] for r in first[15].rows] == ["com.ex.Item.<init>(String,int)"]
    # a JDK method misspelt: the JDK's members of the receiver's type
    assert first[16].rows[0]["qualname"] == "java.lang.String.length()"
    # an abstract class instantiated: a concrete subclass
    assert first[17].diagnostic.symbol == "abstract.cant.be.instantiated"
    assert first[17].rows[0]["qualname"] == "com.ex.Small"
    # private access: the members the code may use
    assert first[18].diagnostic.symbol == "report.access"
    # a method an interface requires and the class lacks (the JDK's Runnable)
    assert first[7].diagnostic.symbol == "does.not.override.abstract"
    assert first[7].rows[0]["qualname"] == "java.lang.Runnable.run()"
    # the dependency the checker cannot see is the repository's own import elsewhere: not a mistake
    assert 5 not in found and 10 not in found
    # the cards speak Java: declarations and import lines as the language writes them
    assert "void add(Item item)" in report.context
    assert "import with: import com.ex.util.Money;" in report.context
    assert "def " not in report.context


def test_every_overload_of_a_call_that_cannot_be_applied(java_repo, monkeypatch):
    text = _CANDIDATE.replace('cart.ad(new Item("a", 1));', 'String s = com.ex.util.Money.format("x", 1, 2);')
    report = _report(java_repo, text, monkeypatch)
    (retrieval,) = [r for r in report.retrievals if r.diagnostic.line == 12]
    assert retrieval.diagnostic.symbol == "cant.apply.symbols"
    assert {r["qualname"] for r in retrieval.rows} == {"com.ex.util.Money.format(int)",
                                                       "com.ex.util.Money.format(int,String)"}
    assert "static String format(int cents, String currency)" in report.context


_MORE = """\
package com.ex;

import com.ex.util.Money;

public class Shop extends Cart {
    public int total() { return super.totl(); }
    public String cents() { return com.ex.util.Money.CENTS.toString() + Other.CENTS.toString(); }
    public String price() { return Money.format("x", "USD"); }
    public int most() { return Cart.Limits.MAX; }
}
"""


def test_a_superclass_member_a_forgotten_import_an_argument_and_a_member_class(java_repo, monkeypatch):
    report = _report(java_repo, _MORE.replace("Other.CENTS", "Money.CENTS").replace("import com.ex.util.Money;", ""),
                     monkeypatch)
    found = {r.diagnostic.line: r for r in report.retrievals}
    # `super.totl()`: javac names no location; the superclass's members answer
    assert found[6].rows[0]["qualname"] == "com.ex.Cart.total()"
    # `Money.CENTS.x()` with Money not imported: javac takes Money for a package; the class to import
    assert found[7].diagnostic.symbol == "doesnt.exist"
    assert found[7].rows[0]["import_line"] == "import com.ex.util.Money;"
    # an argument of the wrong type inside a call: the overloads of that call
    assert found[8].diagnostic.symbol in ("prob.found.req", "cant.resolve.location")
    # `Cart.Limits.MAX`: no member class Limits; MAX in Cart's member class
    assert found[9].rows[0]["qualname"] == "com.ex.Cart.Sizes.MAX"


def test_an_argument_javac_cannot_convert_gets_the_overloads_of_its_call(java_repo, monkeypatch):
    report = _report(java_repo, _MORE.replace("Other.CENTS", "Money.CENTS"), monkeypatch)
    (retrieval,) = [r for r in report.retrievals if r.diagnostic.line == 8]
    assert retrieval.diagnostic.symbol == "prob.found.req"
    assert "com.ex.util.Money.format(int,String)" in [r["qualname"] for r in retrieval.rows]


def test_a_syntax_error_is_kept_and_shown_with_its_lines(java_repo, monkeypatch):
    report = _report(java_repo, "package com.ex;\n\npublic class Shop {\n    void f() { int x = ; }\n}\n",
                     monkeypatch)
    assert [d.symbol for d in report.diagnostics] == ["illegal.start.of.expr"]
    assert report.retrievals[0].source == "local"
    assert "int x = ;" in report.context


def test_members_of_keeps_overloads_and_a_field_beside_its_accessor(java_repo):
    import duckdb

    con = duckdb.connect(str(java_repo / "graph.duckdb"), read_only=True)
    try:
        money = {r[0] for r in con.execute("SELECT qualname FROM members_of('com.ex.util.Money')").fetchall()}
        item = {r[0] for r in con.execute("SELECT qualname FROM members_of('com.ex.Item')").fetchall()}
    finally:
        con.close()
    assert {"com.ex.util.Money.format(int)", "com.ex.util.Money.format(int,String)"} <= money
    assert {"com.ex.Item.name", "com.ex.Item.name()"} <= item


def test_a_java_file_is_named_by_its_package(tmp_path):
    path = tmp_path / "Foo.java"
    path.write_text("/* licence: package not.this; */\npackage a.b;\n\nclass Foo {}\n")
    assert language("java").module_of_file(path) == "a.b.Foo"
    path.write_text("class Foo {}\n")
    assert language("java").module_of_file(path) == "Foo"


_MEMBERS = {"owner": "com.ex.Cart", "name": "ad", "args": ["Item"], "accepts": [accepts("Item")], "also": [],
            "external": [], "local": [], "expected": None, "near": None}
SAMPLE_PARAMS = {
    "java_members_like": _MEMBERS,
    "java_overloads": {"owner": "com.ex.util.Money", "name": "format", "external": []},
    "java_types": {"name": "Money", "package": "com.ex", "external": []},
    "java_packages": {"package": "com.ex.utils", "name": "Money", "external": []},
    "java_names": {"owner": "com.ex.Cart", "name": "totl", "package": "com.ex", "local": [], "external": []},
}


def test_every_java_template_has_sample_parameters():
    assert set(SAMPLE_PARAMS) == {t for t in template_names() if t.startswith("java_")}


@pytest.mark.parametrize("template", sorted(SAMPLE_PARAMS))
def test_every_java_template_runs_on_a_java_repository(java_repo, template):
    with Retriever(java_repo / "graph.duckdb") as retriever:
        columns, rows = retriever.run_template(template, SAMPLE_PARAMS[template])
    assert rows, template
    assert {"qualname", "kind", "signature", "import_line", "score", "match"} <= set(columns)


def test_a_call_ranks_the_members_it_could_mean_by_arity_and_argument_types(java_repo):
    """An invented name shares no spelling with the real one (`out.amount(s)` for `value`): the
    member taking those arguments (an int widens to long, JLS 5.1.2) ranks above the others."""
    with Retriever(java_repo / "graph.duckdb") as retriever:
        _, rows = retriever.run_template("java_members_like", {
            **_MEMBERS, "owner": "com.ex.util.Money", "name": "render", "args": ["short", "String"],
            "accepts": [accepts("short"), accepts("String")]})
    assert rows[0]["qualname"] == "com.ex.util.Money.format(int,String)"
    assert "long" in accepts("int") and "Integer" in accepts("int") and "int" not in accepts("long")


def test_a_jdk_type_brings_its_inherited_members_once():
    members = jdk_members("java.util.ArrayList")
    names = [(m["name"], m["signature"]) for m in members]
    assert ("size", "() -> int") in names and len(names) == len(set(names))
    assert all(m["defined_in"] == "java.util.ArrayList" for m in members if m["name"] == "<init>")


def test_the_rrr_class_info_of_a_java_class_gives_its_constructors_and_import(java_repo):
    from codegraph.db import connect_readonly
    from codegraph.retrieval.tools import get_class_info

    con = connect_readonly(java_repo / "graph.duckdb")
    try:
        (item,) = get_class_info(con, "Item")
        (money,) = get_class_info(con, "Money")
    finally:
        con.close()
    assert item["constructor"] == "(String name, int price)"
    assert money["constructor"] == "()"  # the default constructor (JLS 8.8.9), not Python's (self)
    assert money["import_line"] == "import com.ex.util.Money;"
    assert {m["name"] for m in money["members"]} >= {"format", "CENTS"}


def test_a_java_class_tasks_context_names_the_classes_it_needs_with_their_imports(java_repo):
    """Writing a whole class: the classes the description names are shown themselves, with the
    import a file of another package writes; a Java file's module and its class share a name, and
    the class is the target (its own rows stay out)."""
    from codegraph.retrieval.task_context import task_context

    found = task_context(java_repo / "graph.duckdb", "Small extends Base and prices its size with Money.",
                         "src/main/java/com/ex/Small.java", "Small", budget_tokens=2000)
    items = {i.qualname: i for i in found.items}
    assert found.target == "com.ex.Small"
    assert "com.ex.Base" in items and "com.ex.util.Money" in items
    assert items["com.ex.util.Money"].import_line == "import com.ex.util.Money;"
    assert items["com.ex.Base"].import_line is None  # the same package: nothing to import
    assert not any(q.startswith("com.ex.Small.") for q in items)
    assert "static String format(int cents)" in found.text


def test_a_path_javacs_helper_cannot_read_is_refused_in_one_line(tmp_path):
    from codegraph.languages.checks import CheckError

    path = tmp_path / "a\tb" / "Foo.java"
    path.parent.mkdir()
    path.write_text("class Foo {}\n")
    checker = language("java").checker()
    try:
        with pytest.raises(CheckError, match="rename it"):
            checker.lint(path)
    finally:
        checker.close()


def test_a_static_field_read_through_the_wrong_class_ranks_the_one_of_the_type_the_code_expects(java_repo, monkeypatch):
    """`Sink out = Plain.INSTANCE;`: seven classes have an INSTANCE, six of them nearer than the
    sink; the declared type (a local, a field, `this.f`, a method's return) says which one fits,
    and where the type tells none apart, the name the value is given to (`nullTap()`: NullTap's)."""
    code = """\
package com.ex.io;

import com.ex.sinks.Sink;

public class Pipe {
    private Sink sink;
    public Sink open(boolean closed) {
        Sink out = Plain.INSTANCE;
        this.sink = closed ? Plain.INSTANCE : out;
        return Plain.INSTANCE;
    }
    public Object any() { return Plain.INSTANCE; }
    public Sink mine() { return Pipe.INSTANCE; }
    public Object nullTap() { return Plain.INSTANCE; }
}
"""
    path = java_repo / "src" / "main" / "java" / "com" / "ex" / "io" / "Pipe.java"
    monkeypatch.setenv("CODEGRAPH_JAVA_CLASSPATH", "")
    path.write_text(code)
    try:
        checker = language("java").checker()
        try:
            report = diagnose(path, java_repo / "graph.duckdb", checker=checker)
        finally:
            checker.close()
    finally:
        path.unlink()
    found = _by_line(report)
    for line in (8, 9, 10, 13):  # 13: read through the code's own class, not a bare name
        rows = [row for r in found[line] for row in r.rows]
        assert rows[0]["qualname"] == "com.ex.sinks.ClosedSink.INSTANCE", (line, rows[:3])
    rows = [row for r in found[12] for row in r.rows]  # Object tells none apart: the nearest first
    assert rows[0]["qualname"] != "com.ex.sinks.ClosedSink.INSTANCE"
    rows = [row for r in found[14] for row in r.rows]  # nor here, but the method's name does
    assert rows[0]["qualname"] == "com.ex.io.NullTap.INSTANCE"

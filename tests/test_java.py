"""Java's rows, with expectations written from the Java Language Specification (JLS 17): what each
declaration defines (8.1-8.10, 9.1-9.7), what javac names anonymous and local classes (13.1), which
members exist without a declaration (8.8.9 default constructor, 8.9.3 an enum's values/valueOf,
8.10.3 a record's fields and accessors, 8.10.4 its canonical constructor), what each import form
brings in (7.5), and where a call's code belongs."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from codegraph.indexer import index_repository
from codegraph.languages import ExtractionBudget, UndecodableSource, for_file, language
from codegraph.languages.java.extract import erased, extract
from codegraph.languages.java.jdk import jdk_types

_SHOP = """\
package com.example.app;

import java.util.List;
import java.util.*;
import static java.lang.Math.max;
import static org.junit.Assert.*;

/** A shop
 * that sells. */
@Deprecated
public class Shop<T extends Item> extends Base implements Runnable, Comparable<Shop<T>> {
    private static final int LIMIT = 10, OTHER = 2;
    private final List<T> items = new ArrayList<>();
    String name;

    public Shop(String name) { this(name, 1); }
    Shop(String name, int n) { super(n); this.name = name; }

    public <U> void add(T item, U... extra) {
        items.add(item);
        int m = max(1, LIMIT);
        for (T t : items) { t.price(); }
        Runnable r = () -> helper(item);
        Helper.util(this::add);
        try (var in = open()) { in.read(); } catch (IllegalStateException | IllegalArgumentException e) { e.log(); }
        if (item instanceof Special s) s.go();
        Object o = new Object() { @Override public String toString() { return name; } };
        class Local { void work() { helper(null); } }
        new Local().work();
    }
    public void add(T item) { add(item, new Object[0]); }
    static int helper(Object x) { return 1; }
    @Override public void run() {}
    public int compareTo(Shop<T> o) { return 0; }

    interface Listener { int LIMIT = 3; void on(String e); default void off() {} }
    enum Color { RED, GREEN("g") { void f() {} }; private final String code; Color() { this("r"); } Color(String s) { code = s; } }
    record Point(int x, int y) { static Point origin() { return new Point(0, 0); } }
    record Range(int lo, int hi) { Range { if (lo > hi) throw new IllegalArgumentException(); } public int lo() { return lo; } }
    @interface Marker { String value() default ""; }
    class Inner { void g() { Shop.this.run(); } }
}
class Second {}
"""


@pytest.fixture(scope="module")
def shop():
    facts = extract(_SHOP.encode(), "src/main/java/com/example/app/Shop.java", "com.example.app.Shop")
    assert facts.parse_errors == 0
    return facts.rows


def _by(rows, key="qualname"):
    return {getattr(r, key): r for r in rows}


def test_every_kind_of_class_with_its_qualified_name(shop):
    classes = _by(shop["classes"])
    kinds = {q: r.kind for q, r in classes.items()}
    assert kinds == {
        "com.example.app.Shop": "class", "com.example.app.Second": "class",
        "com.example.app.Shop.Listener": "interface", "com.example.app.Shop.Color": "enum",
        "com.example.app.Shop.Point": "record", "com.example.app.Shop.Range": "record",
        "com.example.app.Shop.Marker": "annotation", "com.example.app.Shop.Inner": "class",
        # javac's binary names (JLS 13.1): anonymous classes numbered in their class, local ones with their name
        "com.example.app.Shop$1": "class", "com.example.app.Shop$1Local": "class",
        "com.example.app.Shop.Color$1": "class"}
    shop_class = classes["com.example.app.Shop"]
    assert shop_class.bases == ["Base", "Runnable", "Comparable<Shop<T>>"]
    assert shop_class.decorators == ["Deprecated"]
    assert shop_class.docstring == "A shop\nthat sells."
    assert classes["com.example.app.Shop$1"].bases == ["Object"]
    assert classes["com.example.app.Shop.Color$1"].bases == ["Color"]
    assert classes["com.example.app.Shop$1Local"].scope_qualname == "com.example.app.Shop.add(T,U[])"
    bases = [(r.class_qualname, r.position, r.base_text) for r in shop["inheritance"]
             if r.class_qualname == "com.example.app.Shop"]
    assert bases == [("com.example.app.Shop", 0, "Base"), ("com.example.app.Shop", 1, "Runnable"),
                     ("com.example.app.Shop", 2, "Comparable<Shop<T>>")]


def test_overloads_are_distinct_members_named_by_their_parameter_types(shop):
    members = _by(shop["members"])
    assert members["com.example.app.Shop.add(T,U[])"].kind == "method"
    assert members["com.example.app.Shop.add(T,U[])"].signature == "(T item, U... extra) -> void"
    assert members["com.example.app.Shop.add(T)"].kind == "method"
    assert members["com.example.app.Shop.helper(Object)"].kind == "staticmethod"
    assert members["com.example.app.Shop.compareTo(Shop)"].signature == "(Shop<T> o) -> int"
    assert members["com.example.app.Shop.<init>(String)"].kind == "constructor"
    assert members["com.example.app.Shop.<init>(String,int)"].kind == "constructor"
    assert members["com.example.app.Shop.run()"].decorators == ["Override"]
    params = [(p.position, p.name, p.kind, p.annotation) for p in shop["parameters"]
              if p.owner_qualname == "com.example.app.Shop.add(T,U[])"]
    assert params == [(0, "item", "positional", "T"), (1, "extra", "var-positional", "U...")]


def test_fields_are_static_or_instance_and_interface_fields_are_static(shop):
    members = _by(shop["members"])
    assert (members["com.example.app.Shop.LIMIT"].kind, members["com.example.app.Shop.LIMIT"].annotation,
            members["com.example.app.Shop.LIMIT"].value) == ("class_attribute", "int", "10")
    assert members["com.example.app.Shop.OTHER"].kind == "class_attribute"
    assert (members["com.example.app.Shop.items"].kind, members["com.example.app.Shop.items"].annotation) == \
        ("instance_attribute", "List<T>")
    assert members["com.example.app.Shop.Listener.LIMIT"].kind == "class_attribute"  # JLS 9.3: implicitly static
    assert members["com.example.app.Shop.Color.RED"].kind == "class_attribute"
    assert members["com.example.app.Shop.Color.code"].kind == "instance_attribute"


def test_members_java_defines_without_a_declaration(shop):
    members = _by(shop["members"])
    # 8.8.9: a class with no constructor has a default one; one with a constructor has none
    assert "com.example.app.Second.<init>()" in members
    assert "com.example.app.Shop.Inner.<init>()" in members
    assert "com.example.app.Shop.<init>()" not in members
    # 8.9.3: values() and valueOf(String); the enum's own constructors only
    assert members["com.example.app.Shop.Color.values()"].kind == "staticmethod"
    assert members["com.example.app.Shop.Color.valueOf(String)"].kind == "staticmethod"
    assert {q for q in members if q.startswith("com.example.app.Shop.Color.<init>")} == {
        "com.example.app.Shop.Color.<init>()", "com.example.app.Shop.Color.<init>(String)"}
    # 8.10.3-8.10.4: a record's fields, accessors and canonical constructor, unless declared
    assert members["com.example.app.Shop.Point.x"].kind == "instance_attribute"
    assert members["com.example.app.Shop.Point.x()"].signature == "() -> int"
    assert members["com.example.app.Shop.Point.<init>(int,int)"].kind == "constructor"
    lo = [r for r in shop["members"] if r.qualname == "com.example.app.Shop.Range.lo()"]
    assert len(lo) == 1 and lo[0].source is not None  # declared: not made up a second time
    ranges = [r for r in shop["members"] if r.qualname == "com.example.app.Shop.Range.<init>(int,int)"]
    assert len(ranges) == 1 and "lo > hi" in ranges[0].source  # the compact constructor is the canonical one
    assert members["com.example.app.Shop.Marker.value()"].kind == "method"
    # no implicit constructor for an anonymous class, and no member of one leaks into its outer class
    assert "com.example.app.Shop$1.<init>()" not in members
    assert members["com.example.app.Shop$1.toString()"].class_qualname == "com.example.app.Shop$1"


def test_each_import_form(shop):
    rows = [(r.imported_module, r.name, r.level, r.is_star, r.bound_name, r.target) for r in shop["imports"]]
    assert rows == [("java.util", "List", 0, False, "List", "java.util.List"),  # 7.5.1 single-type
                    ("java.util", "*", 0, True, None, None),  # 7.5.2 type-import-on-demand
                    ("java.lang.Math", "max", 1, False, "max", "java.lang.Math.max"),  # 7.5.3 single-static
                    ("org.junit.Assert", "*", 1, True, None, None)]  # 7.5.4 static-import-on-demand


def test_calls_and_where_their_code_belongs(shop):
    calls = [(r.caller_qualname, r.callee_text, r.callee_name, r.kind, r.arguments) for r in shop["calls"]]
    add = "com.example.app.Shop.add(T,U[])"
    expected = [
        ("com.example.app.Shop", "ArrayList", "ArrayList", "new", []),  # a field initializer: the class's code
        ("com.example.app.Shop.<init>(String)", "this", "this", "call", ["name", "1"]),
        ("com.example.app.Shop.<init>(String,int)", "super", "super", "call", ["n"]),
        (add, "items.add", "add", "call", ["item"]),
        (add, "max", "max", "call", ["1", "LIMIT"]),
        (add, "t.price", "price", "call", []),
        (add, "helper", "helper", "call", ["item"]),  # in a lambda: the method's code
        (add, "Helper.util", "util", "call", ["this::add"]),
        (add, "this::add", "add", "reference", []),
        (add, "open", "open", "call", []),
        (add, "in.read", "read", "call", []),
        (add, "e.log", "log", "call", []),
        (add, "s.go", "go", "call", []),
        (add, "Object", "Object", "new", []),
        ("com.example.app.Shop$1Local.work()", "helper", "helper", "call", ["null"]),
        (add, "new Local().work", "work", "call", []),
        (add, "Local", "Local", "new", []),
        ("com.example.app.Shop.add(T)", "add", "add", "call", ["item", "new Object[0]"]),
        ("com.example.app.Shop.Color", "Color", "Color", "new", []),  # RED: the enum's no-argument constructor
        ("com.example.app.Shop.Color", "Color", "Color", "new", ['"g"']),  # GREEN("g") runs a constructor
        ("com.example.app.Shop.Color.<init>()", "this", "this", "call", ['"r"']),
        ("com.example.app.Shop.Point.origin()", "Point", "Point", "new", ["0", "0"]),
        ("com.example.app.Shop.Range.<init>(int,int)", "IllegalArgumentException", "IllegalArgumentException",
         "new", []),
        ("com.example.app.Shop.Inner.g()", "Shop.this.run", "run", "call", []),
    ]
    assert sorted(calls) == sorted(expected)
    toString = [r for r in shop["calls"] if r.caller_qualname.startswith("com.example.app.Shop$1.")]
    assert toString == []  # `return name;` calls nothing


def test_locals_with_their_declared_types(shop):
    bindings = [(r.name, r.kind, r.annotation, r.value) for r in shop["bindings"]
                if r.scope_qualname == "com.example.app.Shop.add(T,U[])"]
    assert bindings == [
        ("m", "assignment", "int", "max(1, LIMIT)"),
        ("t", "loop", "T", "items"),
        ("r", "assignment", "Runnable", "() -> helper(item)"),
        ("in", "with", "var", "open()"),
        ("e", "as", "IllegalStateException | IllegalArgumentException",
         "IllegalStateException | IllegalArgumentException"),
        ("s", "as", "Special", "Special"),
        ("o", "assignment", "Object", "new Object() { @Override public String toString() { return name; } }")]


@pytest.mark.parametrize("written, identity", [
    ("String", "String"), ("java.util.List<String>", "List"), ("Map<String, List<Integer>>", "Map"),
    ("java.util.Map.Entry<K, V>", "Entry"), ("int[][]", "int[][]"), ("String...", "String[]"),
    ("@NonNull final String", "String"), ("List<? extends T>[]", "List[]"), ("T", "T")])
def test_a_parameter_type_as_a_method_identity_writes_it(written, identity):
    assert erased(written) == identity


@pytest.mark.parametrize("path, module", [
    ("src/main/java/com/x/Foo.java", "com.x.Foo"),
    ("core/src/test/java/com/x/FooTest.java", "com.x.FooTest"),
    ("app/src/integration/java/org/y/Bar.java", "org.y.Bar"),
    ("src/com/x/Foo.java", "com.x.Foo"),
    ("Foo.java", "Foo"),
    ("tools/java/Gen.java", "tools.java.Gen")])  # `java` is a source root only as src/<set>/java
def test_module_names_start_below_the_source_root(path, module):
    assert language("java").module_name(path, set()) == module
    assert for_file(path) is language("java")


def test_hostile_java_files_cost_linear_time_or_are_skipped():
    chain = ("class A { void f() { x" + ".b()" * 20000 + "; } }").encode()
    rows = extract(chain, "A.java", "A").rows
    assert len(rows["calls"]) == 20000
    assert max(len(r.callee_text) for r in rows["calls"]) <= 243  # each read from a window, stored shortened
    nested = ("class B { int f() { return " + "(" * 3000 + "1" + ")" * 3000 + "; } }").encode()
    assert extract(nested, "B.java", "B").rows["members"]  # no recursion limit on deep nesting
    with pytest.raises(UndecodableSource):
        extract(b"\x00\x01class C {}", "C.java", "C")
    with pytest.raises(UndecodableSource):
        extract("class D { String s = \"\u00e9\"; }".encode("latin-1"), "D.java", "D")
    with pytest.raises(ExtractionBudget):
        extract(("class E { void f() {" + "g();" * 200000 + "} }").encode(), "E.java", "E", budget_s=0.0)


def test_a_repository_with_python_and_java_indexes_both(tmp_path):
    root = tmp_path / "repo"
    (root / "src/main/java/com/example").mkdir(parents=True)
    (root / "src/main/java/com/example/Greeter.java").write_text(
        "package com.example;\nimport java.util.List;\n"
        "public class Greeter { public String greet(String who) { return String.format(\"hi %s\", who); } }\n")
    (root / "scripts").mkdir()
    (root / "scripts/run.py").write_text("import json\n\ndef main():\n    return json.dumps(1)\n")
    db = tmp_path / "g.duckdb"
    report = index_repository(root, db, embed=False)
    # the Python library layer reads Python's imports only: `java.util` is not a package it misses
    assert not any("java" in w for w in report.warnings), report.warnings
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert dict(con.execute("SELECT path, language FROM files WHERE layer = 'project'").fetchall()) == {
            "src/main/java/com/example/Greeter.java": "java", "scripts/run.py": "python"}
        assert con.execute("SELECT module FROM files WHERE language = 'java'").fetchone() == ("com.example.Greeter",)
        assert con.execute("SELECT qualname, kind FROM members WHERE class_qualname = 'com.example.Greeter' "
                           "ORDER BY 1").fetchall() == [("com.example.Greeter.<init>()", "constructor"),
                                                        ("com.example.Greeter.greet(String)", "method")]
        assert con.execute("SELECT resolved_callee FROM calls WHERE caller_qualname = 'run.main'"
                           ).fetchone() == ("json.dumps",)
    finally:
        con.close()
    # an update of the Java file alone keeps both languages' rows
    (root / "src/main/java/com/example/Greeter.java").write_text(
        "package com.example;\npublic class Greeter { public String greet(String who) { return who; }\n"
        "  public String bye() { return greet(\"bye\"); } }\n")
    assert index_repository(root, db, embed=False).mode == "update"
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT caller_qualname, callee_text FROM calls WHERE file_id IN "
                           "(SELECT file_id FROM files WHERE language = 'java')").fetchall() == [
            ("com.example.Greeter.bye()", "greet")]
        assert con.execute("SELECT count(*) FROM calls WHERE caller_qualname = 'run.main'").fetchone() == (1,)
    finally:
        con.close()


_ZOO = {
    "p/Animal.java": """package p;
public abstract class Animal {
    protected String name;
    public Animal(String name) { this.name = name; }
    public String name() { return name; }
    public abstract String sound();
    public String describe() { return name() + " says " + sound(); }
    public static Animal of(String kind) { return kind.equals("dog") ? new Dog() : new Cat(); }
}
""",
    "p/Dog.java": """package p;
public class Dog extends Animal implements Pet {
    public Dog() { super("dog"); }
    @Override public String sound() { return "woof"; }
    public String owner() { return "me"; }
    public void fetch(Ball ball) { ball.roll(1); ball.roll(1, 2); ball.roll("far"); }
}
""",
    "p/Cat.java": """package p;
class Cat extends Animal {
    Cat() { this("cat"); }
    Cat(String n) { super(n); }
    public String sound() { String name = "x"; return name.trim(); }
}
""",
    "p/Pet.java": """package p;
public interface Pet { default String greet() { return "hi " + owner(); } String owner(); }
""",
    "p/Ball.java": """package p;
public class Ball { void roll(int n) {} void roll(int a, int b) {} void roll(String where) {} Ball bounce() { return this; } }
""",
    "q/Shelter.java": """package q;
import p.Animal;
import p.Dog;
import java.util.List;
import java.util.ArrayList;
import static p.Animal.of;
public class Shelter {
    private final List<Animal> animals = new ArrayList<>();
    private Dog lead;
    public void admit(String kind) {
        Animal a = of(kind);
        animals.add(a);
        a.describe();
        lead.fetch(new p.Ball());
        lead.greet();
        var d = new Dog();
        d.sound();
        new p.Ball().bounce().roll(3);
        for (Animal each : animals) each.name();
        Runnable r = () -> report(a);
        Animal.of("cat").sound();
    }
    private void report(Animal a) { a.sound(); }
    class Room { void open() { admit("dog"); report(null); } }
}
""",
    "q/Dog.java": "package q;\nclass Dog { void bark() {} }\n",
    "q/Zoo.java": "package q;\nimport p.*;\nclass Zoo { Dog d; Ball b; void f() { d.bark(); b.bounce(); } }\n",
    "q/Yard.java": "package q;\nimport p.Dog;\nclass Yard { Dog d; void f() { d.sound(); } }\n",
}


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    root = tmp_path_factory.mktemp("zoo")
    for path, text in _ZOO.items():
        (root / "src/main/java" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "src/main/java" / path).write_text(text)
    db = root / "g.duckdb"
    index_repository(root, db, embed=False, libraries=False)
    con = duckdb.connect(str(db), read_only=True)
    yield con
    con.close()


def _calls(con, caller):
    return sorted((text, target or "", how or "") for text, target, how in con.execute(
        "SELECT callee_text, resolved_callee, resolution FROM calls WHERE caller_qualname = ?", [caller]).fetchall())


def test_calls_resolve_through_declared_types(zoo):
    """JLS 15.12: the class to search (15.12.1), the overload by arity and argument types (15.12.2),
    a method inherited from a superclass or an interface's default (8.4.8), a static import (7.5.3)."""
    assert _calls(zoo, "q.Shelter.admit(String)") == sorted([
        ("of", "p.Animal.of(String)", "import"),
        ("animals.add", "java.util.List.add", "external"),
        ("a.describe", "p.Animal.describe()", "type"),
        ("lead.fetch", "p.Dog.fetch(Ball)", "type"),
        ("p.Ball", "p.Ball.<init>()", "type"),
        ("lead.greet", "p.Pet.greet()", "type"),
        ("Dog", "p.Dog.<init>()", "type"),
        ("d.sound", "p.Dog.sound()", "type"),  # `var d = new Dog()`
        ("p.Ball", "p.Ball.<init>()", "type"),
        ("new p.Ball().bounce", "p.Ball.bounce()", "type"),
        ("new p.Ball().bounce().roll", "p.Ball.roll(int)", "type"),  # through bounce()'s return type
        ("each.name", "p.Animal.name()", "type"),
        ("report", "q.Shelter.report(Animal)", "self"),  # in a lambda: admit's code
        ("Animal.of", "p.Animal.of(String)", "type"),
        ("Animal.of(\"cat\").sound", "p.Animal.sound()", "type")])
    assert _calls(zoo, "p.Dog.fetch(Ball)") == [("ball.roll", "p.Ball.roll(String)", "type"),
                                               ("ball.roll", "p.Ball.roll(int)", "type"),
                                               ("ball.roll", "p.Ball.roll(int,int)", "type")]
    assert _calls(zoo, "q.Shelter.report(Animal)") == [("a.sound", "p.Animal.sound()", "type")]
    # an inner class calls its outer instance's methods (15.12.1: the innermost class that has one)
    assert _calls(zoo, "q.Shelter.Room.open()") == [("admit", "q.Shelter.admit(String)", "self"),
                                                   ("report", "q.Shelter.report(Animal)", "self")]
    assert _calls(zoo, "p.Animal.describe()") == [("name", "p.Animal.name()", "self"),
                                                 ("sound", "p.Animal.sound()", "self")]
    assert _calls(zoo, "p.Pet.greet()") == [("owner", "p.Pet.owner()", "self")]
    # a local shadows the field of the same name (6.4.1): `name.trim()` is String's
    assert _calls(zoo, "p.Cat.sound()") == [("name.trim", "java.lang.String.trim", "external")]


def test_constructors_by_arity_and_chaining(zoo):
    assert _calls(zoo, "p.Animal.of(String)") == [("Cat", "p.Cat.<init>()", "type"), ("Dog", "p.Dog.<init>()", "type"),
                                                 ("kind.equals", "java.lang.String.equals", "external")]
    assert _calls(zoo, "p.Dog.<init>()") == [("super", "p.Animal.<init>(String)", "super")]
    assert _calls(zoo, "p.Cat.<init>()") == [("this", "p.Cat.<init>(String)", "self")]
    assert _calls(zoo, "p.Cat.<init>(String)") == [("super", "p.Animal.<init>(String)", "super")]


def test_type_names_by_the_scoping_rules(zoo):
    """JLS 6.4.1: a single-type import shadows the package's class of that name, which shadows an
    on-demand import's."""
    assert _calls(zoo, "q.Zoo.f()") == [("b.bounce", "p.Ball.bounce()", "type"), ("d.bark", "q.Dog.bark()", "type")]
    assert _calls(zoo, "q.Yard.f()") == [("d.sound", "p.Dog.sound()", "type")]
    bases = dict(((c, b), r) for c, b, r in zoo.execute(
        "SELECT class_qualname, base_text, resolved_base FROM inheritance").fetchall())
    assert bases == {("p.Dog", "Animal"): "p.Animal", ("p.Dog", "Pet"): "p.Pet", ("p.Cat", "Animal"): "p.Animal"}
    assert zoo.execute("SELECT base_qualnames FROM classes WHERE qualname = 'p.Dog'").fetchone() == (
        ["p.Animal", "p.Pet"],)
    imports = {(m, n): (q, r) for m, n, q, r in zoo.execute(
        "SELECT imported_module, name, resolved_qualname, resolution FROM imports i JOIN files f USING (file_id) "
        "WHERE f.path LIKE '%Shelter.java'").fetchall()}
    assert imports == {("p", "Animal"): ("p.Animal", "definition"), ("p", "Dog"): ("p.Dog", "definition"),
                       ("java.util", "List"): (None, None), ("java.util", "ArrayList"): (None, None),
                       ("p.Animal", "of"): ("p.Animal.of(String)", "definition")}


def _indexed_zoo(tmp_path):
    root = tmp_path / "zoo"
    for path, text in _ZOO.items():
        (root / "src/main/java" / path).parent.mkdir(parents=True, exist_ok=True)
        (root / "src/main/java" / path).write_text(text)
    db = tmp_path / "g.duckdb"
    index_repository(root, db, embed=False, libraries=False)
    return root, db


def _assert_as_rebuilt(con, rebuilt):
    """Every resolved row of the updated graph (`con`) is the rebuild's."""
    con.execute(f"ATTACH '{rebuilt}' AS rebuilt (READ_ONLY)")
    for table, columns in (("calls", "caller_qualname, line, col, callee_text, resolved_callee, resolution"),
                           ("imports", "module, line, name, resolved_qualname, resolution"),
                           ("inheritance", "class_qualname, base_text, resolved_base"),
                           ("classes", "qualname, base_qualnames")):
        updated = con.execute(f"SELECT {columns} FROM main.{table} ORDER BY ALL").fetchall()
        assert updated == con.execute(f"SELECT {columns} FROM rebuilt.{table} ORDER BY ALL").fetchall(), table


def _assert_update_is_a_rebuild(root: Path, db: Path, rebuilt: Path) -> None:
    """Build the tree afresh into `rebuilt` and hold the updated graph `db` to it."""
    index_repository(root, rebuilt, embed=False, libraries=False, full=True)
    con = duckdb.connect(str(db), read_only=True)
    try:
        _assert_as_rebuilt(con, rebuilt)
    finally:
        con.close()


def test_an_edit_that_keeps_a_java_file_s_interface_resolves_that_file_alone(tmp_path):
    """A method's body changed: no other file reads it, so no other file is resolved again; the
    graph is still what a rebuild makes. A signature changed: the files whose answers read that
    method's name in its class (the `reads` table) are, and no other."""
    root, db = _indexed_zoo(tmp_path)
    dog = root / "src/main/java/p/Dog.java"
    dog.write_text(dog.read_text().replace("ball.roll(", "ball.bounce().roll(", 1))
    report = index_repository(root, db, embed=False, libraries=False)
    assert report.mode == "update" and report.reresolved == 0
    rebuilt = tmp_path / "rebuilt.duckdb"
    index_repository(root, rebuilt, embed=False, libraries=False, full=True)
    con = duckdb.connect(str(db), read_only=True)
    try:
        _assert_as_rebuilt(con, rebuilt)
        assert ("ball.bounce", "p.Ball.bounce()", "type") in _calls(con, "p.Dog.fetch(Ball)")
    finally:
        con.close()
    ball = root / "src/main/java/p/Ball.java"
    ball.write_text(ball.read_text().replace("Ball bounce()", "Ball bounce(int height)"))
    # a signature changed: the files whose answers read Ball's bounce are resolved again, no other
    con = duckdb.connect(str(db), read_only=True)
    try:
        readers = {r[0] for r in con.execute("SELECT DISTINCT f.path FROM reads r JOIN files f USING (file_id) "
                                             "WHERE key = 'member:p.Ball#bounce' AND f.path <> 'src/main/java/p/Ball.java'"
                                             ).fetchall()}
    finally:
        con.close()
    assert readers and len(readers) < len(_ZOO) - 1
    assert index_repository(root, db, embed=False, libraries=False).reresolved == len(readers)
    _assert_update_is_a_rebuild(root, db, rebuilt)


def test_an_update_resolves_the_java_files_again(tmp_path):
    root, db = _indexed_zoo(tmp_path)
    # the two-int overload goes, and the String one takes any CharSequence now
    (root / "src/main/java/p/Ball.java").write_text(
        "package p;\npublic class Ball { void roll(int n) {} void roll(CharSequence where) {} "
        "Ball bounce() { return this; } }\n")
    report = index_repository(root, db, embed=False, libraries=False)
    assert report.mode == "update" and 0 < report.reresolved < len(_ZOO) - 1  # the readers of Ball's roll
    rebuilt = tmp_path / "rebuilt.duckdb"
    index_repository(root, rebuilt, embed=False, libraries=False)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert _calls(con, "p.Dog.fetch(Ball)") == [("ball.roll", "", ""),  # no roll(int, int) any more
                                                   ("ball.roll", "p.Ball.roll(CharSequence)", "type"),
                                                   ("ball.roll", "p.Ball.roll(int)", "type")]
        _assert_as_rebuilt(con, rebuilt)
    finally:
        con.close()


def test_overloads_by_the_phases_of_method_invocation(tmp_path):
    """JLS 15.12.2: applicable by subtyping and primitive widening first (phase 1), then with
    boxing (2), then by variable arity (3); among the applicable ones the most specific (15.12.2.5).
    And 8.8.7: a constructor that calls neither this() nor super() calls super()."""
    tree = tmp_path / "src/main/java/r"
    tree.mkdir(parents=True)
    (tree / "Base.java").write_text("package r;\npublic class Base { public Base() {} public Base(int n) {} }\n")
    (tree / "Kid.java").write_text("package r;\npublic class Kid extends Base { Kid() { } Kid(int n) { super(n); } }\n")
    (tree / "Over.java").write_text("""package r;
import java.io.IOException;
public class Over {
    void f(int x) {} void f(long x) {} void f(double[] xs) {} void f(Object o) {} void f(String s) {}
    void g(Integer i) {} void g(Number n, int k) {}
    void h(int... xs) {}
    void run(IOException e) {
        f(1); f(1L); f('c'); f(new double[2]); f("s"); f(e); g(3); h(1, 2, 3);
        byte b = 1; f(b); f(b + 1.5);
    }
}
""")
    db = tmp_path / "g.duckdb"
    index_repository(tmp_path, db, embed=False, libraries=False)
    con = duckdb.connect(str(db), read_only=True)
    try:
        run = con.execute("SELECT arguments[1], resolved_callee FROM calls WHERE caller_qualname = 'r.Over.run(IOException)'"
                          " ORDER BY line, col").fetchall()
        assert run == [("1", "r.Over.f(int)"), ("1L", "r.Over.f(long)"), ("'c'", "r.Over.f(int)"),
                       ("new double[2]", "r.Over.f(double[])"), ('"s"', "r.Over.f(String)"), ("e", "r.Over.f(Object)"),
                       ("3", "r.Over.g(Integer)"), ("1", "r.Over.h(int[])"), ("b", "r.Over.f(int)"),
                       ("b + 1.5", "r.Over.f(Object)")]  # a double boxes to Double, an Object (phase 2)
        assert _calls(con, "r.Kid.<init>()") == [("super", "r.Base.<init>()", "implicit")]
        assert _calls(con, "r.Kid.<init>(int)") == [("super", "r.Base.<init>(int)", "super")]
    finally:
        con.close()


def test_an_anonymous_class_reads_the_locals_of_the_method_around_it(tmp_path):
    """JLS 15.9.5, 8.1.3: an anonymous class's code sees the effectively final locals and
    parameters of the method it is written in."""
    tree = tmp_path / "src/main/java/s"
    tree.mkdir(parents=True)
    (tree / "Adapter.java").write_text("package s;\npublic class Adapter { public int read() { return 1; } }\n")
    (tree / "Maker.java").write_text(
        "package s;\npublic class Maker {\n  Runnable make(final Adapter inner) {\n"
        "    Adapter other = new Adapter();\n"
        "    return new Runnable() { public void run() { inner.read(); other.read(); } };\n  }\n}\n")
    db = tmp_path / "g.duckdb"
    index_repository(tmp_path, db, embed=False, libraries=False)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert _calls(con, "s.Maker$1.run()") == [("inner.read", "s.Adapter.read()", "type"),
                                                 ("other.read", "s.Adapter.read()", "type")]
    finally:
        con.close()


def test_broken_java_that_types_itself_in_a_circle_still_indexes(tmp_path):
    tree = tmp_path / "src/main/java/t"
    tree.mkdir(parents=True)
    (tree / "Loop.java").write_text("package t;\nclass Loop {\n  void f() {\n    var a = b;\n    var b = a;\n"
                                    "    a.go(); b.go(a.next().next());\n  }\n  Loop next() { return this; }\n}\n")
    (tree / "Cycle.java").write_text("package t;\nclass A extends B { void g() { h(); } }\nclass B extends A { }\n")
    db = tmp_path / "g.duckdb"
    index_repository(tmp_path, db, embed=False, libraries=False)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert _calls(con, "t.Loop.f()") == [("a.go", "", ""), ("a.next", "", ""), ("a.next().next", "", ""),
                                             ("b.go", "", "")]
        assert _calls(con, "t.A.g()") == [("h", "", "")]
    finally:
        con.close()


@pytest.mark.skipif(shutil.which("java") is None, reason="needs a JDK (.ci/run installs one)")
def test_the_jdks_types_choose_overloads_and_type_chains(tmp_path, monkeypatch):
    """With a JDK on the PATH its public types are read once into the cache folder (jdk.py): a
    StringReader is a Reader, Collection.iterator() returns an Iterator, String.length() an int,
    System.out is a PrintStream."""
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    jdk_types.cache_clear()
    tree = tmp_path / "repo/src/main/java/u"
    tree.mkdir(parents=True)
    (tree / "Loader.java").write_text("""package u;
import java.io.*;
import java.util.*;
class Loader {
    void load(Reader r) {} void load(File f) {}
    void join(Iterator<String> it) {} void join(Iterable<String> xs) {}
    void take(int n) {} void take(String s) {}
    void run(List<String> xs) {
        load(new StringReader("x")); join(xs.iterator()); join(xs); take("a".trim().length()); System.out.println("x");
    }
}
""")
    db = tmp_path / "g.duckdb"
    try:
        index_repository(tmp_path / "repo", db, embed=False, libraries=False)
        assert list((tmp_path / "cache" / "jdk").glob("*.tsv"))
    finally:
        jdk_types.cache_clear()
    con = duckdb.connect(str(db), read_only=True)
    try:
        run = con.execute("SELECT callee_text, resolved_callee FROM calls WHERE caller_qualname = 'u.Loader.run(List)'"
                          " AND resolved_callee LIKE 'u.%' OR callee_text = 'System.out.println' ORDER BY line, col"
                          ).fetchall()
        assert run == [("load", "u.Loader.load(Reader)"), ("join", "u.Loader.join(Iterator)"),
                       ("join", "u.Loader.join(Iterable)"), ("take", "u.Loader.take(int)"),
                       ("System.out.println", "java.io.PrintStream.println")]
    finally:
        con.close()


def test_a_package_named_build_below_a_source_root_is_indexed(tmp_path):
    """`build/` at a project's top is Gradle's output; `org/x/build/` below src/main/java is a package."""
    (tmp_path / "src/main/java/org/x/build").mkdir(parents=True)
    (tmp_path / "src/main/java/org/x/build/Origin.java").write_text("package org.x.build;\npublic class Origin {}\n")
    (tmp_path / "build/generated/sources").mkdir(parents=True)
    (tmp_path / "build/generated/sources/Gen.java").write_text("class Gen {}\n")
    db = tmp_path / "g.duckdb"
    index_repository(tmp_path, db, embed=False, libraries=False)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT path, module FROM files").fetchall() == [
            ("src/main/java/org/x/build/Origin.java", "org.x.build.Origin")]
    finally:
        con.close()


def test_a_type_variable_is_its_bound(tmp_path):
    """JLS 4.6: a type variable's erasure is its first bound, so a builder's `B extends
    Builder<B>` chains through Builder's methods; a method's own type parameter shadows a class of
    its name (6.4.1)."""
    tree = tmp_path / "src/main/java/v"
    tree.mkdir(parents=True)
    (tree / "Builder.java").write_text("""package v;
public abstract class Builder<T, B extends Builder<T, B>> {
    public B setName(String n) { return asThis(); }
    public B setSize(int s) { return asThis(); }
    protected B asThis() { return null; }
    public abstract T get();
}
""")
    (tree / "Item.java").write_text("""package v;
class Item { void use() {} }
class ItemBuilder extends Builder<Item, ItemBuilder> {
    public Item get() { return new Item(); }
    static void make() { new ItemBuilder().setName("a").setSize(2); }
    <Item extends Builder<String, ?>> void shadow(Item item) { item.setSize(1); }
}
""")
    db = tmp_path / "g.duckdb"
    index_repository(tmp_path, db, embed=False, libraries=False)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert _calls(con, "v.ItemBuilder.make()") == sorted([
            ("ItemBuilder", "v.ItemBuilder.<init>()", "type"),
            ('new ItemBuilder().setName("a").setSize', "v.Builder.setSize(int)", "type"),
            ("new ItemBuilder().setName", "v.Builder.setName(String)", "type")])
        assert _calls(con, "v.ItemBuilder.shadow(Item)") == [("item.setSize", "v.Builder.setSize(int)", "type")]
    finally:
        con.close()


# Edits of a file's interface, each answered differently by some other file (JLS 6.4.1 shadowing,
# 15.12.2 overloads, 8.1.4-8.1.5 bases, 7.5 imports): path -> new text (None: the file deleted).
_INTERFACE_EDITS = [
    {"q/Ball.java": "package q;\nclass Ball { void bounce() {} }\n"},  # the package's Ball beats p.* in Zoo
    {"p/Ball.java": "package p;\npublic class Ball { void roll(long n) {} void roll(int a, int b) {} "
                    "void roll(String where) {} Ball bounce() { return this; } }\n"},  # roll(1) widens now
    {"p/Dog.java": _ZOO["p/Dog.java"].replace(" implements Pet", "")},  # lead.greet() has no method now
    {"q/Shelter.java": _ZOO["q/Shelter.java"].replace("    class Room {", "    class Dog { void sound() {} }\n"
                                                      "    class Room {")},  # a member type beats the import
    {"q/Dog.java": None},  # Zoo's Dog is p.Dog now (on demand)
    {"q/Yard.java": "package q;\nimport p.*;\nclass Yard { Dog d; void f() { d.sound(); } }\n"},
    {"p/Animal.java": _ZOO["p/Animal.java"].replace(
        "    public static Animal of(String kind)", "    public static Dog of(Object kind) { return null; }\n"
        "    public static Animal of(String kind)")},  # a second `of`: the static import has two
    {"q/Dog.java": "package q;\nclass Dog { void bark() {} }\n"},  # back: Zoo's Dog is q.Dog again
]


def test_updates_after_interface_edits_equal_rebuilds_and_resolve_only_the_readers(tmp_path):
    """An update resolves again the files whose answers read a fact that changed (the `reads`
    table), and the graph after each edit is what a rebuild of the same tree makes."""
    root, db = _indexed_zoo(tmp_path)
    fewer = 0
    for number, edit in enumerate(_INTERFACE_EDITS):
        for path, text in edit.items():
            target = root / "src/main/java" / path
            if text is None:
                target.unlink()
            else:
                target.write_text(text)
        report = index_repository(root, db, embed=False, libraries=False)
        assert report.mode == "update"
        fewer += report.reresolved < len(list(root.rglob("*.java"))) - 1
        rebuilt = tmp_path / f"rebuilt-{number}.duckdb"
        index_repository(root, rebuilt, embed=False, libraries=False, full=True)
        con = duckdb.connect(str(db), read_only=True)
        try:
            _assert_as_rebuilt(con, rebuilt)
            fresh = duckdb.connect(str(rebuilt), read_only=True)
            try:  # the facts each file read, too: the next update reads them
                assert sorted(con.execute("SELECT f.path, key FROM reads JOIN files f USING (file_id)").fetchall()) \
                    == sorted(fresh.execute("SELECT f.path, key FROM reads JOIN files f USING (file_id)").fetchall())
            finally:
                fresh.close()
        finally:
            con.close()
    assert fewer >= len(_INTERFACE_EDITS) // 2


@pytest.mark.parametrize("edited", ["src/main/java/p/Ball.java", "copy/src/main/java/p/Ball.java"])
def test_an_update_of_a_class_two_modules_define_equals_a_rebuild(tmp_path, edited):
    """Two modules' copies of p.Ball (a multi-module build's): an update that edits either one
    resolves as a rebuild does, whichever file the build reads first."""
    root, db = _indexed_zoo(tmp_path)
    copy = root / "copy/src/main/java/p/Ball.java"
    copy.parent.mkdir(parents=True)
    copy.write_text("package p;\npublic class Ball { void roll(long n) {} Ball spin() { return this; } }\n")
    (root / "copy/pom.xml").write_text("<project><modelVersion>4.0.0</modelVersion></project>\n")
    index_repository(root, db, embed=False, libraries=False, full=True)
    path = root / edited
    path.write_text(path.read_text().replace("Ball ", "Ball edited() { return this; } Ball ", 1))
    assert index_repository(root, db, embed=False, libraries=False).mode == "update"
    _assert_update_is_a_rebuild(root, db, tmp_path / "rebuilt.duckdb")

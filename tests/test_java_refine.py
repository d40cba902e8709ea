"""Refine writing Java: the model's answer read and spliced into the file, javac's messages to
cards, and the task's tests through Maven behind the fence.

The end-to-end test needs a JDK, Maven and Maven Central (JUnit and surefire for a tiny project;
.ci/run installs the JDK and Maven)."""

import json
import re
import shutil
from pathlib import Path

import pytest

from codegraph.languages import language
from codegraph.languages.base import Unsupported
from codegraph.languages.java import maven
from codegraph.llm import ScriptedModel
from codegraph.refine.loop import refine
from codegraph.refine.task import TaskError, task_from_dict

JAVA = language("java")

CART = """\
package com.ex;

import java.util.ArrayList;
import java.util.List;

public class Cart {
    private final List<Integer> prices = new ArrayList<>();

    public void add(int cents) {
        prices.add(cents);
    }

    public void add(int cents, int times) {
        for (int i = 0; i < times; i++) {
            add(cents);
        }
    }

    /** The total. */
    public String total() {
        return "";
    }
}
"""


def test_an_answer_block_that_declares_the_symbol_is_taken():
    answer = ("First a helper:\n```java\nclass Helper {}\n```\nThen the class:\n```java\npackage com.ex;\n\n"
              "public class Cart {\n    int n;\n}\n```\n```python\nclass Cart: pass\n```")
    assert JAVA.code_from_answer(answer, "Cart") == "package com.ex;\n\npublic class Cart {\n    int n;\n}\n"
    # a member: its declaration, not a call of it
    member = "```java\nint x = total();\n```\n```java\npublic String total() {\n    return \"1\";\n}\n```"
    assert JAVA.code_from_answer(member, "Cart.total").startswith("public String total()")
    assert JAVA.code_from_answer("no code here", "Cart") is None
    assert JAVA.code_from_answer("public class Cart {}\n", "Cart") == "public class Cart {}\n"  # no fence


def test_a_whole_class_replaces_the_file_s_and_brings_its_imports():
    # a whole file, as RepoClassBench's ground truth is: its licence header and package line go
    code = ("/*\n * Licensed under the Apache License.\n */\npackage com.ex;\n\nimport java.util.List;\n"
            "import java.util.stream.Collectors;\n\npublic class Cart {\n    public String total() { return \"\"; }\n}\n")
    spliced = JAVA.splice("// The shop's own header.\n" + CART, "Cart", code)
    lines = spliced.text.split("\n")
    assert lines.count("package com.ex;") == 1 and lines.count("import java.util.List;") == 1
    assert spliced.import_lines == (6,) and lines[5] == "import java.util.stream.Collectors;"
    assert lines[spliced.first_line - 1] == "public class Cart {" and lines[spliced.last_line - 1] == "}"
    assert "prices" not in spliced.text and "Licensed" not in spliced.text  # the file's own header stays
    # a file without a header (a task's emptied class) takes the answer's: a build may check it
    bare = JAVA.splice("package com.ex;\n\npublic class Cart {\n}\n", "Cart", code)
    assert bare.text.startswith("/*\n * Licensed under the Apache License.\n */\npackage com.ex;\n")
    assert bare.text.split("\n")[bare.first_line - 1] == "public class Cart {" and bare.import_lines == (6, 7)
    # and the answer's import block as written: its groups, with the blank line between them
    grouped = JAVA.splice("package com.ex;\n\npublic class Cart {\n}\n", "Cart",
                          "import com.ex.util.Money;\n\nimport java.util.List;\n\npublic class Cart {\n}\n")
    assert grouped.text.startswith("package com.ex;\n\nimport com.ex.util.Money;\n\nimport java.util.List;\n\n")
    assert grouped.import_lines == (3, 5)


def test_a_method_replaces_its_overload_or_is_added_to_its_class():
    # the overload with the same parameter types, with the Javadoc above it when the answer brings one
    two = JAVA.splice(CART, "Cart.add", "public void add(int cents, int times) {\n    prices.add(cents * times);\n}\n")
    assert "prices.add(cents * times);" in two.text and "for (int i" not in two.text
    assert "public void add(int cents) {\n        prices.add(cents);" in two.text
    total = JAVA.splice(CART, "Cart.total", "/** Formatted. */\npublic String total() {\n    return \"0.00\";\n}\n")
    assert "The total." not in total.text and "    /** Formatted. */\n    public String total() {" in total.text
    lines = total.text.split("\n")
    assert lines[total.first_line - 1] == "    /** Formatted. */" and lines[total.last_line - 1] == "    }"
    added = JAVA.splice(CART, "Cart.clear", "public void clear() {\n    prices.clear();\n}\n")
    assert added.text.rstrip().endswith("    public void clear() {\n        prices.clear();\n    }\n}")
    assert JAVA.definition_of(added.text, "Cart.clear") == "    public void clear() {\n        prices.clear();\n    }"
    with pytest.raises(ValueError, match="Basket"):
        JAVA.splice(CART, "Basket.total", "int total() { return 0; }")
    # a file with no imports gets its first one after the package line
    bare = JAVA.splice("package com.ex;\n\npublic class A {\n}\n", "A", "import java.util.List;\n\npublic class A {\n"
                       "    List<String> names;\n}\n")
    assert bare.text.startswith("package com.ex;\n\nimport java.util.List;\n\npublic class A {")
    assert JAVA.import_insert_line(CART) == 4


def _maven_repo(root: Path, modules: tuple[str, ...] = ()) -> Path:
    (root / "pom.xml").write_text("<project/>")
    for module in modules:
        (root / module / "src" / "test" / "java" / "a").mkdir(parents=True)
        (root / module / "pom.xml").write_text("<project/>")
        (root / module / "src" / "test" / "java" / "a" / "FooTest.java").write_text("package a; class FooTest {}")
        (root / module / "src" / "test" / "java" / "a" / "Foo,*.java").write_text("package a;")
    return root


def test_java_tests_become_one_maven_selection(tmp_path):
    repo = _maven_repo(tmp_path, ("core", "web"))
    chosen = maven.selection(repo, ["core/src/test/java/a/FooTest.java::adds", "core/src/test/java/a/FooTest.java"])
    assert (chosen.top, chosen.module, chosen.tests) == (repo.resolve(), "core", "FooTest#adds,FooTest")
    for tests, message in ((["core/src/test/java/a/FooTest.java", "web/src/test/java/a/FooTest.java"], "2 Maven modules"),
                           (["core/src/test/java/a/FooTest.java::a,b"], "not a method name"),
                           (["core/pom.xml"], "give a Java test file"),
                           (["core/src/test/java/a/Foo,*.java"], "not named as a Java class is")):
        with pytest.raises(Unsupported, match=message):
            maven.selection(repo, tests)
    assert "-Xmx1024m" in maven.jvm_options(4096)
    # surefire's counts as 3.x and as 2.x print them (imglib's build pins 2.12.4)
    for output, counts in (("[INFO] Tests run: 3, Failures: 0\n", ["3"]), ("Tests run: 4, Failures: 0, Errors: 0\n", ["4"]),
                           ("Running a.FooTest\nno count\n", [])):
        assert re.findall(maven.TESTS_RAN, output, re.M) == counts


def test_a_task_may_not_set_the_jvm_options_the_fence_sizes(tmp_path):
    (tmp_path / "A.java").write_text("public class A {}\n")
    with pytest.raises(TaskError, match="JAVA_TOOL_OPTIONS"):
        task_from_dict({"repo": str(tmp_path), "target_file": "A.java", "symbol": "A", "description": "d",
                        "env": {"JAVA_TOOL_OPTIONS": "-javaagent:x.jar"}})


POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.ex</groupId>
  <artifactId>shop</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>5.10.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.11.0</version>
      </plugin>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
        <version>3.2.5</version>
      </plugin>
    </plugins>
  </build>
</project>
"""
MONEY = """\
package com.ex.util;

public final class Money {
    private Money() {}

    public static String format(int cents) {
        return String.format("%d.%02d", cents / 100, cents % 100);
    }
}
"""
TEST = """\
package com.ex;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class CartTest {
    @Test
    void totalIsFormatted() {
        Cart cart = new Cart();
        cart.add(150);
        cart.add(275);
        assertEquals("4.25", cart.total());
    }
}
"""
TOTAL = "import com.ex.util.Money;\n\npublic String total() {\n    return Money.{call}(prices.stream().mapToInt({sum}).sum());\n}\n"


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("mvn") is None,
                    reason="needs a JDK and Maven (.ci/run installs both), and Maven Central")
def test_refine_writes_java_from_javac_s_cards_and_maven_s_failures(tmp_path):
    repo = tmp_path / "shop"
    for rel, text in {"pom.xml": POM, "src/main/java/com/ex/Cart.java": CART,
                      "src/main/java/com/ex/util/Money.java": MONEY, "src/test/java/com/ex/CartTest.java": TEST}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    invented = TOTAL.replace("{call}", "fmt").replace("{sum}", "Integer::intValue")
    wrong = TOTAL.replace("{call}", "format").replace("{sum}", "c -> c * 2")
    right = TOTAL.replace("{call}", "format").replace("{sum}", "Integer::intValue")
    model = ScriptedModel([f"```java\n{invented}```", f"```java\n{wrong}```", f"```java\n{right}```"])
    task = task_from_dict({"repo": str(repo), "target_file": "src/main/java/com/ex/Cart.java", "symbol": "Cart.total",
                           "description": "Return the sum of the prices formatted as money.",
                           "tests": ["src/test/java/com/ex/CartTest.java"], "mode": "cocogen",
                           "limits": {"test_seconds": 300}})
    result = refine(task, model)
    assert result.success, json.dumps(result.to_dict(), indent=1)[-3000:]
    first, second, third = result.iterations
    assert "```java" in model.calls[0][0]["content"] and "Java code" in model.calls[0][0]["content"]
    # javac: Money has no fmt; its card names the method that exists
    assert [d["symbol"] for d in first.diagnostics] == ["cant.resolve.location.args"]
    assert "com.ex.util.Money.format" in model.calls[1][-1]["content"]
    # Maven, behind the fence: the failing assertion goes back to the model
    assert second.tests["passed"] is False and "expected: <4.25> but was: <8.50>" in model.calls[2][-1]["content"]
    assert third.tests["passed"] is True and third.tests["isolation"] == result.isolation
    assert "+        return Money.format(prices.stream().mapToInt(Integer::intValue).sum());" in result.diff
    assert "+import com.ex.util.Money;" in result.diff and "/** The total. */" in result.diff
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()} == before


def test_java_tests_refine_cannot_run_are_refused_before_the_model_is_asked(tmp_path):
    repo = _maven_repo(tmp_path, ("core", "web"))
    (repo / "core" / "src" / "main" / "java" / "a").mkdir(parents=True)
    (repo / "core" / "src" / "main" / "java" / "a" / "A.java").write_text("package a;\n\npublic class A {}\n")
    model = ScriptedModel([])
    task = task_from_dict({"repo": str(repo), "target_file": "core/src/main/java/a/A.java", "symbol": "A",
                           "description": "d", "tests": ["core/src/test/java/a/FooTest.java",
                                                         "web/src/test/java/a/FooTest.java"]})
    with pytest.raises(Unsupported, match="give tests of one module"):
        refine(task, model)
    assert model.calls == []


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs a JDK (.ci/run installs one)")
@pytest.mark.parametrize("mistake,repair", [
    ("import com.ex.util.Money;\n\npublic String total() {\n    return Money.formt(0);\n}\n", ".formt -> .format"),
    ("public String total() {\n    return Money.format(0);\n}\n", "import com.ex.util.Money;"),
    ("import com.ex.utils.Money;\n\npublic String total() {\n    return Money.format(0);\n}\n",
     "com.ex.utils.Money -> com.ex.util.Money"),
    ("import com.ex.util.Money;\n\npublic String total() {\n    return Money.format(prises.size());\n}\n",
     "prises -> prices"),
])
def test_the_offline_generator_repairs_near_misses_and_imports_from_javac_s_cards(tmp_path, mistake, repair):
    repo = tmp_path / "shop"
    for rel, text in {"src/main/java/com/ex/Cart.java": CART, "src/main/java/com/ex/util/Money.java": MONEY}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    task = task_from_dict({"repo": str(repo), "target_file": "src/main/java/com/ex/Cart.java", "symbol": "Cart.total",
                           "description": "d", "starting_code": mistake})
    result = refine(task)
    assert result.success, [(it.diagnostics, it.repairs) for it in result.iterations]
    assert any(repair in done for done in result.iterations[0].repairs), result.iterations[0].repairs
    assert "import com.ex.util.Money;" in result.code and "Money.format(" in result.code
    if repair == ".formt -> .format":  # an invented name (no near miss) is left to a model: no guess
        invented = task_from_dict({"repo": str(repo), "target_file": "src/main/java/com/ex/Cart.java",
                                   "symbol": "Cart.total", "description": "d",
                                   "starting_code": mistake.replace("formt(", "render(")})
        assert refine(invented).stop_reason == "no repair found"


LOMBOK_POM = POM.replace("""    <dependency>
      <groupId>org.junit.jupiter</groupId>""", """    <dependency>
      <groupId>org.projectlombok</groupId>
      <artifactId>lombok</artifactId>
      <version>1.18.30</version>
      <scope>provided</scope>
    </dependency>
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-api</artifactId>
      <version>2.0.9</version>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>""")


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("mvn") is None,
                    reason="needs a JDK and Maven (.ci/run installs both), and Maven Central (Lombok)")
def test_javac_sees_what_lombok_generates_in_the_file_and_in_the_classes_it_uses(tmp_path, monkeypatch):
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "shop"
    files = {"pom.xml": LOMBOK_POM,
             "src/main/java/com/ex/Item.java": "package com.ex;\n\nimport lombok.Getter;\n\n@Getter\npublic class Item {\n"
                                               "    private final String name = \"a\";\n    private final Price price = new Price();\n}\n",
             "src/main/java/com/ex/Price.java": "package com.ex;\n\n@lombok.Data\npublic class Price {\n    private int cents;\n}\n",
             "src/main/java/com/ex/Shop.java": "package com.ex;\n\nimport lombok.extern.slf4j.Slf4j;\n\n@Slf4j\npublic class Shop {\n"
                                               "    public String show(Item item) {\n        log.info(\"show\");\n"
                                               "        int c = item.getPrice().getCents();\n"
                                               "        return item.getName() + item.getNme() + c;\n    }\n}\n"}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    checker = JAVA.checker()
    try:
        found = checker.lint(repo / "src/main/java/com/ex/Shop.java")
    finally:
        checker.close()
    # log (@Slf4j), getName (@Getter on Item), getPrice().getCents() (@Data on Price, read through Item) exist;
    # the misspelt getter does not
    assert [(d.line, d.symbol) for d in found] == [(10, "cant.resolve.location.args")], found
    assert "getNme" in found[0].message


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("mvn") is None,
                    reason="needs a JDK and Maven (.ci/run installs both), and Maven Central")
def test_a_module_that_needs_its_reactor_s_other_modules_is_checked_against_them(tmp_path, monkeypatch):
    """Maven resolves a sibling module only in a reactor build: the classpath is asked of a copy of
    the poms, and the sibling's sources are read; the repository is not written to."""
    monkeypatch.setenv("CODEGRAPH_CACHE", str(tmp_path / "cache"))
    repo = tmp_path / "shop"
    parent = ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
              '<groupId>com.ex</groupId><artifactId>parent</artifactId><version>1.0</version><packaging>pom</packaging>'
              '<modules><module>core</module><module>app</module></modules>'
              '<properties><maven.compiler.release>17</maven.compiler.release></properties></project>')
    child = ('<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
             '<parent><groupId>com.ex</groupId><artifactId>parent</artifactId><version>1.0</version></parent>'
             '<artifactId>{name}</artifactId>{deps}</project>')
    files = {"pom.xml": parent, "core/pom.xml": child.format(name="core", deps=""),
             "app/pom.xml": child.format(name="app", deps="<dependencies><dependency><groupId>com.ex</groupId>"
                                                           "<artifactId>core</artifactId><version>1.0</version>"
                                                           "</dependency></dependencies>"),
             "core/src/main/java/com/ex/core/Money.java": MONEY.replace("com.ex.util", "com.ex.core"),
             "app/src/main/java/com/ex/app/Shop.java": "package com.ex.app;\n\nimport com.ex.core.Money;\n\n"
                                                       "public class Shop {\n    String show() {\n"
                                                       "        return Money.format(1) + Money.fromat(2);\n    }\n}\n"}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    before = sorted(p.relative_to(repo) for p in repo.rglob("*"))
    checker = JAVA.checker()
    try:
        found = checker.lint(repo / "app/src/main/java/com/ex/app/Shop.java")
    finally:
        checker.close()
    assert [(d.line, d.symbol) for d in found] == [(7, "cant.resolve.location.args")] and "fromat" in found[0].message
    assert sorted(p.relative_to(repo) for p in repo.rglob("*")) == before


@pytest.mark.skipif(shutil.which("javac") is None or shutil.which("mvn") is None,
                    reason="needs a JDK and Maven (.ci/run installs both), and Maven Central")
def test_a_java_test_run_that_ran_no_test_is_not_a_pass(tmp_path):
    repo = tmp_path / "shop"
    empty = TEST.replace("    @Test\n", "")  # a test class whose method is no test: Maven exits 0, no test ran
    for rel, text in {"pom.xml": POM, "src/main/java/com/ex/Cart.java": CART,
                      "src/main/java/com/ex/util/Money.java": MONEY, "src/test/java/com/ex/CartTest.java": empty}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    task = task_from_dict({"repo": str(repo), "target_file": "src/main/java/com/ex/Cart.java", "symbol": "Cart.total",
                           "description": "d", "tests": ["src/test/java/com/ex/CartTest.java"],
                           "starting_code": "public String total() {\n    return \"4.25\";\n}\n",
                           "limits": {"test_seconds": 300}})
    result = refine(task)
    tests = result.iterations[-1].tests
    assert not result.success and tests["returncode"] == 0 and not tests["passed"]
    assert "codegraph: no test ran" in tests["output"]
    assert "[INFO] Download" not in tests["output"] and "Tests run: 0" in tests["output"]

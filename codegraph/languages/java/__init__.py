"""Java: tree-sitter-java for the rows (extract.py), names resolved through declared types
(resolve.py), the JDK's public types read from the JDK on the PATH (jdk.py), the JDK's API and
the project's dependency jars as the library layer (library.py: stubs of their declarations),
javac as the checker (check.py) and its messages' rule table (rules.py). A name in no layer
resolves to its dotted path (`external`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable, Iterable

from . import maven
from ..base import FileFacts, Language, Library, Resolution, Spliced, TestPlan, register
from ..checks import Checker, Diagnostic, Rule
from .check import JavacChecker, package_of
from .library import java_library
from .rules import CATEGORIES, LOCAL_ONLY, RULES, SYNTAX_ERRORS

_TYPE_KINDS = frozenset({"class", "interface", "enum", "record", "annotation"})
_IMPORT = re.compile(r"^\s*import\s+(static\s+)?([\w.]+?)(?:\.(\*))?\s*;", re.M)

# Where a Java file's package starts in its path: below a Maven or Gradle source root
# (`src/main/java/`, `src/test/java/`, any `src/<set>/java/`), else below a leading `src/`.
_ROOT_MARKER = "java"


def source_root(parts: list[str]) -> int | None:
    """Where the package path starts among a path's folders: after `src/<set>/java`."""
    for at in range(len(parts) - 1, -1, -1):
        if parts[at] == _ROOT_MARKER and at >= 2 and parts[at - 2] == "src":
            return at + 1
    return None


def module_name(rel_path: str) -> str:
    """`core/src/main/java/com/x/Foo.java` -> `com.x.Foo`: the package path and the file's name."""
    parts = rel_path[:-len(".java")].split("/")
    start = source_root(parts[:-1])
    if start is not None:
        return ".".join(parts[start:])
    if parts[0] == "src" and len(parts) > 1:
        return ".".join(parts[1:])
    return ".".join(parts)


def _splicing():
    """splice.py, which parses with the grammar: loaded when refine asks, as the extractor is."""
    from . import splice

    return splice


@register
class Java(Language):
    name = "java"
    suffixes = (".java",)

    def source_folder(self, rel_dir: str) -> bool:
        parts = rel_dir.split("/")
        start = source_root(parts)
        return start is not None and start < len(parts)

    def module_name(self, rel_path: str, packages: set[str]) -> str:
        return module_name(rel_path)

    def module_of_file(self, path: Path) -> str:
        """`package a.b;` in Foo.java: a.b.Foo."""
        try:
            package = package_of(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            package = ""
        return f"{package}.{path.stem}" if package else path.stem

    def declaration(self, kind: str, name: str, signature: str | None, annotation: str | None = None,
                    value: str | None = None, qualname: str | None = None) -> str:
        """`static String format(int cents)`, `Item(String name, int price)`, `List<Item> items`."""
        if kind in _TYPE_KINDS:  # a signature that says what it extends, not a search hit's "()"
            return f"{kind} {name}{signature if (signature or '').startswith(' ') else ''}"
        if kind in ("package", "module"):
            return f"{kind} {qualname or name}"
        static = "static " if kind in ("staticmethod", "class_attribute") else ""
        if kind == "constructor" or name == "<init>":
            owner = (qualname or "").split(".<init>")[0].rpartition(".")[2] or name
            return f"{owner}{(signature or '()').split(' -> ')[0]}"
        if kind in ("method", "staticmethod", "function") or (signature or "").startswith("("):
            params, _, returns = (signature or "()").partition(" -> ")
            return f"{static}{returns or 'void'} {name}{params}".strip()
        field_type = annotation or ((signature or "")[1:].strip() if (signature or "").startswith(":") else "")
        head = f"{static}{field_type} {name}".strip()
        return f"{head} = {value}" if value else head

    def qualname(self, module: str, symbol: str) -> str:
        """A file's module is its class (`a.b.Foo`): what it defines is named from its package."""
        package = module.rpartition(".")[0]
        return f"{package}.{symbol}" if package else symbol

    def needs_import(self, module: str, defined_in: str) -> bool:
        """A class of the same package needs none (a file's module is its class: `a.b.Foo`)."""
        return module.rpartition(".")[0] != defined_in.rpartition(".")[0]

    def import_statement(self, module: str, name: str) -> str:
        return f"import {module if module.rpartition('.')[2] == name else f'{module}.{name}'};"

    # -- refine: a model's answer into a file, the tests through Maven ---------------------------
    def code_from_answer(self, answer: str, symbol: str) -> str | None:
        return _splicing().code_from_answer(answer, symbol)

    def splice(self, source: str, symbol: str, code: str) -> Spliced:
        return _splicing().splice(source, symbol, code)

    def definition_of(self, text: str, symbol: str) -> str:
        return _splicing().definition_of(text, symbol)

    def import_insert_line(self, text: str) -> int:
        return _splicing().import_insert_line(text)

    def check_tests(self, repo: Path, tests: list[str]) -> None:
        maven.check(repo, tests)

    def test_plan(self, repo: Path, tests: list[str], run_dir: Path, python: str, memory_mb: int) -> TestPlan:
        return maven.test_plan(repo, tests, run_dir, memory_mb)

    def prepare_tests(self, repo: Path, tests: list[str], timeout_s: float) -> str | None:
        return maven.prepare(repo, tests, timeout_s)

    # -- diagnostics: javac ------------------------------------------------------------------
    checker_name = "javac"
    categories = CATEGORIES
    syntax_errors = SYNTAX_ERRORS

    def checker(self, mode: str | None = None) -> Checker:
        return JavacChecker(CATEGORIES)

    def rules(self) -> tuple[Rule, ...]:
        return RULES

    def error_symbols(self) -> dict[str, str]:
        return {symbol: f"compiler.err.{symbol}" for symbol in (*CATEGORIES, *LOCAL_ONLY)}

    def missing_module(self, d: Diagnostic) -> str | None:
        m = re.search(r"package (\S+) does not exist", d.message) if d.symbol == "doesnt.exist" else None
        return m.group(1) if m else None

    def undefined_name(self, d: Diagnostic) -> str | None:
        m = re.search(r"symbol:\s*(?:variable|class|method)\s+([\w$]+)", d.message) \
            if d.symbol.startswith("cant.resolve") else None
        return m.group(1) if m else None

    def keep(self, diagnostics: Iterable[Diagnostic], first: int | None, last: int | None,
             import_lines: Iterable[int] = (), known_module: Callable[[str], bool] | None = None
             ) -> list[Diagnostic]:
        """As every language's, and then: a name imported from a package the checker cannot see
        but the repository imports elsewhere (a dependency missing from the classpath) is not
        reported where it is used either."""
        diagnostics = list(diagnostics)
        kept = super().keep(diagnostics, first, last, import_lines, known_module)
        unseen = {self.missing_module(d) for d in diagnostics if d.symbol == "doesnt.exist"} - \
            {self.missing_module(d) for d in kept if d.symbol == "doesnt.exist"}
        if not unseen or not kept:
            return kept
        try:
            text = Path(kept[0].path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return kept
        hidden = set()
        for static, dotted, star in _IMPORT.findall(text):
            package, _, name = dotted.rpartition(".")
            if star and (dotted in unseen or (static and package in unseen)):
                return [d for d in kept if not d.symbol.startswith("cant.resolve")]  # what `a.b.*` brings is unknown
            if package in unseen or (static and package.rpartition(".")[0] in unseen):
                hidden.add(name)
        return [d for d in kept if not (d.symbol.startswith("cant.resolve") and self.undefined_name(d) in hidden)]

    def library(self, python: str | None, root: Path | None = None) -> Library | None:
        return java_library(root) if root is not None else None

    def resolution(self) -> Resolution:
        # loaded when a build asks, as the extractor is when a Java file is read
        from .resolve import JavaResolution

        return JavaResolution()

    def extract(self, data: bytes, path: str, module: str, is_package: bool,
                budget_s: float | None = None) -> FileFacts:
        # loaded when a Java file is read: every command that imports the registry stays free of the grammar
        from .extract import extract

        return extract(data, path, module, budget_s)

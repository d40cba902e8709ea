"""Python: tree-sitter-python for the rows, the resolver in this folder for what names mean (a full
build's in resolution.py, an update's in incremental.py), the standard library and site-packages
as the library layer, pylint for diagnostics."""

from __future__ import annotations

import re
from pathlib import Path

from ...schema import CALLABLE_KINDS
from ..base import FileFacts, Language, Resolution, TestPlan, register
from ..checks import Diagnostic, Rule
from . import extract as _extract
from . import splice as _splice
from .library import PythonLibrary
from .lint import CATEGORIES, Linter, candidate_module, pylint_error_symbols
from .modules import _is_namespace, module_name
from .rules import NOT_ABOUT_CODE, RULES


@register
class Python(Language):
    name = "python"
    suffixes = (".py",)
    package_markers = frozenset({"__init__.py"})

    def package_folder(self, rel_dir: str, filenames: list[str], packages: set[str]) -> bool:
        return "__init__.py" in filenames or bool(rel_dir) and _is_namespace(rel_dir, packages)

    def module_name(self, rel_path: str, packages: set[str]) -> str:
        return module_name(rel_path, packages)

    def is_package(self, rel_path: str) -> bool:
        return rel_path.endswith("__init__.py")

    def module_of_file(self, path: Path) -> str:
        return candidate_module(path)

    def library(self, python: str | None, root: Path | None = None) -> PythonLibrary:
        return PythonLibrary(python, root)

    def resolution(self) -> Resolution:
        # loaded when a build asks: the registry (every command, the lint and query workers) stays
        # free of the resolver, pyarrow and DuckDB (0.3 s)
        from .resolving import PythonResolution

        return PythonResolution()

    def extract(self, data: bytes, path: str, module: str, is_package: bool,
                budget_s: float | None = None) -> FileFacts:
        return _extract.extract(data, path, module, is_package, budget_s)

    def declaration(self, kind: str, name: str, signature: str | None, annotation: str | None = None,
                    value: str | None = None, qualname: str | None = None) -> str:
        if kind == "class":
            return f"class {name}{signature if signature and signature != '()' else ''}"
        if kind in CALLABLE_KINDS or kind == "property-accessor":
            prefix = {"property": "@property ", "classmethod": "@classmethod ", "staticmethod": "@staticmethod "}.get(kind, "")
            return f"{prefix}def {name}{signature or '(...)'}"
        if kind == "module":
            return f"module {name}"
        head = f"{name}: {annotation}" if annotation else f"{name}{signature if signature and signature.startswith(':') else ''}"
        return f"{head} = {value}" if value else head

    def import_statement(self, module: str, name: str) -> str:
        return f"from {module} import {name}"

    def code_from_answer(self, answer: str, symbol: str) -> str | None:
        return _splice.code_from_answer(answer, symbol)

    def splice(self, source: str, symbol: str, code: str) -> _splice.Spliced:
        return _splice.splice(source, symbol, code)

    def definition_of(self, text: str, symbol: str) -> str:
        return _splice.definition_of(text, symbol)

    def import_insert_line(self, text: str) -> int:
        return _splice.import_insert_line(text)

    def test_plan(self, repo: Path, tests: list[str], run_dir: Path, python: str, memory_mb: int) -> TestPlan:
        """pytest with the task's interpreter; a src layout's code imports from src/."""
        roots = [repo / "src"] if (repo / "src").is_dir() else []
        return TestPlan([python, "-m", "pytest", "-q", "-x", "--no-header", "-p", "no:cacheprovider", *tests],
                        roots=[*roots, repo])

    # -- diagnostics: pylint's error checkers ---------------------------------------------------
    checker_name = "pylint"
    categories = CATEGORIES
    syntax_errors = frozenset({"syntax-error"})
    not_about_code = NOT_ABOUT_CODE

    def checker(self, mode: str | None = None) -> Linter:
        """`worker` (the default): pylint kept warm in a child process; `subprocess`: a cold
        `python -m pylint` per lint."""
        return Linter(mode=mode or "worker")

    def error_symbols(self) -> dict[str, str]:
        return pylint_error_symbols()

    def rules(self) -> tuple[Rule, ...]:
        return RULES

    def missing_module(self, d: Diagnostic) -> str | None:
        m = re.search(r"Unable to import '([^']+)'", d.message) if d.symbol == "import-error" else None
        return m.group(1) if m else None

    def undefined_name(self, d: Diagnostic) -> str | None:
        if d.symbol != "undefined-variable":
            return None
        quoted = d.message.split("'")
        return quoted[1] if len(quoted) > 2 else None

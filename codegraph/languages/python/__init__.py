"""Python: tree-sitter-python for the rows, the resolver in this folder for what names mean, the
standard library and site-packages as the library layer, pylint for diagnostics."""

from __future__ import annotations

from pathlib import Path

from ..base import FileFacts, Language, register
from . import extract as _extract
from . import splice as _splice
from .library import PythonLibrary
from .lint import candidate_module
from .modules import _is_namespace, module_name


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

    def library(self, python: str | None) -> PythonLibrary:
        return PythonLibrary(python)

    def extract(self, data: bytes, path: str, module: str, is_package: bool,
                budget_s: float | None = None) -> FileFacts:
        return _extract.extract(data, path, module, is_package, budget_s)

    def code_from_answer(self, answer: str, symbol: str) -> str | None:
        return _splice.code_from_answer(answer, symbol)

    def splice(self, source: str, symbol: str, code: str) -> _splice.Spliced:
        return _splice.splice(source, symbol, code)

    def definition_of(self, text: str, symbol: str) -> str:
        return _splice.definition_of(text, symbol)

    def import_insert_line(self, text: str) -> int:
        return _splice.import_insert_line(text)

"""Java: tree-sitter-java for the rows (extract.py). Resolution, the JDK and dependency jars as a
library layer, and javac's diagnostics are to come: until then a Java file's rows go in as
extracted, its calls unresolved."""

from __future__ import annotations

from pathlib import Path

from ..base import FileFacts, Language, register

# Where a Java file's package starts in its path: below a Maven or Gradle source root
# (`src/main/java/`, `src/test/java/`, any `src/<set>/java/`), else below a leading `src/`.
_ROOT_MARKER = "java"


def module_name(rel_path: str) -> str:
    """`core/src/main/java/com/x/Foo.java` -> `com.x.Foo`: the package path and the file's name."""
    parts = rel_path[:-len(".java")].split("/")
    for at in range(len(parts) - 2, -1, -1):
        if parts[at] == _ROOT_MARKER and at >= 2 and parts[at - 2] == "src":
            return ".".join(parts[at + 1:])
    if parts[0] == "src" and len(parts) > 1:
        return ".".join(parts[1:])
    return ".".join(parts)


@register
class Java(Language):
    name = "java"
    suffixes = (".java",)

    def module_name(self, rel_path: str, packages: set[str]) -> str:
        return module_name(rel_path)

    def module_of_file(self, path: Path) -> str:
        return path.stem

    def extract(self, data: bytes, path: str, module: str, is_package: bool,
                budget_s: float | None = None) -> FileFacts:
        # loaded when a Java file is read: every command that imports the registry stays free of the grammar
        from .extract import extract

        return extract(data, path, module, budget_s)

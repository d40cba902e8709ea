"""Java: tree-sitter-java for the rows (extract.py), names resolved through declared types
(resolve.py), the JDK's public types read from the JDK on the PATH (jdk.py). The JDK and
dependency jars as a library layer of the graph, and javac's diagnostics, are to come: until then
a name outside the repository resolves to its dotted path (`external`)."""

from __future__ import annotations

from pathlib import Path

from ..base import FileFacts, Language, Resolution, register

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
        return path.stem

    def resolution(self) -> Resolution:
        # loaded when a build asks, as the extractor is when a Java file is read
        from .resolve import JavaResolution

        return JavaResolution()

    def extract(self, data: bytes, path: str, module: str, is_package: bool,
                budget_s: float | None = None) -> FileFacts:
        # loaded when a Java file is read: every command that imports the registry stays free of the grammar
        from .extract import extract

        return extract(data, path, module, budget_s)

"""How Python names a file: the module path `import` would use, climbing package folders (with
__init__.py, or namespace packages as PEP 420 allows)."""

from __future__ import annotations

# Folders that hold scripts, tests or documents, imported (if at all) by putting them on sys.path:
# never taken for namespace packages.
_NOT_NAMESPACES = frozenset({
    "src", "lib", "Lib", "test", "tests", "testing", "doc", "docs", "example", "examples", "sample", "samples",
    "script", "scripts", "bin", "benchmark", "benchmarks", "bench", "tools", "tasks", "ci", "demo", "demos",
    "notebooks", "build", "dist", "site", "data", "fixtures", "resources", "static", "templates", "contrib"})


def _is_namespace(rel_dir: str, package_dirs: set[str]) -> bool:
    """A folder without __init__.py that Python imports as a namespace package (PEP 420): one
    inside a package, or a top-level folder (of the repository or of `src/`) with an importable
    name that is not a scripts, tests or documents folder."""
    parent, _, name = rel_dir.rpartition("/")
    if not name.isidentifier() or name in _NOT_NAMESPACES:
        return False
    return parent in package_dirs or parent in ("", "src")


def module_name(rel_path: str, package_dirs: set[str]) -> str:
    """The dotted name of a file: climb while the folder is a package (has __init__.py, or is a
    namespace package, see _is_namespace).

    So `Lib/json/decoder.py` is `json.decoder` and `src/pkg/mod.py` is `pkg.mod`.
    """
    parts = rel_path.split("/")
    stem = parts[-1][:-3]
    names = [] if stem == "__init__" else [stem]
    dirs = parts[:-1]
    while dirs and "/".join(dirs) in package_dirs:
        names.append(dirs[-1])
        dirs = dirs[:-1]
    names.reverse()
    return ".".join(names) if names else (dirs[-1] if dirs else stem)

"""Find the Python files of a repository and the module name Python would import each one as."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pathspec

# Directories that never hold the project's own code.
# Virtualenvs are recognised by their pyvenv.cfg, whatever their name (the stdlib has a `venv`
# package); build/ and dist/ only when they are not packages themselves.
NOISE_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".codegraph", "__pycache__", "node_modules", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "site-packages", "dist-packages",
        ".idea", ".vscode",
    }
)
OUTPUT_DIRS = frozenset({"build", "dist"})
DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative to the repository root, with forward slashes
    abspath: str
    module: str
    is_package: bool  # an __init__.py
    size: int
    mtime_ns: int


@dataclass
class Skip:
    path: str
    reason: str
    detail: str = ""


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


def _is_virtualenv(dirpath: str, filenames: list[str]) -> bool:
    return "pyvenv.cfg" in filenames or os.path.exists(os.path.join(dirpath, "conda-meta"))


def _load_gitignore(dirpath: str, filenames: list[str]) -> pathspec.PathSpec | None:
    if ".gitignore" not in filenames:
        return None
    try:
        with open(os.path.join(dirpath, ".gitignore"), encoding="utf-8", errors="replace") as fh:
            return pathspec.GitIgnoreSpec.from_lines(fh)
    except OSError:
        return None


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


def _printable(rel: str) -> str | None:
    """None when the name is valid UTF-8 (what the database stores), else a safe rendering of it."""
    try:
        rel.encode("utf-8")
        return None
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def discover(root: str | os.PathLike, max_file_size: int = DEFAULT_MAX_FILE_SIZE) -> Discovery:
    """Walk the repository without following directory symlinks (so loops cannot trap us); file
    symlinks are followed only when they resolve inside the repository."""
    root = os.path.abspath(root)
    real_root = os.path.realpath(root)
    result = Discovery()
    package_dirs: set[str] = set()
    candidates: list[tuple[str, str, os.stat_result]] = []
    ignores: list[tuple[str, pathspec.PathSpec]] = []  # (dir prefix, spec) stack
    seen_real: set[str] = set()

    def ignored(rel: str, is_dir: bool) -> bool:
        for prefix, spec in ignores:
            if prefix and not rel.startswith(prefix + "/"):
                continue
            sub = rel[len(prefix) + 1 :] if prefix else rel
            if spec.match_file(sub + ("/" if is_dir else "")):
                return True
        return False

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        ignores = [(p, s) for p, s in ignores if not p or rel_dir == p or rel_dir.startswith(p + "/")]
        spec = _load_gitignore(dirpath, filenames)
        if spec is not None:
            ignores.append((rel_dir, spec))
        if "__init__.py" in filenames:
            package_dirs.add(rel_dir)
        elif rel_dir and _is_namespace(rel_dir, package_dirs):
            package_dirs.add(rel_dir)
        kept = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            full = os.path.join(dirpath, d)
            if d in NOISE_DIRS or d.endswith(".egg-info"):
                continue
            shown = _printable(rel)
            if shown is not None:
                result.skipped.append(Skip(shown, "undecodable-name", "the directory name is not valid UTF-8"))
                continue
            if d in OUTPUT_DIRS and not os.path.exists(os.path.join(full, "__init__.py")):
                continue
            if os.path.islink(full):
                result.skipped.append(Skip(rel, "symlink", "directory symlinks are not followed"))
                continue
            if ignored(rel, True):
                continue
            try:
                if _is_virtualenv(full, os.listdir(full)):
                    continue
            except OSError as exc:
                result.skipped.append(Skip(rel, "unreadable", str(exc)))
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            full = os.path.join(dirpath, name)
            shown = _printable(rel)
            if shown is not None:
                result.skipped.append(Skip(shown, "undecodable-name", "the file name is not valid UTF-8"))
                continue
            if ignored(rel, False):
                continue
            try:
                st = os.stat(full)  # follows file symlinks
            except OSError as exc:
                result.skipped.append(Skip(rel, "unreadable", f"broken symlink or unreadable: {exc}"))
                continue
            if not os.path.isfile(full):
                result.skipped.append(Skip(rel, "not-a-file"))
                continue
            if os.path.islink(full):
                real = os.path.realpath(full)
                if os.path.commonpath([real, real_root]) != real_root:
                    result.skipped.append(Skip(rel, "symlink", f"points outside the repository, to {real}"))
                    continue
                if real in seen_real:
                    continue
                seen_real.add(real)
            if st.st_size > max_file_size:
                result.skipped.append(
                    Skip(rel, "too-large", f"{st.st_size} bytes > limit {max_file_size} (--max-file-size)")
                )
                continue
            candidates.append((rel, full, st))

    for rel, full, st in candidates:
        mod = module_name(rel, package_dirs)
        result.files.append(
            SourceFile(rel, full, mod, rel.endswith("__init__.py"), st.st_size, st.st_mtime_ns)
        )
    return result


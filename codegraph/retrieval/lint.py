"""Run pylint on a candidate file inside its repository and keep the messages that matter.

One in-process linter is reused across runs (5-10x faster than a cold `python -m pylint`), with
astroid's module cache invalidated for the linted module and every module changed since the
last run, or stale results come back. A subprocess runner reading `--output-format=json2` is
the fallback and the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from ..discover import module_name
from ..errors import CodegraphError

# CoCoGen's categories (Table 4), keyed by pylint symbol.
CATEGORIES = {
    "import-error": "UNDEF-P",
    "no-name-in-module": "UNDEF-API",
    "no-member": "UNDEF-CM",
    "undefined-variable": "UNDEF-O",
    "used-before-assignment": "UNDEF-O",
    "too-many-function-args": "API",
    "no-value-for-parameter": "API",
    "unexpected-keyword-arg": "API",
    "assignment-from-no-return": "API",
    "assignment-from-none": "API",
    "redundant-keyword-arg": "API",
    "missing-kwoa": "API",
    "not-an-iterable": "OBJ",
    "not-callable": "OBJ",
    "unsubscriptable-object": "OBJ",
    "unsupported-membership-test": "OBJ",
    "not-a-mapping": "OBJ",
}

PYLINT_FLAGS = ("--disable=all", "--enable=E", "--persistent=n", "--score=n", "--jobs=1",
                "--reports=n", "--load-plugins=")


@dataclass
class Diagnostic:
    symbol: str
    msg_id: str
    message: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    path: str = ""
    obj: str = ""
    category: str = field(init=False)

    def __post_init__(self) -> None:
        self.category = CATEGORIES.get(self.symbol, "OTHER")

    def to_dict(self) -> dict:
        return asdict(self)


class LintError(CodegraphError):
    pass


def _package_root(path: Path) -> Path:
    folder = path.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def candidate_module(path: Path) -> str:
    """The module name of a file, found the way the indexer finds it (climbing __init__.py)."""
    root = _package_root(path)
    rel = path.relative_to(root).as_posix()
    packages = set()
    folder = path.parent
    while folder != root:
        packages.add(folder.relative_to(root).as_posix())
        folder = folder.parent
    return module_name(rel, packages)


def keep_lines(diagnostics: Iterable[Diagnostic], first: int | None, last: int | None) -> list[Diagnostic]:
    """Messages on the candidate's lines, its first and last line included.

    A message that starts before the span but ends inside it (a call spanning lines) is kept.
    """
    out = []
    for d in diagnostics:
        if first is not None and max(d.line, d.end_line or d.line) < first:
            continue
        if last is not None and d.line > last:
            continue
        out.append(d)
    return out


# astroid's module cache is process-wide, so what we know about it is too: the files behind the
# modules it holds (with their mtimes) and the project root of the last lint.
_SEEN: dict[str, tuple[str, int]] = {}
_ASTROID_STATE: dict[str, str | None] = {"root": None}


class Linter:
    """Lint files with pylint's error checkers; in process by default, subprocess on request."""

    def __init__(self, in_process: bool = True, timeout_s: float = 120.0) -> None:
        self.in_process = in_process
        self.timeout_s = timeout_s
        self._run = None
        self._lock = threading.Lock()
        self._rcfile = None

    def _empty_rcfile(self) -> str:
        # The project's own pylintrc may disable what we need or load plugins we lack.
        if self._rcfile is None:
            fd, path = tempfile.mkstemp(prefix="codegraph-pylintrc-", suffix=".toml")
            os.close(fd)
            self._rcfile = path
        return self._rcfile

    def lint(self, path: str | os.PathLike, changed_modules: Iterable[str] = ()) -> list[Diagnostic]:
        path = Path(path).resolve()
        if not path.is_file():
            raise LintError(f"{path} is not a file")
        if not self.in_process:
            return self._lint_subprocess(path)
        with self._lock:
            return self._lint_in_process(path, changed_modules)

    def _lint_in_process(self, path: Path, changed_modules: Iterable[str]) -> list[Diagnostic]:
        import astroid
        from pylint.lint import Run
        from pylint.reporters import CollectingReporter

        cache = astroid.MANAGER.astroid_cache
        stale = {candidate_module(path), *changed_modules}
        root = str(_package_root(path))
        if _ASTROID_STATE["root"] != root:
            # Another project: its modules may share our names, and astroid also caches where
            # modules were found. Start from a clean manager (rare: once per project).
            if _ASTROID_STATE["root"] is not None:
                astroid.MANAGER.clear_cache()
            _SEEN.clear()
            _ASTROID_STATE["root"] = root
        for name, (file, mtime) in list(_SEEN.items()):  # modules edited on disk since
            try:
                if os.stat(file).st_mtime_ns != mtime:
                    stale.add(name)
            except OSError:
                stale.add(name)
        specs = astroid.MANAGER._mod_file_cache
        for name in stale:
            cache.pop(name, None)
            _SEEN.pop(name, None)
            for key in [k for k in specs if k[0] == name or k[0].startswith(name + ".")]:
                specs.pop(key, None)
        reporter = CollectingReporter()
        if self._run is None:
            args = [*PYLINT_FLAGS, f"--rcfile={self._empty_rcfile()}", str(path)]
            self._run = Run(args, reporter=reporter, exit=False)
        else:
            linter = self._run.linter
            linter.set_reporter(reporter)
            linter.check([str(path)])
        self._remember(cache)
        return [
            Diagnostic(m.symbol, m.msg_id, m.msg, m.line, m.column, m.end_line, m.end_column, m.path, m.obj)
            for m in reporter.messages
        ]

    def _remember(self, cache: dict) -> None:
        for name, module in cache.items():
            file = getattr(module, "file", None)
            if name in _SEEN or not file or not file.endswith(".py") or "site-packages" in file:
                continue
            try:
                _SEEN[name] = (file, os.stat(file).st_mtime_ns)
            except OSError:
                pass

    def _lint_subprocess(self, path: Path) -> list[Diagnostic]:
        cmd = [sys.executable, "-m", "pylint", *PYLINT_FLAGS, f"--rcfile={self._empty_rcfile()}",
               "--output-format=json2", str(path)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout_s,
                                  cwd=_package_root(path))
        except subprocess.TimeoutExpired:
            raise LintError(f"pylint took longer than {self.timeout_s:g} s on {path}") from None
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise LintError(f"pylint failed on {path}: {proc.stderr.strip()[-500:]}") from None
        return [
            Diagnostic(m["symbol"], m["messageId"], m["message"], m["line"], m["column"],
                       m.get("endLine"), m.get("endColumn"), m.get("path", ""), m.get("obj", ""))
            for m in data.get("messages", [])
        ]

    def close(self) -> None:
        if self._rcfile:
            Path(self._rcfile).unlink(missing_ok=True)
            self._rcfile = None


_shared: Linter | None = None


def shared_linter() -> Linter:
    global _shared
    if _shared is None:
        _shared = Linter()
    return _shared

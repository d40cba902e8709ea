"""Run pylint on a candidate file inside its repository and keep the messages that matter.

One pylint is kept warm in a worker process and reused across runs (5-10x faster than a cold
`python -m pylint`), with astroid's module cache invalidated for the linted module, every module
changed since the last run, and wholesale when modules appear or vanish, or stale results come
back. The worker can be killed, so a lint is bounded in time. A subprocess runner reading
`--output-format=json2` is the fallback and the reference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Iterable

from .modules import module_name
from ..checks import Checker, CheckError, CheckTimeout, Diagnostic
from ...worker import Worker, WorkerDied, WorkerTimeout, serve as serve_requests

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


def diagnostic(symbol: str, msg_id: str, message: str, line: int, column: int, end_line: int | None = None,
               end_column: int | None = None, path: str = "", obj: str = "") -> Diagnostic:
    """A pylint message as a Diagnostic, with its CoCoGen category."""
    return Diagnostic(symbol, msg_id, message, line, column, end_line, end_column, path, obj,
                      CATEGORIES.get(symbol, "OTHER"))


def _package_root(path: Path) -> Path:
    folder = path.parent
    while (folder / "__init__.py").exists() and folder.parent != folder:
        folder = folder.parent
    return folder


_PROJECT_MARKERS = (".codegraph", ".git", "pyproject.toml", "setup.py", "setup.cfg")


def import_roots(path: Path) -> list[str]:
    """Where a file's imports of its own project start: the project's root (the nearest folder
    above holding .git, .codegraph, pyproject.toml, setup.py or setup.cfg) and its src/, then the
    package root pylint adds itself. A test in tests/ imports the package beside tests/, which
    pylint alone does not see (no inference, so no no-member to report)."""
    roots = []
    for folder in path.parents:
        if any((folder / marker).exists() for marker in _PROJECT_MARKERS):
            roots += [folder, folder / "src"]
            break
    roots.append(_package_root(path))
    return list(dict.fromkeys(str(r) for r in roots if r.is_dir()))


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


def pylint_error_symbols() -> dict[str, str]:
    """Every error message (E...) pylint has: symbol -> message id."""
    from pylint.lint import PyLinter

    linter = PyLinter()
    linter.load_default_plugins()
    return {m.symbol: m.msgid for m in linter.msgs_store.messages if m.msgid.startswith("E")}


MAX_LINT_BYTES = 200_000
_RCFILE = str(Path(__file__).with_name("empty_pylintrc.toml"))  # the project's own may disable what we need


# -- the worker process: pylint in process, its astroid caches kept between runs ----------------

# astroid's module cache is process-wide, so what we know about it is too: the files behind the
# modules it holds (with their mtimes), the project root of the last lint and its file list.
_SEEN: dict[str, tuple[str, int]] = {}
_ASTROID_STATE: dict = {"root": None, "files": None}
_SKIP_DIRS = frozenset({".git", ".hg", ".codegraph", "__pycache__", "node_modules", ".tox", ".venv", "venv",
                        ".mypy_cache", ".pytest_cache", "site-packages"})


def _python_files(root: str, limit: int = 50_000) -> frozenset[str]:
    """The .py files under the project root: a module created, deleted or renamed changes it."""
    out: list[str] = []
    stack = [root]
    while stack and len(out) < limit:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.name.endswith(".py"):
                out.append(entry.path)
            elif entry.name not in _SKIP_DIRS and not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return frozenset(out)


def _lint_in_process(run_holder: dict, path: Path, changed_modules: Iterable[str]) -> list[dict]:
    import astroid
    from pylint.lint import Run
    from pylint.reporters import CollectingReporter

    cache = astroid.MANAGER.astroid_cache
    stale = {candidate_module(path), *changed_modules}
    roots = import_roots(path)
    root = roots[0]
    files = _python_files(root)
    if _ASTROID_STATE["root"] != root or _ASTROID_STATE["files"] != files or \
            any(name not in _SEEN and name not in cache for name in changed_modules):
        # Another project, or a module appeared, vanished or was renamed: astroid's lru caches
        # of where modules live are stale too. Start from a clean manager (rare).
        if _ASTROID_STATE["root"] is not None:
            astroid.MANAGER.clear_cache()
        _SEEN.clear()
        _ASTROID_STATE.update(root=root, files=files)
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
    added = [r for r in roots if r not in sys.path]
    sys.path[:0] = added
    try:
        if run_holder.get("run") is None:
            run_holder["run"] = Run([*PYLINT_FLAGS, f"--rcfile={_RCFILE}", str(path)], reporter=reporter, exit=False)
        else:
            linter = run_holder["run"].linter
            linter.set_reporter(reporter)
            linter.check([str(path)])
    finally:
        for folder in added:
            sys.path.remove(folder)
    _remember(cache)
    return [asdict(diagnostic(m.symbol, m.msg_id, m.msg, m.line, m.column, m.end_line, m.end_column, m.path, m.obj))
            for m in reporter.messages]


def _remember(cache: dict) -> None:
    for name, module in cache.items():
        file = getattr(module, "file", None)
        if name in _SEEN or not file or not file.endswith(".py") or "site-packages" in file:
            continue
        try:
            _SEEN[name] = (file, os.stat(file).st_mtime_ns)
        except OSError:
            pass


def serve(connection) -> None:
    """The worker's loop: (path, changed modules) in, diagnostics or an error message out."""
    holder: dict = {}

    def handle(request):
        path, changed = request
        try:
            return "ok", _lint_in_process(holder, Path(path), changed)
        except BaseException as exc:  # pylint's own crashes are the caller's CheckError
            return "error", f"{type(exc).__name__}: {exc}"

    serve_requests(connection, handle)


class Linter(Checker):
    """Lint files with pylint's error checkers.

    `worker` (the default) keeps pylint and astroid's caches warm in a child process, 5-10x
    faster than a cold `python -m pylint`; a lint that overruns its time limit kills the worker
    (the next lint starts a fresh one). `subprocess` runs `python -m pylint` each time."""

    def __init__(self, mode: str = "worker", timeout_s: float = 120.0, max_bytes: int = MAX_LINT_BYTES) -> None:
        if mode not in ("worker", "subprocess"):
            raise ValueError(f"unknown lint mode {mode!r}")
        self.mode, self.timeout_s, self.max_bytes = mode, timeout_s, max_bytes
        self._worker = Worker("codegraph.languages.python.lint:serve", name="codegraph-lint")
        self._lock = threading.Lock()

    def start(self) -> None:
        if self.mode == "worker":
            with self._lock:
                if not self._worker.alive:
                    self._worker.start()  # the child imports pylint while the caller goes on

    def lint(self, path: str | os.PathLike, changed_modules: Iterable[str] = (),
             timeout_s: float | None = None) -> list[Diagnostic]:
        path = Path(path).resolve()
        if not path.is_file():
            raise CheckError(f"{path} is not a file")
        size = path.stat().st_size
        if size > self.max_bytes:
            raise CheckError(f"{path.name} is {size // 1000} kB, over the {self.max_bytes // 1000} kB that are "
                            "linted: the candidate is too large")
        timeout = self.timeout_s if timeout_s is None else timeout_s
        if self.mode == "subprocess":
            return self._lint_subprocess(path, timeout)
        with self._lock:
            if not self._worker.alive:
                self._worker.start()
            try:
                status, payload = self._worker.ask((str(path), tuple(changed_modules)), timeout)
            except WorkerTimeout:
                raise CheckTimeout(f"pylint did not finish {path.name} within {timeout:g} s") from None
            except WorkerDied:
                raise CheckError(f"the pylint worker died while linting {path}") from None
        if status == "error":
            raise CheckError(f"pylint failed on {path}: {payload}")
        return [Diagnostic(**d) for d in payload]

    def _lint_subprocess(self, path: Path, timeout: float) -> list[Diagnostic]:
        cmd = [sys.executable, "-m", "pylint", *PYLINT_FLAGS, f"--rcfile={_RCFILE}",
               "--output-format=json2", str(path)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=_package_root(path),
                                  env={**os.environ, "PYTHONPATH": os.pathsep.join(import_roots(path))})
        except subprocess.TimeoutExpired:
            raise CheckTimeout(f"pylint did not finish {path.name} within {timeout:g} s") from None
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise CheckError(f"pylint failed on {path}: {proc.stderr.strip()[-500:]}") from None
        return [
            diagnostic(m["symbol"], m["messageId"], m["message"], m["line"], m["column"],
                       m.get("endLine"), m.get("endColumn"), m.get("path", ""), m.get("obj", ""))
            for m in data.get("messages", [])
        ]

    def close(self) -> None:
        with self._lock:
            self._worker.close()

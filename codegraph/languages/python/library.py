"""The library layer: the standard library and installed packages a repository imports.

Models forget APIs more than they misspell them (`zipfile.ZipFile` used without its import,
`json.dumps(obj, indnt=2)`), so the modules a repository imports are indexed too, with
`layer` = stdlib or site, and only those: the modules its imports name, and what those import in
turn up to a depth and a file count. Modules are found the way the target interpreter would find
them (importlib's PathFinder, without importing anything): in the repository's own virtualenv or
an activated one, read from its files (pyvenv.cfg, site-packages, .pth folders; its interpreter is
never run), else by the interpreter running codegraph, or in a subprocess by the interpreter
--python names.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass
from pathlib import Path

from ...cachedir import cache_folder, write_cached
from ...sources import DEFAULT_MAX_FILE_SIZE, SourceFile
from ..base import Library

MAX_DEPTH = 2
MAX_FILES = 600

# Runs in the target interpreter: where each dotted name's source is, found without importing.
_FINDER = r'''
import importlib, importlib.machinery, inspect, json, os, sys, sysconfig, warnings

READ = set()  # the folders a describe's lookups listed: what its answers depend on

def reading(folders):
    READ.update(os.path.abspath(f) for f in (sys.path if folders is None else folders) if isinstance(f, str))

def find(name, search=None):
    path = search
    spec = None
    parts = name.split(".")
    for i, part in enumerate(parts):
        reading(path)
        try:
            spec = importlib.machinery.PathFinder.find_spec(part, path)
        except (ImportError, ValueError, AttributeError):
            return None
        if spec is None:
            return None
        path = spec.submodule_search_locations
        if path is None and i < len(parts) - 1:  # a module, not a package, with more to go: `datetime.datetime`
            return None
    origin = spec.origin if spec and spec.origin not in (None, "namespace") else None
    return [origin, spec.submodule_search_locations is not None] if origin and origin.endswith(".py") else None

def present(top, search=None):
    """Is there such a top-level module at all (built in, frozen, an extension, source)?"""
    if top in sys.builtin_module_names:
        return True
    reading(search)
    try:
        return (importlib.machinery.PathFinder.find_spec(top, search) is not None
                or importlib.machinery.FrozenImporter.find_spec(top) is not None)
    except (ImportError, ValueError, AttributeError):
        return False

# Importing these does more than define names (a terminal's line editing, a GUI toolkit).
NOT_IMPORTED = {"readline", "_tkinter", "curses", "_curses", "_curses_panel", "this", "antigravity"}

def own_binary(name):
    """Compiled into this interpreter, or an extension module in its own lib-dynload: code of the
    interpreter itself, never a file another environment (or a repository) put on a path."""
    if name in sys.builtin_module_names:
        return True
    folder = os.path.join(sysconfig.get_paths()["stdlib"], "lib-dynload")
    reading([folder])
    try:
        spec = importlib.machinery.PathFinder.find_spec(name, [folder])
    except (ImportError, ValueError, AttributeError):
        return False
    return bool(spec and spec.origin and spec.origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)))

def signature(obj, method=False):
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(self, *args, **kwargs)" if method else "(*args, **kwargs)"
    try:
        compile("def f" + text + ": pass", "<signature>", "exec")
    except SyntaxError:  # a default only a repr can show (<object object at 0x...>)
        return "(self, *args, **kwargs)" if method else "(*args, **kwargs)"
    return text

def first_line(obj):
    doc = getattr(obj, "__doc__", None)
    line = doc.strip().splitlines()[0] if isinstance(doc, str) and doc.strip() else ""
    return repr(line[:200]) if line else None

def stub(name):
    """A built-in module as Python source: its functions with their signatures, its classes with
    their own methods, its other names with their types, each with its docstring's first line.
    None for a module this interpreter does not hold as its own binary."""
    if "." in name or name in NOT_IMPORTED or not own_binary(name):
        return None
    try:
        with warnings.catch_warnings():  # `audioop` is deprecated: the index need not say so
            warnings.simplefilter("ignore")
            module = importlib.import_module(name)
    except Exception:
        return None
    out = []
    doc = first_line(module)
    if doc:
        out.append(doc)
    for attr in sorted(dir(module)):
        if attr.startswith("__") or not attr.isidentifier():
            continue
        try:
            value = getattr(module, attr)
        except Exception:
            continue
        if inspect.ismodule(value):
            continue
        if inspect.isclass(value):
            out.append(f"class {attr}:")
            doc = first_line(value)
            out.append(f"    {doc}" if doc else "    pass")
            for method in sorted(vars(value)):
                member = vars(value)[method]
                if not method.isidentifier() or (method.startswith("__") and method != "__init__"):
                    continue
                if callable(member) or isinstance(member, (classmethod, staticmethod)):
                    out.append(f"    def {method}{signature(getattr(value, method, member), method=True)}: ...")
            continue
        if callable(value):
            doc = first_line(value)
            out.append(f"def {attr}{signature(value)}:")
            out.append(f"    {doc}" if doc else "    ...")
        else:
            out.append(f"{attr}: {type(value).__name__}")
    return "\n".join(out) + "\n"

def describe(names, search=None):
    """With search (the folders of another environment, read from its files): find there."""
    paths = sysconfig.get_paths()
    READ.clear()
    found = {n: find(n, search) for n in names}
    return {"stdlib": os.path.realpath(paths["stdlib"]), "prefix": os.path.realpath(sys.prefix),
            "site": sorted({os.path.realpath(p) for p in (paths["purelib"], paths["platlib"])}),
            "found": found, "present": {n: present(n, search) for n in names if "." not in n},
            "stubs": {n: text for n in names if not found[n] and (text := stub(n))}, "read": sorted(READ)}
'''
_MAIN = "\nprint(json.dumps(describe(json.loads(sys.stdin.read()))))\n"
_HERE: dict = {}
VENV_FOLDERS = (".venv", "venv", "env")  # a repository's own virtualenv, by the names tools give it


@dataclass(frozen=True)
class Environment:
    """A virtualenv read from its files (pyvenv.cfg, its folders, its .pth files), never run:
    where its imports search. A repository's interpreter is the repository's code."""

    prefix: str  # the virtualenv's folder, resolved: the environment's identity
    named: str  # how the report names it: `.venv`, `$VIRTUAL_ENV (/path)`
    stdlib: str | None  # the standard library of the interpreter it was made from
    site: tuple[str, ...]  # its site-packages (and the base's, with include-system-site-packages)
    added: tuple[str, ...]  # the folders its .pth files add (editable installs)
    search: tuple[str, ...]  # the folders a top-level import searches, in order


def _within(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root + os.sep) for root in roots)


def read_environment(folder: Path, named: str, confined: list[Path] | None = None) -> Environment | None:
    """The virtualenv at folder, or None when it is not one. With `confined` (a repository's own
    virtualenv: its files may point anywhere), site-packages and .pth folders count only inside
    the virtualenv or those folders."""
    text = _head(folder / "pyvenv.cfg")
    if text is None:
        return None
    config = {}
    for line in text.splitlines():
        key, equals, value = line.partition("=")
        if equals and "\0" not in value:
            config[key.strip().lower()] = value.strip()
    prefix = os.path.realpath(folder)
    roots = [prefix, *(os.path.realpath(c) for c in confined)] if confined is not None else None
    sites = sorted({os.path.realpath(p) for p in (*folder.glob("lib/python3*/site-packages"), folder / "Lib" / "site-packages")
                    if p.is_dir()})
    sites = [p for p in sites if roots is None or _within(p, [prefix])]
    said = re.match(r"(\d+)\.(\d+)", config.get("version_info") or config.get("version") or "")
    from_folder = next((m for p in sites if (m := re.search(r"python(\d+)\.(\d+)", p))), None)
    version = (said or from_folder).groups() if (said or from_folder) else None
    base = Path(config["home"]).parent if config.get("home") else None
    stdlib = None
    if version and base is not None:
        for candidate in (base / "lib" / f"python{version[0]}.{version[1]}", base / "Lib"):
            if (candidate / "os.py").is_file():
                stdlib = os.path.realpath(candidate)
                break
    if stdlib is None:  # the interpreter it was made from is gone or elsewhere: this one's, the nearest there is
        stdlib = os.path.realpath(sysconfig.get_paths()["stdlib"])
    if stdlib is not None and config.get("include-system-site-packages", "").lower() == "true":
        sites += [p for p in (os.path.realpath(Path(stdlib) / "site-packages"),) if os.path.isdir(p) and p not in sites]
    added = [p for p in pth_folders(sites) if roots is None or _within(p, roots)]
    search = [p for p in (stdlib, stdlib and os.path.join(stdlib, "lib-dynload")) if p and os.path.isdir(p)]
    return Environment(prefix, named, stdlib, tuple(sites), tuple(added), tuple(search + sites + added))


def _head(path: Path, limit: int = 65536) -> str | None:
    """A small configuration file's text, at most `limit` bytes of it (a repository's file may be
    of any size); None when it cannot be read."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open, a device never end
            return None
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def pth_folders(sites: list[str]) -> list[str]:
    """The folders the site-packages' .pth files add to the path (editable installs), read,
    never run (a line that imports is code, and skipped)."""
    out: list[str] = []
    for site in sites:
        for pth in sorted(Path(site).glob("*.pth")):
            for line in (_head(pth) or "").splitlines():
                line = line.strip()
                if not line or line.startswith("#") or re.match(r"import[ \t]", line) or "\0" in line:
                    continue  # (a NUL names no folder)
                folder = os.path.realpath(os.path.join(site, line))
                if os.path.isdir(folder) and folder not in out and folder not in sites:
                    out.append(folder)
    return out


def environment_of(root: Path, python: str | None) -> Environment | None:
    """The environment a repository's library layer comes from when no interpreter is named:
    its own virtualenv (.venv, venv, env), else an activated one ($VIRTUAL_ENV) other than the
    one running codegraph; None: the interpreter running codegraph."""
    if python is not None:
        return None
    for name in VENV_FOLDERS:
        found = read_environment(root / name, name, confined=[root])
        if found is not None:
            return found
    active = os.environ.get("VIRTUAL_ENV")
    if active and os.path.realpath(active) != os.path.realpath(sys.prefix):
        return read_environment(Path(active), f"$VIRTUAL_ENV ({active})")
    return None


@dataclass(frozen=True)
class Located:
    name: str
    origin: str
    is_package: bool


def _own_path() -> list[str]:
    """Where the interpreter running codegraph finds modules: its import path without the folder
    of the script or the working directory Python puts first (codegraph's own command, or wherever
    `python -m` ran: no environment's)."""
    return [p for p in (sys.path if sys.flags.safe_path else sys.path[1:]) if p]


def _describe_here(names: list[str], search: list[str]) -> dict:
    if not _HERE:  # the same code the subprocess runs, run here
        exec(compile(_FINDER, "<codegraph-finder>", "exec"), _HERE)  # noqa: S102 - our own constant
    return _HERE["describe"](names, search)


def _mtime(folder: str) -> int:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return -1


class LocatedMemo:
    """What describe answered in this process for an environment, kept in the cache folder
    between builds (finding 1,800 names cost 0.4 s of a 1.7 s build of click): an answer stands
    while every folder the lookups listed has its modification time (a module or package added or
    removed there changes it; an edited file changes no answer), and a stub while the interpreter
    is the same file (its version and the finder's code are in the memo's name)."""

    def __init__(self, search: list[str]) -> None:
        self.search = search
        self.path: Path | None = None
        self.data: dict = {"found": {}, "present": {}, "stubs": {}, "read": {}}
        folder = cache_folder()
        if folder is None:
            return
        key = json.dumps([search, os.path.realpath(sys.executable),
                          _mtime(sys.executable), sys.version, _FINDER])
        self.path = folder / f"located-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"
        try:
            held = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(held, dict) and isinstance(held.get("read"), dict) and \
                all(_mtime(f) == m for f, m in held["read"].items()):
            self.data = held

    def describe(self, names: list[str]) -> dict:
        """describe's answer for names, asking describe only for those not answered before."""
        data = self.data
        todo = [n for n in names if n not in data["found"]]
        if todo:
            started = time.time_ns()
            fresh = _describe_here(todo, self.search)
            data.update({k: fresh[k] for k in ("stdlib", "prefix", "site")})
            for key in ("found", "present", "stubs"):
                data[key].update(fresh[key])
            # a folder changed while it was read may have given either answer: never trusted again
            data["read"].update({f: m if (m := _mtime(f)) < started else -2 for f in fresh["read"]})
            if self.path is not None:
                write_cached(self.path, json.dumps(data))
        wanted = set(names)
        return {"stdlib": data["stdlib"], "prefix": data["prefix"], "site": list(data["site"]),
                **{key: {n: v for n, v in data[key].items() if n in wanted} for key in ("found", "present", "stubs")}}


class Finder:
    """Finds modules for one interpreter, or for an environment read from its files; remembers
    its stdlib and site folders."""

    def __init__(self, python: str | None = None, environment: Environment | None = None) -> None:
        self.environment = environment
        self.here = environment is not None or python is None or os.path.abspath(python) == os.path.abspath(sys.executable)
        self.python = python or sys.executable
        self.stdlib: str | None = None
        self.site: list[str] = []
        self.prefix: str | None = None
        self.present: dict[str, bool] = {}  # top-level module -> does the environment have it at all
        self.stubs: dict[str, str] = {}  # built-in module -> its stub source (describe's `stub`)
        self.memo: LocatedMemo | None = None  # what describe answered here before (in-process only)

    def locate(self, names: list[str]) -> dict[str, Located]:
        if not names:
            return {}
        if self.here:
            env = self.environment
            if self.memo is None:
                self.memo = LocatedMemo(list(env.search) if env else _own_path())
            data = self.memo.describe(names)
            if env is not None:
                data.update(stdlib=env.stdlib, prefix=env.prefix, site=[*env.site, *env.added])
        else:
            try:
                out = subprocess.run([self.python, "-c", _FINDER + _MAIN], input=json.dumps(names), capture_output=True,
                                     text=True, timeout=120, check=True).stdout
                data = json.loads(out)
            except (OSError, subprocess.SubprocessError, ValueError):
                return {}
        if self.environment is None:  # an editable install's folder is where its package is
            data["site"] += pth_folders(data["site"])
        self.stdlib, self.site, self.prefix = data["stdlib"], data["site"], data["prefix"]
        self.present.update(data.get("present", {}))
        self.stubs.update({n: text for n, text in data.get("stubs", {}).items() if isinstance(text, str)})
        return {n: Located(n, os.path.realpath(v[0]), v[1]) for n, v in data["found"].items() if v}

    def identity(self) -> str:
        """What makes two interpreters the same for the library layer: the environment's prefix
        (a virtualenv's python, python3 and python3.11 are one; two virtualenvs are two)."""
        if self.prefix is None:
            self.locate(["__codegraph_probe__"])
        return self.prefix or self.python

    def layer_of(self, origin: str) -> tuple[str, str] | None:
        """(layer, path label) for a module's file: <stdlib>/json/decoder.py, <site>/requests/api.py."""
        for root in self.site:
            if origin.startswith(root + os.sep):
                return "site", "<site>/" + os.path.relpath(origin, root).replace(os.sep, "/")
        if self.stdlib and origin.startswith(self.stdlib + os.sep) and "site-packages" not in origin:
            return "stdlib", "<stdlib>/" + os.path.relpath(origin, self.stdlib).replace(os.sep, "/")
        return None


def candidates(dotted: set[str]) -> set[str]:
    """Each imported name and its parent packages (`a.b.c` -> a, a.b, a.b.c): a package's
    __init__ is where most of its names are re-exported."""
    out = set()
    for name in dotted:
        parts = [p for p in name.split(".") if p]
        if not parts or not all(p.isidentifier() for p in parts):
            continue
        out.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return out


BUILTIN = "<builtin>"  # the path prefix of built-in modules' stubs: made from the interpreter, no file


def stub_file(name: str, text: str) -> SourceFile:
    """A built-in module's stub as a source file of the stdlib layer; its `mtime` is a digest of
    the text, so the library cache holds it as long as the text is the same."""
    data = text.encode()
    digest = int.from_bytes(hashlib.sha256(data).digest()[:7], "big")
    return SourceFile(f"{BUILTIN}/{name}.py", f"{BUILTIN}/{name}.py", name, False, len(data), digest, "python", data)


def library_files(located: dict[str, Located], finder: Finder,
                  max_file_size: int = DEFAULT_MAX_FILE_SIZE) -> list[tuple[SourceFile, str]]:
    """(source file, layer) for every located module that lives in the stdlib or a site folder."""
    out = []
    for name, where in sorted(located.items()):
        placed = finder.layer_of(where.origin)
        if placed is None:
            continue
        layer, label = placed
        try:
            st = os.stat(where.origin)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_file_size:  # a FIFO's read would never end
            continue
        out.append((SourceFile(label, where.origin, name, where.is_package, st.st_size, st.st_mtime_ns, "python"), layer))
    return out


class PythonLibrary(Library):
    """The standard library and the site-packages of one interpreter, as the Library protocol."""

    language = "python"
    max_depth, max_files = MAX_DEPTH, MAX_FILES

    def __init__(self, python: str | None = None, root: Path | None = None) -> None:
        self.environment = environment_of(root, python) if root is not None else None
        self.finder = Finder(python, self.environment)

    def identity(self) -> str:
        return self.finder.identity()

    def named(self) -> str:
        env = self.environment
        if env is not None:
            return f"{env.named}, read from its files" if env.named.startswith("$") else \
                f"the repository's {env.named}, read from its files"
        return f"{self.finder.python}" if not self.finder.here else f"the interpreter running codegraph ({sys.prefix})"

    def meta(self) -> dict[str, str]:
        return {"library_python": self.finder.identity(), "library_stdlib": self.finder.stdlib or "",
                "library_site": json.dumps(self.finder.site)}

    def imported(self, project_modules: set[str], imports) -> set[str]:
        """Absolute imports of a module outside the repository's top-level packages: the module,
        and `a.b` for `from a import b` (b may be a submodule); and `builtins`, which every module
        imports without saying so."""
        tops = {m.split(".")[0] for m in project_modules}
        names = {"builtins"} if project_modules else set()  # what every module reads without an import
        for module, name, star in imports:
            if not module or module.startswith(".") or module.split(".")[0] in tops:
                continue
            names.add(module)
            if name and not star:
                names.add(f"{module}.{name}")
        return names

    def expand(self, names: set[str]) -> set[str]:
        return candidates(names)

    def files(self, modules: list[str]) -> list[tuple[SourceFile, str]]:
        """The modules' source files, and a stub for each built-in one (`sys`, `math`: no source)."""
        found = library_files(self.finder.locate(modules), self.finder)
        stubs = self.finder.stubs
        return found + [(stub_file(name, stubs[name]), "stdlib") for name in sorted(set(modules) & set(stubs))]

    def missing(self, names: set[str]) -> set[str]:
        tops = {name.split(".")[0] for name in names}
        unknown = sorted(t for t in tops if t not in self.finder.present)
        if unknown:
            self.finder.locate(unknown)
        return {t for t in tops if self.finder.present.get(t) is False}

    def missing_note(self, root: Path, names: set[str]) -> str | None:
        absent = sorted(self.missing(names))
        if not absent:
            return None
        shown = ", ".join(absent[:8]) + (f" and {len(absent) - 8} more" if len(absent) > 8 else "")
        if self.environment is not None:
            return (f"{len(absent)} imported package{'s are' if len(absent) > 1 else ' is'} not in {self.environment.named} "
                    f"({self.environment.prefix}), the library layer's environment: {shown}; their names stay "
                    "unresolved. Install them there, or index with --python naming an interpreter that has them")
        # a virtualenv in the repository is named, never run: its interpreter is the repository's code
        venv = next((v for v in (".venv", "venv", "env") if os.path.lexists(root / v / "bin" / "python")), None)
        use = f"--python {venv}/bin/python (the repository's virtualenv)" if venv else \
            "--python with the project's interpreter"
        return (f"{len(absent)} imported package{'s are' if len(absent) > 1 else ' is'} not in the library layer's "
                f"environment ({self.identity()}): {shown}; their names stay unresolved. Index with {use} to "
                "take the library layer from it")

    def changed(self, meta: dict[str, str], files: list[tuple[str, int, int]]) -> bool:
        roots = {"<stdlib>": [meta.get("library_stdlib") or ""],
                 "<site>": json.loads(meta.get("library_site") or "[]")}
        for path, size, mtime in files:
            prefix, _, rest = path.partition("/")
            if prefix == BUILTIN:  # made from the interpreter, which the identity stands for
                continue
            for root in roots.get(prefix, []):
                try:
                    st = os.stat(os.path.join(root, rest))
                except OSError:
                    continue
                if st.st_size != size or st.st_mtime_ns != mtime:
                    return True
                break
            else:
                return True  # gone
        return False

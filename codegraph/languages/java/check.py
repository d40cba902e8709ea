"""Java's checker: javac, kept warm in one process (JavacCheck.java, compiled once per JDK into
the cache folder), attributing one file at a time against the sources beside it and the
project's dependency jars.

javac rather than ECJ, measured on the same mutated files of four real projects
(benchmarks/java_checkers.py, docs/benchmarks.md): both report the same mistakes; javac's
messages name the missing symbol's kind and the type it was looked up in by its qualified name
(`symbol: method ad(com.ex.Item)`, `location: variable cart of type com.ex.Cart`), ECJ's by its
simple name or not at all; javac ships with every JDK and is the compiler the projects' builds
run. ECJ was 1.2-2.3x faster warm: a second checker to offer later. What javac lacks (it stops at
a file's first syntax error) the syntax message itself covers.

Where a file's imports of other code come from: `-sourcepath` is the source root its package
declaration implies (`src/test/java` brings `src/main/java` beside it), and `-classpath` is
Maven's dependency classpath when the project has a pom.xml and Maven is on the PATH (asked
once per pom.xml and kept in the cache folder; CODEGRAPH_JAVA_CLASSPATH names one instead).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Iterable

from ...cachedir import cache_folder, write_cached
from ..checks import Checker, CheckError, CheckTimeout, Diagnostic

_HELPER = Path(__file__).with_name("JavacCheck.java")
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)
LINT_SECONDS = 60.0
CLASSPATH_SECONDS = 600.0
_PREFIX = "compiler.err."


def package_of(text: str) -> str:
    """The package a Java file declares ('' for the unnamed package)."""
    # comments before the declaration are common (a licence header): strip them first
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text[:65536], flags=re.S)
    m = _PACKAGE.search(text)
    return m.group(1) if m else ""


def source_roots(path: Path, text: str) -> list[Path]:
    """The source root the file's package implies, and its sibling `src/<set>/java` roots."""
    package = package_of(text)
    root = path.parent
    for part in reversed(package.split(".") if package else []):
        if root.name != part:
            return [path.parent]  # the folders do not follow the package: javac finds only the file's own
        root = root.parent
    roots = [root]
    if root.name == "java" and root.parent.parent.name == "src":
        roots += sorted(p for p in root.parent.parent.glob("*/java") if p.is_dir() and p != root)
    return roots


def _pom_above(folder: Path) -> Path | None:
    for parent in (folder, *folder.parents):
        if (parent / "pom.xml").is_file():
            return parent / "pom.xml"
    return None


def _reactor_pom(pom: Path) -> Path | None:
    """The outermost pom.xml in the folders above `pom`'s, without a gap (its reactor), or None."""
    top = None
    for parent in pom.parent.parents:
        if not (parent / "pom.xml").is_file():
            break
        top = parent / "pom.xml"
    return top


def _build_classpath(mvn: str, pom: Path, out: Path) -> str | None:
    try:
        done = subprocess.run([mvn, "-q", "-B", "-f", str(pom), "dependency:build-classpath",
                               f"-Dmdep.outputFile={out}", "-Dmdep.includeScope=test"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=CLASSPATH_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.read_text(encoding="utf-8").strip() if done.returncode == 0 and out.is_file() else None


def _reactor_classpath(mvn: str, pom: Path, top: Path, scratch: Path) -> str | None:
    """A module that depends on its reactor's other modules: Maven resolves them only in a build
    of the reactor that reaches their compile phase. It runs on a copy of the reactor's pom files
    alone (the repository is never written to), compiling nothing (`maven.main.skip`,
    `maven.test.skip`); the modules' output folders in the answer are mapped back to the
    repository's (`reactor_sources` turns them into source roots)."""
    root = top.parent
    for folder, dirs, files in os.walk(root):  # links are not followed, nor copied
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("target", "node_modules")]
        found = Path(folder) / "pom.xml"
        if "pom.xml" in files and not found.is_symlink():
            rel = found.relative_to(root)
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found, scratch / rel)
    if (root / ".mvn").is_dir():
        shutil.copytree(root / ".mvn", scratch / ".mvn", dirs_exist_ok=True)
    module = pom.parent.relative_to(root).as_posix()
    try:
        done = subprocess.run([mvn, "-q", "-B", "-f", str(scratch / "pom.xml"), "-pl", module, "-am", "test-compile",
                               "dependency:build-classpath", "-Dmaven.main.skip=true", "-Dmaven.test.skip=true",
                               "-Dmdep.outputFile=codegraph-classpath.txt", "-Dmdep.includeScope=test"],
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=CLASSPATH_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    out = scratch / module / "codegraph-classpath.txt"
    if done.returncode != 0 or not out.is_file():
        return None
    prefix = str(scratch) + os.sep
    return os.pathsep.join(str(root / entry[len(prefix):]) if entry.startswith(prefix) else entry
                           for entry in out.read_text(encoding="utf-8").strip().split(os.pathsep) if entry)


def reactor_sources(classpath: str) -> list[Path]:
    """The source roots of the reactor's modules a classpath names by their output folders
    (`core/target/classes` -> `core/src/main/java`): javac reads them as sources."""
    roots = []
    for entry in classpath.split(os.pathsep):
        path = Path(entry)
        if path.parent.name == "target" and path.name in ("classes", "test-classes"):
            source = path.parent.parent / "src" / ("main" if path.name == "classes" else "test") / "java"
            if source.is_dir():
                roots.append(source)
    return roots


def _cached_classpath(pom: Path) -> Path | None:
    """Where Maven's answer for this pom.xml (its path and contents) is kept."""
    cache = cache_folder()
    key = hashlib.sha256(pom.read_bytes() + str(pom).encode()).hexdigest()[:16]
    return cache / "java-classpath" / f"{key}.txt" if cache is not None else None


def known_classpath(folder: Path) -> str | None:
    """The classpath of the project holding `folder` without running Maven: CODEGRAPH_JAVA_CLASSPATH,
    or what Maven answered before for its pom.xml (maven_classpath); None when neither is there."""
    configured = os.environ.get("CODEGRAPH_JAVA_CLASSPATH")
    if configured is not None:
        return configured
    pom = _pom_above(folder)
    cached = _cached_classpath(pom) if pom is not None else None
    if cached is not None and cached.is_file():
        return cached.read_text(encoding="utf-8").strip()
    return None


def maven_classpath(folder: Path) -> str:
    """The dependency classpath of the Maven project holding `folder` ('' when there is none, or
    Maven cannot tell: javac then reports the missing packages, and keep() drops those the
    repository imports elsewhere); a module of a reactor whose other modules it needs is asked
    through the reactor (`_reactor_classpath`)."""
    known = known_classpath(folder)
    if known is not None:
        return known
    pom = _pom_above(folder)
    mvn = shutil.which("mvn")
    if pom is None or mvn is None:
        return ""
    cached = _cached_classpath(pom)
    with tempfile.TemporaryDirectory(prefix="codegraph-classpath-") as tmp:
        classpath = _build_classpath(mvn, pom, Path(tmp) / "classpath.txt")
        top = _reactor_pom(pom) if classpath is None else None
        if top is not None:
            classpath = _reactor_classpath(mvn, pom, top, Path(tmp) / "reactor")
    if classpath is None:
        return ""
    if cached is not None:
        write_cached(cached, classpath)
    return classpath


def _helper_classes() -> Path:
    """A folder holding JavacCheck.class, compiled by this JDK's javac once (cache folder) or now."""
    javac = shutil.which("javac")
    if javac is None:
        raise CheckError("checking Java needs a JDK (javac on the PATH): install one, e.g. "
                         "`apt-get install openjdk-17-jdk-headless`")
    source = _HELPER.read_bytes()
    version = subprocess.run([javac, "-version"], capture_output=True, text=True, timeout=60)
    key = hashlib.sha256(source + (version.stdout + version.stderr).encode()).hexdigest()[:16]
    cache = cache_folder()
    folder = cache / "javac-check" / key if cache is not None else Path(tempfile.mkdtemp(prefix="codegraph-javac-"))
    if (folder / "JavacCheck.class").is_file():
        return folder
    partial = folder.with_name(f"{folder.name}.{os.getpid()}")
    partial.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([javac, "-d", str(partial), str(_HELPER)], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise CheckError(f"could not compile codegraph's javac helper: {done.stderr.strip()[:400]}")
    try:
        os.replace(partial, folder)
    except OSError:  # another process was first
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def diagnostic(row: dict, categories: dict[str, str]) -> Diagnostic:
    code = row["code"]
    symbol = code.removeprefix(_PREFIX)
    lines = [" ".join(line.split()) for line in row["message"].splitlines() if line.strip()]
    message = "".join(line + ("" if i == len(lines) - 1 else " " if line.endswith(";") else "; ")
                      for i, line in enumerate(lines))
    return Diagnostic(symbol, code, message, row["line"], max(row["column"] - 1, 0), row.get("end_line"),
                      row.get("end_column"), row.get("path", ""), "", categories.get(symbol, "OTHER"))


class JavacChecker(Checker):
    """One javac process, started on first use and kept; a lint past its time kills it (the next
    one starts a new process)."""

    def __init__(self, categories: dict[str, str]) -> None:
        self.categories = categories
        self.process: subprocess.Popen | None = None
        self.lock = threading.Lock()
        self.classpaths: dict[Path, str] = {}

    def start(self) -> None:
        with self.lock:
            self._process()

    def _process(self) -> subprocess.Popen:
        if self.process is not None and self.process.poll() is None:
            return self.process
        java = shutil.which("java")
        if java is None:
            raise CheckError("checking Java needs a JDK (java on the PATH)")
        self.process = subprocess.Popen([java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp",
                                         str(_helper_classes()), "JavacCheck"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, encoding="utf-8", bufsize=1)
        return self.process

    def lint(self, path: str | os.PathLike, changed_modules: Iterable[str] = (),
             timeout_s: float | None = None) -> list[Diagnostic]:
        path = Path(path).resolve()
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise CheckError(f"cannot read {path}: {exc}") from None
        roots = source_roots(path, text)
        if roots[0] not in self.classpaths:
            self.classpaths[roots[0]] = maven_classpath(roots[0])
        classpath = self.classpaths[roots[0]]
        roots += [r for r in reactor_sources(classpath) if r not in roots]
        fields = [str(path), os.pathsep.join(map(str, roots)), classpath]
        if any("\n" in f or "\t" in f for f in fields):  # the helper reads one request a line, fields by tabs
            raise CheckError(f"{path}: a path with a tab or a line break cannot be checked by javac here: rename it")
        request = "\t".join(fields)
        with self.lock:
            process = self._process()
            rows: list[dict] = []
            failed: list[str] = []
            done = threading.Event()

            def read() -> None:
                for line in process.stdout:
                    message = json.loads(line)
                    if message.get("done"):
                        done.set()
                        return
                    if "failed" in message:
                        failed.append(message["failed"])
                    elif "code" in message:
                        rows.append(message)
                done.set()  # the process ended

            try:
                process.stdin.write(request + "\n")
                process.stdin.flush()
            except OSError as exc:
                self.process = None
                raise CheckError(f"javac's process ended: {exc}") from None
            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            if not done.wait(timeout_s or LINT_SECONDS):
                process.kill()
                self.process = None
                raise CheckTimeout(f"javac took longer than {timeout_s or LINT_SECONDS:.0f} s on {path.name}")
            reader.join(1)
            if failed:
                raise CheckError(f"javac could not check {path.name}: {failed[0][:400]}")
            if process.poll() is not None and not rows:
                self.process = None
                raise CheckError(f"javac's process ended while checking {path.name}")
        return [diagnostic(row, self.categories) for row in rows if Path(row.get("path") or "") == path]

    def close(self) -> None:
        with self.lock:
            if self.process is not None:
                try:
                    self.process.stdin.close()
                    self.process.wait(5)
                except (OSError, subprocess.SubprocessError):
                    self.process.kill()
                self.process = None

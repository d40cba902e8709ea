"""Java's library layer: the JDK's public API (Java SE's modules) and the project's dependency jars, as
Java source stubs (declarations with their signatures, supertypes, type parameters and constant
values; no code) written once per JDK and set of jars by JavaStubs.java through javax.lang.model
into the cache folder, then walked from the project's imports and indexed as any library file
is, so `String.format` and a dependency's classes have their rows in the graph.

The jars: CODEGRAPH_JAVA_CLASSPATH, else the classpath Maven gave the checker for the project's
pom.xml (check.known_classpath), else the dependencies its pom.xml or build.gradle files declare
with their versions, found in the local Maven repository or Gradle's cache
(dependencies.declared_jars). Indexing never runs Maven or Gradle: their build extensions and
scripts are the repository's code.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ...cachedir import cache_folder
from ...sources import SourceFile
from ..base import Library
from .check import known_classpath
from .jdk import java_version
from .dependencies import declared_jars

_STUBBER = Path(__file__).with_name("JavaStubs.java")
MODULES = ("java.base", "java.se")  # the Java SE platform: java.se requires the others transitively
WHOLE = frozenset({"java.base"})  # modules in the layer whole; the others' packages as imported
LABEL = "<java>"  # library files' paths: <java>/java/util/Map.java, in the stubs' folder
JDK = "<jdk>"  # the name imported() gives the JDK's modules, which are in the layer whole
STUB_SECONDS = 900.0


def classpath_jars(root: Path) -> list[str]:
    """The jars whose classes the layer holds (see the module's docstring), each once."""
    known = known_classpath(root)
    entries = known.split(os.pathsep) if known is not None else [str(p) for p in declared_jars(root)]
    out: list[str] = []
    for entry in entries:
        if entry.endswith(".jar") and os.path.isfile(entry) and entry not in out:
            out.append(entry)
    return out


def _jar_state(jars: list[str]) -> list[tuple[str, int, int]]:
    out = []
    for jar in jars:
        try:
            st = os.stat(jar)
        except OSError:
            continue
        out.append((jar, st.st_size, st.st_mtime_ns))
    return out


@dataclass
class Stubs:
    folder: Path
    origins: dict[str, str]  # qualified top-level class -> where it came from: a module or a jar
    packages: dict[str, list[str]] = field(default_factory=dict)  # package -> its top-level classes

    def __post_init__(self) -> None:
        for qualname in self.origins:
            self.packages.setdefault(qualname.rpartition(".")[0], []).append(qualname)

    def package_of(self, dotted: str) -> str:
        """The package of a class or of a member's dotted name (`a.b.C.m` -> `a.b`); a name no
        class holds is taken for a package."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            if ".".join(parts[:end]) in self.origins:
                return ".".join(parts[:end - 1])
        return dotted

    def whole(self, package: str) -> bool:
        """Is the package one of a module the layer holds whole (java.base's)?"""
        return any(self.origins[q] in WHOLE for q in self.packages.get(package, ()))


@functools.lru_cache(maxsize=8)
def _stubs(java: str, identity: str, jars: tuple[str, ...]) -> Stubs | None:
    """The stubs of the JDK's modules and these jars, written now unless the cache folder holds
    them; None when the JDK cannot write them."""
    key = hashlib.sha256(identity.encode()).hexdigest()[:16]
    cache = cache_folder()
    if cache is None:  # CODEGRAPH_CACHE=off: a folder of this process's own, gone when it ends
        folder = Path(tempfile.mkdtemp(prefix="codegraph-java-stubs-")) / key
        atexit.register(shutil.rmtree, folder.parent, True)
    else:
        folder = cache / "java-stubs" / key
    listing = folder / "listing.tsv"
    if not listing.is_file():
        partial = folder.with_name(f"{folder.name}.{os.getpid()}")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True, exist_ok=True)
        args = [java, str(_STUBBER), str(partial)]
        for module in MODULES:
            args += ["--module", module]
        for jar in jars:
            args += ["--jar", jar]
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=STUB_SECONDS, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is None or done.returncode != 0:
            shutil.rmtree(partial, ignore_errors=True)
            return None
        (partial / "listing.tsv").write_text(done.stdout, encoding="utf-8")
        try:
            os.replace(partial, folder)
        except OSError:  # another process was first
            shutil.rmtree(partial, ignore_errors=True)
    origins = {}
    for line in listing.read_text(encoding="utf-8").splitlines():
        name, _, origin = line.partition("\t")
        origins[name] = origin
    return Stubs(folder, origins)


class JavaLibrary(Library):
    """The JDK and the project's jars as the Library protocol (stubs: see the module's docstring).
    java.base is in whole (its 1,200 classes are 1.1 MB of stubs): what a file imports of it
    never changes the layer, so such an edit of imports does not rebuild the graph. Of the JDK's
    other modules (java.xml, java.sql, java.desktop, ...) and of the jars, the packages the
    repository imports, then those their stubs name, a level each."""

    language = "java"
    max_depth, max_files = 6, 6000

    def __init__(self, java: str, version: str, root: Path) -> None:
        self.java, self.version = java, version
        self.jars = _jar_state(classpath_jars(root))
        jars = hashlib.sha256(json.dumps(self.jars).encode()).hexdigest()[:16] if self.jars else "none"
        stubber = hashlib.sha256(_STUBBER.read_bytes()).hexdigest()[:16]
        self._identity = f"java: {version.splitlines()[0]}; {MODULES}; jars {len(self.jars)} {jars}; stubs {stubber}"

    def identity(self) -> str:
        return self._identity

    def named(self) -> str:
        jars = f" and {len(self.jars)} jar{'s' if len(self.jars) != 1 else ''} of the project's classpath" \
            if self.jars else ""
        return f"the JDK ({self.version.splitlines()[0]}){jars}, as stubs of their public API"

    def stubs(self) -> Stubs | None:
        return _stubs(self.java, self.identity(), tuple(jar for jar, _size, _mtime in self.jars))

    def meta(self) -> dict[str, str]:
        made = self.stubs()
        return {"library_java": self.identity(), "library_stubs": str(made.folder) if made else ""}

    def imported(self, project_modules: set[str], imports: Iterable[tuple]) -> set[str]:
        """`<jdk>` (every file imports java.lang without saying so, JLS 7.3; java.base is in
        whole), and `a.b.*` for another package a file imports from, of the JDK's other modules
        or of a jar (`import a.b.C;`, `import a.b.*;`, `import static a.b.C.m;`). Names of the
        repository's own classes (their member classes too: `import static a.b.C.Kind.ONE;`) and
        packages are not the library's."""
        made = self.stubs()
        packages = {module.rpartition(".")[0] for module in project_modules}
        names = {JDK} if project_modules else set()
        for module, name, star in imports:
            if not module or module in packages or _within(module, project_modules):
                continue
            dotted = module if star or not name else f"{module}.{name}"
            package = made.package_of(dotted) if made is not None else module
            if made is None or not made.whole(package):
                names.add(f"{package}.*")
        return names

    def expand(self, names: set[str]) -> set[str]:
        return set(names)

    def _classes(self, name: str, made: Stubs) -> list[str]:
        if name == JDK:
            return [q for q, origin in made.origins.items() if origin in WHOLE]
        return made.packages.get(name[:-2], []) if name.endswith(".*") else []

    def files(self, modules: list[str]) -> list[tuple[SourceFile, str]]:
        made = self.stubs()
        if made is None:
            return []
        out = []
        for name in modules:
            for qualname in self._classes(name, made):
                rel = qualname.replace(".", "/") + ".java"
                try:
                    st = os.stat(made.folder / rel)
                except OSError:
                    continue
                layer = "jar" if made.origins[qualname].endswith(".jar") else "jdk"
                out.append((SourceFile(f"{LABEL}/{rel}", str(made.folder / rel), qualname, False, st.st_size,
                                       st.st_mtime_ns, "java"), layer))
        return out

    def missing_note(self, root: Path, names: set[str]) -> str | None:
        made = self.stubs()
        if made is None:
            return (f"the JDK ({self.java}) could not list its classes: the library layer is empty and names outside "
                    "the repository resolve by their spelling alone")
        absent = sorted(name[:-2] for name in names if name != JDK and not self._classes(name, made))
        if not absent:
            return None
        shown = ", ".join(absent[:8]) + (f" and {len(absent) - 8} more" if len(absent) > 8 else "")
        return (f"{len(absent)} imported package{'s are' if len(absent) > 1 else ' is'} in no jar the library layer "
                f"read ({len(self.jars)} jar{'s' if len(self.jars) != 1 else ''}): {shown}; their names stay "
                "unresolved. Name the jars with CODEGRAPH_JAVA_CLASSPATH, or let the build fetch the dependencies "
                "(`mvn dependency:resolve`, a Gradle build) where the layer looks for them")

    def changed(self, meta: dict[str, str], files: list[tuple[str, int, int]]) -> bool:
        folder = meta.get("library_stubs") or ""
        for path, size, mtime in files:
            prefix, _, rest = path.partition("/")
            try:
                st = os.stat(os.path.join(folder, rest)) if prefix == LABEL and folder else None
            except OSError:
                return True
            if st is None or st.st_size != size or st.st_mtime_ns != mtime:
                return True
        return False


def _within(dotted: str, classes: set[str]) -> bool:
    """Is `dotted` one of these classes or a member class of one (`a.b.C.Kind` of `a.b.C`)?"""
    while dotted:
        if dotted in classes:
            return True
        dotted = dotted.rpartition(".")[0]
    return False


def java_library(root: Path) -> JavaLibrary | None:
    """The layer for a repository, or None without a JDK (or with CODEGRAPH_JDK=off)."""
    java = shutil.which("java")
    if os.environ.get("CODEGRAPH_JDK") == "off" or java is None:
        return None
    version = java_version(java)
    return JavaLibrary(java, version, root) if version else None

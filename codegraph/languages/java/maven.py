"""A Java task's tests through Maven, behind refine's fence.

The fence has no network, so Maven runs offline there (`-o`), reading the user's local repository
(`~/.m2/repository`, or the `localRepository` of `~/.m2/settings.xml`) read-only and no settings
file of the user's (credentials stay outside). What offline Maven would miss is fetched once per
run before the first fenced one, outside the fence, in a copy of the candidate: `prepare` runs
the build up to the tests with one test selected, an empty class of its own, so the plugins and
the test provider surefire picks at run time are in the local repository. The project's build
runs there (its plugins, as for Maven's classpath in check.py), not the model's code nor the
project's tests: javac only compiles them, and the selection loads no other test class.

JVMs in the fence live under a per-process address-space limit: their heaps and reserved spaces
are sized from the task's memory limit (`JAVA_TOOL_OPTIONS`, which every JVM Maven and surefire
start reads).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from ..base import TestPlan, Unsupported

_TEST_METHOD = re.compile(r"^[A-Za-z_$][\w$]*$")
PREPARE_CLASS = "CodegraphPrepareTest"
SUREFIRE_SELECTION = ("-DfailIfNoTests=false", "-Dsurefire.failIfNoSpecifiedTests=false")
# prepare's own empty test class has no licence header nor package: the source checks a build may
# run (and fail on it) are skipped there, their plugins still fetched; the fenced run keeps them
PREPARE_SKIPS = ("-Dcheckstyle.skip=true", "-Dspotbugs.skip=true", "-Dpmd.skip=true", "-Dcpd.skip=true",
                 "-Drat.skip=true", "-Dlicense.skip=true", "-Dspotless.check.skip=true")


def local_repository() -> Path:
    """Where the user's Maven keeps artifacts: settings.xml's localRepository, else ~/.m2/repository."""
    settings = Path.home() / ".m2" / "settings.xml"
    try:
        for element in ET.parse(settings).getroot().iter():
            if element.tag.rpartition("}")[2] == "localRepository" and (element.text or "").strip():
                return Path(os.path.expandvars(element.text.strip().replace("${user.home}", str(Path.home()))))
    except (OSError, ET.ParseError):
        pass
    return Path.home() / ".m2" / "repository"


@dataclass(frozen=True)
class Selection:
    """Where Maven runs (the reactor's top pom), the module the tests are in, and surefire's -Dtest."""

    top: Path
    module: str  # the tests' module relative to top ("" when it is top)
    tests: str


def _poms_above(path: Path, root: Path) -> list[Path]:
    return [p for p in (path, *path.parents) if p.is_relative_to(root) and (p / "pom.xml").is_file()]


def selection(repo: Path, tests: list[str]) -> Selection:
    """The tests (paths of test files, `path::method` for one method) as one Maven invocation."""
    if not tests:
        raise Unsupported("a Java task's tests are its test files (src/test/java/.../FooTest.java)")
    root = repo.resolve()
    patterns, tops = [], {}  # each test's module -> the reactor's top above it
    for test in tests:
        path, _, method = test.partition("::")
        if not path.endswith(".java"):
            raise Unsupported(f"tests entry {test!r}: give a Java test file (FooTest.java, or FooTest.java::method)")
        if method and not _TEST_METHOD.match(method):
            raise Unsupported(f"tests entry {test!r}: {method!r} is not a method name")
        file = (root / path).resolve()
        if not _TEST_METHOD.match(file.stem):  # surefire reads -Dtest as patterns: a name, nothing else
            raise Unsupported(f"tests entry {test!r}: {file.name} is not named as a Java class is")
        poms = _poms_above(file.parent, root)
        if not poms:
            raise Unsupported(f"tests entry {test!r}: no pom.xml above it in the repository (Maven runs Java tests)")
        tops[poms[0]] = poms[-1]
        patterns.append(file.stem + (f"#{method}" if method else ""))
    if len(tops) > 1:
        names = ", ".join(sorted(str(m.relative_to(root)) or "." for m in tops))
        raise Unsupported(f"the tests are in {len(tops)} Maven modules ({names}): give tests of one module")
    (module, top), = tops.items()
    return Selection(top, module.relative_to(top).as_posix() if module != top else "", ",".join(patterns))


def check(repo: Path, tests: list[str]) -> None:
    """Maven is there and the tests are one selection (Unsupported says what to give instead)."""
    selection(repo, tests)
    _mvn()


def jvm_options(memory_mb: int) -> str:
    """Heap and reserved spaces that fit one process's share of the address-space limit."""
    heap = max(256, memory_mb // 4)
    return (f"-Xmx{heap}m -XX:CompressedClassSpaceSize=128m -XX:ReservedCodeCacheSize=128m "
            "-XX:MaxMetaspaceSize=512m -XX:TieredStopAtLevel=1")


def _mvn() -> str:
    found = shutil.which("mvn")
    if found is None:
        raise Unsupported("Java tests run through Maven: install it (Debian: apt install maven) or drop the tests")
    return os.path.realpath(found)


# surefire's count of a run's tests: `[INFO] Tests run: 3, ...` (surefire 3), `Tests run: 3, ...` (2.x)
TESTS_RAN = r"^(?:\[\w+\] )?Tests run: (\d+)"
# Maven's progress lines (not -q: surefire's counts are how a run that ran no test is told from a
# pass); what is kept says what ran, what failed and the build's result
_NOISE = (r"^(Picked up JAVA_TOOL_OPTIONS: |\[(INFO|WARNING)\] (?!.*(Tests run:|Running |BUILD|Reactor Summary|"
          r"T E S T S|Results|FAIL|ERROR))|\[(INFO|WARNING)\]\s*$|\s*\[java\] Picked up)")


def _reactor_args(chosen: Selection) -> list[str]:
    return ["-pl", chosen.module, "-am"] if chosen.module else []


def test_plan(repo: Path, tests: list[str], run_dir: Path, memory_mb: int) -> TestPlan:
    """Maven, offline, on the run's copy; the user's settings unread, the local repository read-only."""
    chosen = selection(repo, tests)
    settings = run_dir / "maven-settings.xml"
    settings.write_text("<settings/>\n", encoding="utf-8")
    repository = local_repository()
    argv = [_mvn(), "-B", "-o", "-s", str(settings), f"-Dmaven.repo.local={repository}",
            "-f", str(chosen.top / "pom.xml"), *_reactor_args(chosen), "test", f"-Dtest={chosen.tests}",
            *SUREFIRE_SELECTION]
    return TestPlan(argv, env={"JAVA_TOOL_OPTIONS": jvm_options(memory_mb), "MALLOC_ARENA_MAX": "2",
                               "MAVEN_SKIP_RC": "1"},
                    read_only=(str(repository),), noise=_NOISE, tests_ran=TESTS_RAN,
                    cwd=chosen.top)  # a build's relative paths (`../code-style/x.xml`) are the top pom's


def prepare(repo: Path, tests: list[str], timeout_s: float) -> str | None:
    """Fetch, outside the fence and before its first run, what the offline run will need; `repo`
    is a copy of the candidate this may change. A note when Maven could not (the fenced run then
    says what it misses)."""
    chosen = selection(repo, tests)
    module = chosen.top / chosen.module if chosen.module else chosen.top
    folder = module / "src" / "test" / "java"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{PREPARE_CLASS}.java").write_text(f"public class {PREPARE_CLASS} {{}}\n", encoding="utf-8")
    try:
        done = subprocess.run([_mvn(), "-B", "-q", "-f", str(chosen.top / "pom.xml"), *_reactor_args(chosen),
                               "test", f"-Dtest={PREPARE_CLASS}", *SUREFIRE_SELECTION, *PREPARE_SKIPS],
                              cwd=chosen.top, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return f"Maven did not fetch the tests' plugins within {timeout_s:g} s"
    except OSError as exc:
        return f"Maven could not start: {exc}"
    if done.returncode != 0:
        tail = " ".join((done.stdout + done.stderr).split()[-40:])
        return f"Maven could not prepare the tests' build (exit {done.returncode}): {tail}"
    return None

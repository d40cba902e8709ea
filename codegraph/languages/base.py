"""What every language gives the rest of codegraph, and the registry that finds one by name or by
a file's suffix. A language is one folder (`languages/python/`); nothing outside it knows its
grammar, its linter or its naming rules.

The pipeline asks a language, in order: is this folder a package (`package_folder`), what is a
file's module name (`module_name`), what rows does a file hold (`extract`, into the tables of
schema.py, as a FileFacts). Refine asks it to read a model's answer and splice it into a file
(`code_from_answer`, `splice`, `definition_of`, `import_insert_line`) and to run a task's tests
behind the fence (`check_tests`, `prepare_tests`, `test_plan`). Everything a language
leaves out has a neutral default or says it cannot, so a new one starts with `name`, `suffixes`
and `extract` and grows from there. Parsing workers are fresh processes that know the languages
`codegraph.languages` imports; one registered at run time elsewhere is known where it was
registered (index with jobs=1, or import it from there)."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Mapping, TypeVar

if TYPE_CHECKING:  # annotations only: the protocol loads neither (a command that only reads stays light)
    import duckdb
    import pyarrow as pa

from ..errors import CodegraphError
from .checks import Checker, Diagnostic, Rule

EXTRACT_SECONDS = 20.0  # one file's budget: past it the file is skipped and reported, not the index stalled


@dataclass
class FileFacts:
    """One file's rows, by table: what a language's extract returns."""

    path: str
    module: str
    file_id: int
    sha256: str
    lines: int = 0
    parse_errors: int = 0
    rows: dict[str, list[tuple]] = field(default_factory=dict)  # table -> rows of its NamedTuple row type


class UndecodableSource(ValueError):
    """The file is binary or not in the encoding it declares: skipped and reported."""


class ExtractionBudget(Exception):
    """A file took longer to extract than EXTRACT_SECONDS."""


@dataclass
class Spliced:
    """A file with a model's definition put in."""

    text: str
    first_line: int  # 1-based span of the candidate in the new file
    last_line: int
    import_lines: tuple[int, ...] = ()  # imports the candidate brought, added to the file's imports


@dataclass
class TestPlan:
    """How a language runs a task's tests behind refine's fence: the command, and what the fence
    must give it beyond the run's own folder."""

    argv: list[str]
    roots: list[Path] = field(default_factory=list)  # where the tests import the project from (PYTHONPATH)
    env: dict[str, str] = field(default_factory=dict)  # the fence's own variables for this tool
    read_only: tuple[str, ...] = ()  # folders under the home folder or /tmp the tests read (the sandbox hides the rest)
    noise: str | None = None  # a regular expression of output lines the model need not read
    cwd: Path | None = None  # where it runs (default: the run's copy of the repository)
    tests_ran: str | None = None  # a regular expression whose group counts the tests run: a pass needs one > 0


class Unsupported(CodegraphError):
    """The language cannot do this yet."""


def stable_id(*parts: str) -> int:
    """A 63-bit id that is the same on every run for the same symbol in the same file."""
    digest = hashlib.blake2b("\x00".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


class FileIds:
    """stable_id(path, *parts), made unique within one file: a name defined twice in one scope
    (a function and a variable, two classes X in one function) gets two ids."""

    def __init__(self, path: str):
        self.path = path
        self.taken: set[int] = set()

    def __call__(self, *parts: str) -> int:
        sid = stable_id(self.path, *parts)
        n = 1
        while sid in self.taken:
            n += 1
            sid = stable_id(self.path, *parts, str(n))
        self.taken.add(sid)
        return sid


def count_errors(root: Any) -> int:
    """The ERROR and MISSING nodes of a tree-sitter tree (> 0: the file was partly recovered);
    iterative, so 500-deep nesting does not reach Python's recursion limit."""
    if not root.has_error:
        return 0
    errors, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            errors += 1
        elif node.has_error:
            stack.extend(node.children)
    return errors


class Language(ABC):
    """One programming language. Subclasses register themselves with @register."""

    name: ClassVar[str]
    title: ClassVar[str] = ""  # as prose and prompts write it (Python); default: the name capitalized
    suffixes: ClassVar[tuple[str, ...]]  # the files it reads, by how their names end
    # files that make a folder part of the module path even where the walk would leave it out
    # (build/, dist/): Python's __init__.py
    package_markers: ClassVar[frozenset[str]] = frozenset()

    def package_folder(self, rel_dir: str, filenames: list[str], packages: set[str]) -> bool:
        """Does this folder belong to the module path of the files under it? `packages` holds
        the folders above it found so (the walk is top-down)."""
        return False

    def source_folder(self, rel_dir: str) -> bool:
        """Is the folder part of the language's source tree whatever its name (a `build/` there
        is a package, not a build's output)?"""
        return False

    def module_name(self, rel_path: str, packages: set[str]) -> str:
        """The dotted name others use for the file. Default: its path without the suffix."""
        stem = rel_path[: -len(next(s for s in self.suffixes if rel_path.endswith(s)))]
        return stem.replace("/", ".")

    def is_package(self, rel_path: str) -> bool:
        """Does the file stand for its folder (Python's __init__.py)?"""
        return False

    def module_of_file(self, path: Path) -> str:
        """The module name of a file outside any walk (a candidate a model wrote)."""
        return path.stem

    @abstractmethod
    def extract(self, data: bytes, path: str, module: str, is_package: bool,
                budget_s: float | None = None) -> FileFacts:
        """The rows of one file, within budget_s seconds (None: EXTRACT_SECONDS). Raises
        UndecodableSource or ExtractionBudget for a file to skip."""

    def library(self, python: str | None, root: Path | None = None) -> Library | None:
        """The library layer for an environment (`python`: its interpreter; None: the repository
        at `root`'s own environment if the language finds one, else this one)."""
        return None

    def resolution(self) -> Resolution | None:
        """What its names mean, for a build (None: its rows go in as extracted, unresolved)."""
        return None

    def declaration(self, kind: str, name: str, signature: str | None, annotation: str | None = None,
                    value: str | None = None, qualname: str | None = None) -> str:
        """A definition's row as one line of the language (cards and the task context show it):
        Python's `def parse(self, s) -> int`, Java's `int parse(String s)`."""
        head = f"{name}{signature or ''}"
        return f"{head} = {value}" if value else head

    def qualname(self, module: str, symbol: str) -> str:
        """The qualified name of `symbol` (`name`, `Class.method`) written in the file of `module`."""
        return f"{module}.{symbol}"

    def needs_import(self, module: str, defined_in: str) -> bool:
        """Does code in `module` import what is defined at the top of `defined_in` to use it?"""
        return module != defined_in

    def import_statement(self, module: str, name: str) -> str:
        """The line that imports `name` defined at the top of `module`."""
        return f"import {module}.{name}"

    # -- refine: a model's answer into a file --------------------------------------------------
    def code_from_answer(self, answer: str, symbol: str) -> str | None:
        """The code for `symbol` in a model's answer, or None when there is none."""
        raise Unsupported(f"refine cannot read {self.name} answers yet")

    def splice(self, source: str, symbol: str, code: str) -> Spliced:
        """`source` with `symbol`'s definition replaced by (or added as) `code`."""
        raise Unsupported(f"refine cannot splice {self.name} code yet")

    def definition_of(self, text: str, symbol: str) -> str:
        """`symbol`'s definition in `text`, at its own indentation, or ""."""
        raise Unsupported(f"refine cannot find {self.name} definitions yet")

    def import_insert_line(self, text: str) -> int:
        """0-based line where an import goes in `text`."""
        raise Unsupported(f"refine cannot place {self.name} imports yet")

    def check_tests(self, repo: Path, tests: list[str]) -> None:
        """Raise Unsupported, with what to give instead, when `tests` cannot be run as this
        language runs tests (asked before the first model call)."""

    def test_plan(self, repo: Path, tests: list[str], run_dir: Path, python: str, memory_mb: int) -> TestPlan:
        """The fenced command that runs `tests` (confined paths) in `repo`, a copy made for one run
        inside `run_dir`."""
        raise Unsupported(f"refine cannot run {self.name} tests yet")

    def prepare_tests(self, repo: Path, tests: list[str], timeout_s: float) -> str | None:
        """Outside the fence, before a fenced run, in a copy of the candidate: fetch what the
        tests' tools need from the network the fence does not have. None when ready, else why not."""
        return None

    # -- diagnostics: the checker, how to read its messages, the rule table ----------------------
    checker_name: ClassVar[str] = ""  # what checks its code (pylint)
    categories: ClassVar[Mapping[str, str]] = {}  # message symbol -> CoCoGen category
    syntax_errors: ClassVar[frozenset[str]] = frozenset()  # kept wherever they land (see keep)
    not_about_code: ClassVar[tuple[str, ...]] = ()  # the checker's messages about its own configuration

    def checker(self, mode: str | None = None) -> Checker:
        """A new checker (`mode`: the language's own choices, e.g. Python's worker or subprocess)."""
        raise Unsupported(f"codegraph cannot check {self.name} code yet")

    def shared_checker(self) -> Checker:
        """One checker per language and process, for callers that do not manage one."""
        found = _SHARED_CHECKERS.get(self.name)
        if found is None:
            found = _SHARED_CHECKERS[self.name] = self.checker()
        return found

    def error_symbols(self) -> dict[str, str]:
        """Every error message the checker can give: symbol -> message id."""
        return {}

    def rules(self) -> tuple[Rule, ...]:
        """The rule table, in the order the rules of one message are tried."""
        return ()

    def rules_for(self, symbol: str) -> list[Rule]:
        return [rule for rule in self.rules() if rule.symbol == symbol]

    def missing_module(self, d: Diagnostic) -> str | None:
        """The module a message says cannot be found, if it says that."""
        return None

    def undefined_name(self, d: Diagnostic) -> str | None:
        """The name a message says is not defined, if it says that."""
        return None

    def keep(self, diagnostics: Iterable[Diagnostic], first: int | None, last: int | None,
             import_lines: Iterable[int] = (), known_module: Callable[[str], bool] | None = None
             ) -> list[Diagnostic]:
        """The messages that are the candidate's doing; `diagnose` and `refine` both filter with this.

        Kept: messages on the candidate's lines, its first and last included (one that starts before
        the span but ends inside it, a call spanning lines, too); messages on the import lines the
        candidate brought; a syntax error wherever it lands (a candidate can break the lines after
        it, and a file that does not parse has no other message). Dropped: a missing module the
        repository already imports elsewhere (`known_module(name)` says so): a dependency the
        checker cannot see, not a hallucination.
        """
        imports = set(import_lines)
        out = []
        for d in diagnostics:
            inside = not ((first is not None and max(d.line, d.end_line or d.line) < first)
                          or (last is not None and d.line > last))
            if not (inside or d.line in imports or d.symbol in self.syntax_errors):
                continue
            module = self.missing_module(d) if known_module is not None else None
            if module is not None and known_module(module):
                continue
            out.append(d)
        return out


Emit = Callable[[str, "pa.Table"], None]


class Resolution(ABC):
    """A language's name resolution over one build: the resolution columns of its rows (schema
    stage "resolve": what an import, a call, a reference and a base name mean). A full build
    hands it every extracted table of the language's files; an update hands it the changed files'
    tables and the database, and the language decides what else their change reaches (it knows
    what its resolution read). Tables of schema.RESOLVED_TABLES are inserted by the resolution,
    the others by the build."""

    @abstractmethod
    def full(self, project: dict[str, pa.Table], library: dict[str, pa.Table], modules: dict[int, str],
             jobs: int | None, emit: Emit, library_resolved: bool = False) -> Callable[[duckdb.DuckDBPyConnection], None]:
        """Resolve a full build: `project` and `library` hold the extracted tables of the language's
        files (they are emptied as they are used, to free memory early); `modules` maps every
        file id to its module. `jobs`: the processes that may resolve (forked copies past the
        first), None for the language's default. Each resolved table goes to emit(name, table) as soon as it is whole
        (`library.<name>` for the library's). The library's rows are resolved from the library
        alone, never from the project (the library cache keeps them per set of library files);
        with library_resolved the build has them already and only the project's are asked for.
        Returns what to write once every table is in."""

    @abstractmethod
    def plan_update(self, con: duckdb.DuckDBPyConnection, fresh: dict[str, pa.Table]) -> Any:
        """Before an update deletes the changed files' rows: what their change can reach, read
        from the rows still there. `fresh`: the changed files' new extracted tables (of this
        language's files); in the transaction, temp tables _gone (file_id: the rows replaced),
        _fresh (file_id: the files parsed now) and _changed (module: those of both). It may take
        rows out of `fresh` (in place) whose like it keeps in the database under another file id
        until apply_update: the update inserts what `fresh` holds then."""

    @abstractmethod
    def apply_update(self, con: duckdb.DuckDBPyConnection, plan: Any, fresh: dict[str, pa.Table],
                     modules: dict[int, str]) -> int:
        """After the update has replaced the changed files' rows but those of RESOLVED_TABLES:
        resolve and insert them, and resolve again what the plan says the change reaches. Returns
        how many other files were resolved again."""


class Library(ABC):
    """The code a repository uses but does not hold, indexed beside it in the `library` schema
    with a layer of its own (Python: the standard library and site-packages). The build walks
    it from the repository's imports: expand the names, find their files, extract them, read
    what those import, up to max_depth and max_files."""

    language: ClassVar[str]  # the language whose files it holds (and whose resolution reads them)
    max_depth: ClassVar[int]  # import levels followed from the repository's own imports
    max_files: ClassVar[int]  # files indexed at most

    @abstractmethod
    def identity(self) -> str:
        """What makes two environments the same library: a database built with another is rebuilt."""

    def named(self) -> str:
        """The environment as the report names it."""
        return self.identity()

    @abstractmethod
    def meta(self) -> dict[str, str]:
        """What the database records of it (read back by `changed`)."""

    @abstractmethod
    def imported(self, project_modules: set[str], imports: Iterable[tuple]) -> set[str]:
        """The names outside the repository that these `imports` rows (imported_module, name,
        is_star) name."""

    @abstractmethod
    def expand(self, names: set[str]) -> set[str]:
        """The modules to look for, for these imported names (their parent packages too)."""

    @abstractmethod
    def files(self, modules: list[str]) -> list[tuple]:
        """(discover.SourceFile, layer) of the modules found in the library."""

    def missing_note(self, root: Path, names: set[str]) -> str | None:
        """One line for the report when some of these imported names are not in the environment
        at all (their calls stay unresolved), with how to point at the right one; None when all are."""
        return None

    @abstractmethod
    def changed(self, meta: dict[str, str], files: list[tuple[str, int, int]]) -> bool:
        """Has a file the database holds (path, size, mtime_ns) changed since, or gone?"""


L = TypeVar("L", bound=type[Language])
_SHARED_CHECKERS: dict[str, Checker] = {}
_BY_NAME: dict[str, Language] = {}
_BY_SUFFIX: dict[str, Language] = {}


def register(cls: L) -> L:
    """Class decorator: make the language known by its name and suffixes (a later registration of
    the same name replaces the earlier one)."""
    if not cls.title:
        cls.title = cls.name.capitalize()
    language = cls()
    old = _BY_NAME.pop(language.name, None)
    if old is not None:
        for suffix in old.suffixes:
            _BY_SUFFIX.pop(suffix, None)
    for suffix in language.suffixes:
        other = _BY_SUFFIX.get(suffix)
        if other is not None and other.name != language.name:
            raise ValueError(f"{suffix} files are already read by {other.name}")
        _BY_SUFFIX[suffix] = language
    _BY_NAME[language.name] = language
    return cls


def unregister(name: str) -> None:
    language = _BY_NAME.pop(name)
    for suffix in language.suffixes:
        _BY_SUFFIX.pop(suffix, None)


def language(name: str) -> Language:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"no language {name!r}: known are {', '.join(sorted(_BY_NAME))}") from None


def for_file(name: str) -> Language | None:
    """The language that reads a file of this name, if any."""
    dot = name.rfind(".")
    while dot >= 0:
        found = _BY_SUFFIX.get(name[dot:])
        if found is not None:
            return found
        dot = name.rfind(".", 0, dot)
    return None


def checked_language(path: Path) -> Language:
    """The language whose checker lints this file, or the error that says none does."""
    language = for_file(path.name)
    if language is None or not language.checker_name:
        known = ", ".join(f"{lang.name} ({' '.join(lang.suffixes)})" for lang in languages() if lang.checker_name)
        raise CodegraphError(f"{path.name} is not a file codegraph can check: give one of "
                             f"{known}")
    return language


def languages() -> list[Language]:
    return list(_BY_NAME.values())


def suffixes() -> tuple[str, ...]:
    return tuple(_BY_SUFFIX)

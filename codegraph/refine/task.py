"""The task file: what to write, where, and how to tell it is done.

A task file may come from anywhere (a benchmark, a colleague, a model), so everything it names
is confined: the target is a regular file inside the repository, the tests are paths or node
ids inside it, never options for pytest.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema

from ..environment import looks_secret
from ..errors import CodegraphError
from ..languages import for_file, suffixes

MODES = ("direct", "naive-rag", "repocoder", "reflexion", "cocogen", "rrr")
ISOLATION_LEVELS = ("auto", "sandbox", "no-network", "rlimits")

# A JSON Schema of the task file; docs/task.md is generated from it and load_task validates with it.
TASK_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "codegraph refine task",
    "type": "object",
    "required": ["repo", "target_file", "symbol", "description"],
    "additionalProperties": False,
    "properties": {
        "repo": {"type": "string", "minLength": 1,
                 "description": "Repository path, relative to the task file or absolute."},
        "target_file": {"type": "string", "minLength": 1,
                        "description": "File to write into, relative to the repository; it must be a regular "
                                       "file inside the repository (symlinks are followed and must stay inside)."},
        "symbol": {"type": "string", "pattern": r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$",
                   "description": "What to write: `name` (function or class) or `Class.method`; "
                                  "replaced when it exists, added otherwise."},
        "description": {"type": "string", "minLength": 1,
                        "description": "What the code must do, in natural language."},
        "tests": {"type": "array", "items": {"type": "string", "minLength": 1}, "default": [],
                  "description": "Tests inside the repository that must pass. Python: pytest paths or node ids. "
                                 "Java: test files (`src/test/java/a/FooTest.java`, or `...FooTest.java::method`) "
                                 "of one Maven module, run by Maven offline behind the fence. Options (anything "
                                 "starting with `-`) and argument files (`@file`) are refused."},
        "starting_code": {"type": ["string", "null"], "default": None,
                          "description": "A first candidate (e.g. a model's earlier answer); the loop starts "
                                         "by checking it instead of generating one."},
        "python": {"type": ["string", "null"], "default": None,
                   "description": "The interpreter that runs a Python task's tests (a project's own virtualenv); "
                                  "default: the one running codegraph."},
        "mode": {"enum": list(MODES), "default": "cocogen",
                 "description": "Which paper's loop to run (see docs/refine.md)."},
        "env": {"type": "object", "additionalProperties": {"type": "string"}, "default": {},
                "description": "Environment variables set for the tests, inside the fence only. The tests "
                               "otherwise see only an allow-list (LANG, the virtualenv's variables), never API "
                               "keys. Refused: the fence's own (HOME, TMPDIR, PYTHONPATH), what changes how "
                               "programs start (LD_*, PYTHON* but a few harmless ones, PYTEST_ADDOPTS, "
                               "PYTEST_PLUGINS, ...), and a PATH with an entry outside the repository (give "
                               "entries relative to it: they are put before the usual PATH)."},
        "pass_env": {"type": "array", "items": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
                     "default": [], "description": "Names of variables of the caller's environment the "
                                                   "tests may see as well; names that look like secrets "
                                                   "(KEY, TOKEN, SECRET, PASSWORD, ...) are refused: the "
                                                   "tests' output goes back to the model."},
        "isolation": {"enum": list(ISOLATION_LEVELS), "default": "auto",
                      "description": "How the tests are fenced (docs/refine.md): `auto` takes the strongest "
                                     "level this machine offers."},
        "limits": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "iterations": {"type": "integer", "minimum": 1, "default": 4},
                "seconds": {"type": "number", "exclusiveMinimum": 0, "default": 600,
                            "description": "Wall time of the whole run, model calls, lint and tests included."},
                "tokens": {"type": "integer", "minimum": 100, "default": 60000,
                           "description": "Prompt plus completion tokens over the whole run."},
                "test_seconds": {"type": "number", "exclusiveMinimum": 0, "default": 120},
                "test_memory_mb": {"type": "integer", "minimum": 64, "default": 4096,
                                   "description": "Memory of the tests' whole process tree (and the address "
                                                  "space of each process)."},
                "test_disk_mb": {"type": "integer", "minimum": 16, "default": 2048,
                                 "description": "What the tests may write into their copy of the repository."},
            },
        },
    },
}


class TaskError(CodegraphError):
    pass


@dataclass
class Limits:
    iterations: int = 4
    seconds: float = 600
    tokens: int = 60000
    test_seconds: float = 120
    test_memory_mb: int = 4096
    test_disk_mb: int = 2048


@dataclass
class Task:
    repo: Path
    target_file: str
    symbol: str
    description: str
    tests: list[str] = field(default_factory=list)
    starting_code: str | None = None
    mode: str = "cocogen"
    limits: Limits = field(default_factory=Limits)
    source: Path | None = None
    python: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    pass_env: list[str] = field(default_factory=list)
    isolation: str = "auto"

    @property
    def target_path(self) -> Path:
        return self.repo / self.target_file


def load_task(path: str | Path) -> Task:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"no task file at {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskError(f"cannot read the task file {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise TaskError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise TaskError(f"{path} nests its JSON too deeply to be a task file (docs/task.md)") from None
    return task_from_dict(data, base=path.parent, source=path)


def _violations(data) -> list[str]:
    validator = jsonschema.Draft202012Validator(TASK_SCHEMA)
    out = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        where = ".".join(str(p) for p in error.absolute_path) or "(the task)"
        message = error.message
        if error.validator == "additionalProperties":
            message += f"; allowed: {', '.join(sorted(error.schema.get('properties', {})))}"
        out.append(f"{where}: {message}")
    return out


def confine_target(repo: Path, target_file: str) -> str:
    """The target as a path relative to the repository, after following symlinks; it must be
    a regular file inside the repository."""
    if Path(target_file).is_absolute():
        raise TaskError(f"target_file {target_file!r} is absolute: give a path relative to the repository")
    root = repo.resolve()
    try:
        real = (root / target_file).resolve(strict=True)
    except (OSError, RuntimeError):
        raise TaskError(f"target_file {target_file!r} is not a file in {root}") from None
    if not real.is_relative_to(root) or any(part == ".codegraph" for part in real.relative_to(root).parts
                                           if real.is_relative_to(root)):
        raise TaskError(f"target_file {target_file!r} leads outside the repository {root} (to {real}): "
                        "the target must be a file inside it")
    if not stat.S_ISREG(os.stat(real).st_mode):
        raise TaskError(f"target_file {target_file!r} is not a regular file")
    if for_file(real.name) is None:
        raise TaskError(f"target_file {target_file!r} is not a file of a language codegraph reads "
                        f"({', '.join(suffixes())})")
    return real.relative_to(root).as_posix()


def confine_tests(repo: Path, tests: list[str]) -> list[str]:
    """Test paths and node ids inside the repository; options are refused."""
    root = repo.resolve()
    for test in tests:
        if test.startswith("-"):
            raise TaskError(f"tests entry {test!r} is an option: give test paths or node ids only "
                            "(pytest options are not accepted from a task file)")
        if test.startswith("@"):
            raise TaskError(f"tests entry {test!r} would make pytest read its options from a file: give test "
                            "paths or node ids only")
        if "\0" in test:
            raise TaskError(f"tests entry {test!r} holds a NUL character")
        path = test.split("::", 1)[0]
        if not path or Path(path).is_absolute():
            raise TaskError(f"tests entry {test!r}: give a path relative to the repository")
        real = (root / path).resolve()
        if not real.is_relative_to(root):
            raise TaskError(f"tests entry {test!r} leads outside the repository {root}")
        if not real.exists():
            raise TaskError(f"tests entry {test!r}: {path} does not exist in {root}")
    return list(tests)


# Variables a task may not set for its tests: the fence's own, and those that change how programs
# and pytest start (options through PYTEST_ADDOPTS would pass the filter on `tests`).
_FENCE_VARIABLES = {"HOME", "TMPDIR", "TMP", "TEMP", "PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_PLUGINS",
                    "JAVA_TOOL_OPTIONS",
                    "GCONV_PATH", "GLIBC_TUNABLES", "BASH_ENV", "ENV", "SHELLOPTS", "PS4", "IFS"}
_HARMLESS_PYTHON = {"PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONWARNINGS", "PYTHONFAULTHANDLER",
                    "PYTHONDEVMODE", "PYTHONTRACEMALLOC", "PYTHONASYNCIODEBUG", "PYTHONDONTWRITEBYTECODE"}


def _refused_variable(name: str) -> str | None:
    """Why the tests may not get a variable of this name, or None."""
    upper = name.upper()
    if upper.startswith(("LD_", "DYLD_")):
        return "it changes what the dynamic loader loads"
    if upper.startswith("PYTHON") and upper not in _HARMLESS_PYTHON:
        return "it changes how Python starts"
    if upper in _FENCE_VARIABLES:
        return "the fence sets it, or it changes how programs start"
    return None


def confine_env(repo: Path, env: dict[str, str], pass_env: list[str]) -> None:
    """The task's variables exist inside the fence only, and may not undo it."""
    root = repo.resolve()
    for name, value in env.items():
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise TaskError(f"env name {name!r} is not a variable name")
        if "\0" in value:
            raise TaskError(f"env {name} holds a NUL character")
        if name == "PATH":
            for entry in value.split(os.pathsep):
                if not entry or Path(entry).is_absolute() or not (root / entry).resolve().is_relative_to(root):
                    raise TaskError(f"env PATH entry {entry!r} is not a folder inside the repository: give entries "
                                    "relative to it (the usual PATH is added after them)")
            continue
        why = _refused_variable(name)
        if why:
            raise TaskError(f"env may not set {name}: {why}")
    for name in pass_env:
        why = _refused_variable(name) or ("PATH is the fence's own" if name == "PATH" else None)
        if why:
            raise TaskError(f"pass_env may not name {name}: {why}")
        if looks_secret(name):
            raise TaskError(f"pass_env names {name}, which looks like a secret: the tests run model-written code "
                            "and what they print goes back to the model; give them a test-only value with env")


def task_from_dict(data, base: Path = Path("."), source: Path | None = None) -> Task:
    where = source or "task"
    problems = _violations(data)
    if problems:
        raise TaskError(f"{where} does not match the task schema (docs/task.md):\n  " + "\n  ".join(problems))
    repo = Path(data["repo"])
    repo = (base / repo).resolve() if not repo.is_absolute() else repo.resolve()
    if not repo.is_dir():
        raise TaskError(f"{where}: repo {repo} is not a directory")
    try:
        target_file = confine_target(repo, data["target_file"])
        tests = confine_tests(repo, data.get("tests", []))
        confine_env(repo, data.get("env", {}), data.get("pass_env", []))
    except TaskError as exc:
        raise TaskError(f"{where}: {exc}") from None
    python = data.get("python")
    if python is not None and not (Path(python).is_file() and os.access(python, os.X_OK)):
        raise TaskError(f"{where}: python {python} is not an interpreter on this machine")
    limits = Limits(**data.get("limits", {}))
    return Task(repo, target_file, data["symbol"], data["description"], tests,
                data.get("starting_code"), data.get("mode", "cocogen"), limits, source, python,
                dict(data.get("env", {})), list(data.get("pass_env", [])), data.get("isolation", "auto"))


def task_markdown() -> str:
    lines = ["# Task file", "",
             "<!-- generated by `python -m codegraph.docgen docs/` from codegraph/refine/task.py; do not edit -->", "",
             "`codegraph refine --task TASK.json` reads one JSON object, validated against the JSON Schema",
             "below; every violation is reported in one message.", "",
             "| field | type | required | default | meaning |", "|---|---|---|---|---|"]
    for name, spec in TASK_SCHEMA["properties"].items():
        kind = spec.get("type", "enum: " + ", ".join(spec.get("enum", [])))
        kind = " or ".join(kind) if isinstance(kind, list) else kind
        default = spec.get("default", "")
        meaning = spec.get("description", "")
        if name == "limits":
            meaning = "; ".join(f"`{k}` (default {v['default']})" + (f": {v['description']}" if "description" in v else "")
                                for k, v in spec["properties"].items())
        lines.append(f"| `{name}` | {kind} | {'yes' if name in TASK_SCHEMA['required'] else 'no'} | "
                     f"{json.dumps(default) if default != '' else ''} | {meaning} |")
    lines += ["", "The JSON Schema:", "", "```json", json.dumps(TASK_SCHEMA, indent=2), "```"]
    return "\n".join(lines) + "\n"

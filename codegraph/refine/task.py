"""The task file: what to write, where, and how to tell it is done."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CodegraphError

MODES = ("direct", "naive-rag", "repocoder", "reflexion", "cocogen", "rrr")

# A JSON Schema of the task file; docs/task.md is generated from it.
TASK_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "codegraph refine task",
    "type": "object",
    "required": ["repo", "target_file", "symbol", "description"],
    "additionalProperties": False,
    "properties": {
        "repo": {"type": "string", "description": "Repository path, relative to the task file or absolute."},
        "target_file": {"type": "string", "description": "File to write into, relative to the repository."},
        "symbol": {"type": "string", "description": "What to write: `name` (function or class) or `Class.method`; "
                                                    "replaced when it exists, added otherwise."},
        "description": {"type": "string", "description": "What the code must do, in natural language."},
        "tests": {"type": "array", "items": {"type": "string"}, "default": [],
                  "description": "pytest node ids (relative to the repository) that must pass."},
        "starting_code": {"type": ["string", "null"], "default": None,
                          "description": "A first candidate (e.g. a model's earlier answer); the loop starts "
                                         "by checking it instead of generating one."},
        "python": {"type": ["string", "null"], "default": None,
                   "description": "The interpreter that runs the tests (a project's own virtualenv); "
                                  "default: the one running codegraph."},
        "mode": {"enum": list(MODES), "default": "cocogen",
                 "description": "Which paper's loop to run (see docs/refine.md)."},
        "limits": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "iterations": {"type": "integer", "minimum": 1, "default": 4},
                "seconds": {"type": "number", "minimum": 1, "default": 600},
                "tokens": {"type": "integer", "minimum": 100, "default": 60000,
                           "description": "Prompt plus completion tokens over the whole run."},
                "test_seconds": {"type": "number", "minimum": 1, "default": 120},
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

    @property
    def target_path(self) -> Path:
        return self.repo / self.target_file


def load_task(path: str | Path) -> Task:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"no task file at {path}") from None
    except json.JSONDecodeError as exc:
        raise TaskError(f"{path} is not valid JSON: {exc}") from None
    return task_from_dict(data, base=path.parent, source=path)


def task_from_dict(data: dict, base: Path = Path("."), source: Path | None = None) -> Task:
    where = source or "task"
    if not isinstance(data, dict):
        raise TaskError(f"{where}: the task must be a JSON object")
    allowed = set(TASK_SCHEMA["properties"])
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise TaskError(f"{where}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")
    missing = [k for k in TASK_SCHEMA["required"] if not data.get(k)]
    if missing:
        raise TaskError(f"{where}: missing required field(s) {', '.join(missing)} (see docs/task.md)")
    for key in ("repo", "target_file", "symbol", "description"):
        if not isinstance(data[key], str):
            raise TaskError(f"{where}: {key} must be a string")
    tests = data.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
        raise TaskError(f"{where}: tests must be a list of pytest node ids")
    mode = data.get("mode", "cocogen")
    if mode not in MODES:
        raise TaskError(f"{where}: mode {mode!r} is not one of {', '.join(MODES)}")
    raw_limits = data.get("limits", {}) or {}
    bad = sorted(set(raw_limits) - set(TASK_SCHEMA["properties"]["limits"]["properties"]))
    if bad:
        raise TaskError(f"{where}: unknown limit(s) {', '.join(bad)}")
    limits = Limits(**{k: v for k, v in raw_limits.items()})
    if limits.iterations < 1 or limits.seconds <= 0 or limits.tokens < 100:
        raise TaskError(f"{where}: limits must be positive (iterations >= 1, tokens >= 100)")
    repo = Path(data["repo"])
    repo = (base / repo).resolve() if not repo.is_absolute() else repo
    if not repo.is_dir():
        raise TaskError(f"{where}: repo {repo} is not a directory")
    target = repo / data["target_file"]
    if not target.is_file():
        raise TaskError(f"{where}: target_file {data['target_file']} is not a file in {repo}")
    if not all(part.isidentifier() for part in data["symbol"].split(".")):
        raise TaskError(f"{where}: symbol {data['symbol']!r} must be `name` or `Class.name`")
    python = data.get("python")
    if python is not None and not Path(python).is_file():
        raise TaskError(f"{where}: python {python} is not an interpreter on this machine")
    return Task(repo, data["target_file"], data["symbol"], data["description"], tests,
                data.get("starting_code"), mode, limits, source, python)


def task_markdown() -> str:
    lines = ["# Task file", "",
             "<!-- generated by `python -m codegraph.docgen docs/` from codegraph/refine/task.py; do not edit -->", "",
             "`codegraph refine --task TASK.json` reads one JSON object:", "",
             "| field | type | required | default | meaning |", "|---|---|---|---|---|"]
    for name, spec in TASK_SCHEMA["properties"].items():
        kind = spec.get("type", "enum: " + ", ".join(spec.get("enum", [])))
        kind = " or ".join(kind) if isinstance(kind, list) else kind
        default = spec.get("default", "")
        meaning = spec.get("description", "")
        if name == "limits":
            meaning = "; ".join(f"`{k}` (default {v['default']})" for k, v in spec["properties"].items())
        lines.append(f"| `{name}` | {kind} | {'yes' if name in TASK_SCHEMA['required'] else 'no'} | "
                     f"{json.dumps(default) if default != '' else ''} | {meaning} |")
    lines += ["", "The JSON Schema:", "", "```json", json.dumps(TASK_SCHEMA, indent=2), "```"]
    return "\n".join(lines) + "\n"

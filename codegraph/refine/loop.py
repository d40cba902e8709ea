"""The refinement loop: retrieve -> generate -> splice -> lint -> retrieve per error -> regenerate,
then run the task's tests and feed failures back, until lint and tests pass or a limit is hit.

Everything happens in a scratch copy of the repository; the user's files change only with
`apply=True`. The switches of `Task.mode` reproduce the papers' baselines with the same loop.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from ..db import find_db
from ..errors import CodegraphError, DatabaseNotFound
from ..extract import _PARSER
from ..retrieval.candidate import Candidate
from ..retrieval.context import card, render
from ..retrieval.engine import Retriever, query_terms
from ..retrieval.lint import Linter
from .code import _find, _import_insert_line, code_from_answer, splice
from .models import ChatModel, estimate_tokens
from .offline import OfflineRepairer
from .task import Task

_COPY_IGNORE = shutil.ignore_patterns(".git", ".hg", ".codegraph", "__pycache__", ".venv", "venv", "node_modules",
                                      ".tox", ".mypy_cache", ".pytest_cache", "*.pyc")
# What each mode uses: (context for the description, lint feedback, SQL retrieval per error,
# retrieval with the last generation, test feedback, iterate at all)
MODE_SWITCHES = {
    "direct": dict(initial_context=False, lint_feedback=False, structural=False, by_generation=False, tests=False, iterate=False),
    "naive-rag": dict(initial_context=True, lint_feedback=False, structural=False, by_generation=False, tests=False, iterate=False),
    "repocoder": dict(initial_context=True, lint_feedback=False, structural=False, by_generation=True, tests=False, iterate=True),
    "reflexion": dict(initial_context=False, lint_feedback=True, structural=False, by_generation=False, tests=True, iterate=True),
    "cocogen": dict(initial_context=True, lint_feedback=True, structural=True, by_generation=False, tests=True, iterate=True),
    "rrr": dict(initial_context=True, lint_feedback=True, structural=True, by_generation=False, tests=True, iterate=True,
                class_tools=True),
}

SYSTEM = ("You write Python code inside an existing repository. Answer with one ```python block that "
          "holds the complete definition of `{symbol}`, preceded by any import lines it needs. Use the "
          "project's real names, signatures and imports shown to you. No explanations.")


@dataclass
class TestRun:
    passed: bool
    returncode: int
    seconds: float
    output: str


@dataclass
class Iteration:
    number: int
    code: str
    diagnostics: list[dict] = field(default_factory=list)
    retrievals: list[dict] = field(default_factory=list)
    repairs: list[str] = field(default_factory=list)
    tests: dict | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def lint_clean(self) -> bool:
        return not self.diagnostics


@dataclass
class RefineResult:
    task: str
    mode: str
    model: str
    success: bool
    lint_clean: bool
    tests_passed: bool | None
    stop_reason: str
    code: str
    diff: str
    iterations: list[Iteration]
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    applied: bool = False

    def to_dict(self) -> dict:
        data = asdict(self)
        for item, it in zip(data["iterations"], self.iterations):
            item["lint_clean"] = it.lint_clean
        return data


def _run_tests(root: Path, tests: list[str], timeout_s: float, python: str | None = None) -> TestRun:
    started = time.perf_counter()
    roots = [str(root / "src")] if (root / "src").is_dir() else []  # src layouts import from src/
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([*roots, str(root), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cmd = [python or sys.executable, "-m", "pytest", "-q", "-x", "--no-header", "-p", "no:cacheprovider", *tests]
    try:
        proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return TestRun(False, -1, time.perf_counter() - started, f"tests did not finish within {timeout_s:g} s")
    output = (proc.stdout + proc.stderr).strip().splitlines()
    return TestRun(proc.returncode == 0, proc.returncode, time.perf_counter() - started, "\n".join(output[-60:]))


class Refiner:
    def __init__(self, task: Task, model: ChatModel | None = None, *, db_path: str | Path | None = None,
                 linter: Linter | None = None, log: Callable[[str], None] | None = None) -> None:
        self.task = task
        self.model = model or OfflineRepairer()
        self.switches = MODE_SWITCHES[task.mode]
        self.linter = linter or Linter()
        self.log = log or (lambda message: None)
        self.scratch = Path(tempfile.mkdtemp(prefix="codegraph-refine-"))
        self.root = self.scratch / "repo"
        shutil.copytree(task.repo, self.root, ignore=_COPY_IGNORE, symlinks=True)
        self.db_path = self._database(db_path)
        llm_sql = None if isinstance(self.model, OfflineRepairer) else self.model
        self.retriever = Retriever(self.db_path, model=llm_sql if self.switches["structural"] else None)
        self.original = task.target_path.read_text(encoding="utf-8")
        self.target = self.root / task.target_file
        self.prompt_tokens = self.completion_tokens = 0

    def _database(self, db_path) -> Path:
        if db_path:
            return find_db(db_path)
        try:
            return find_db(None, start=self.task.repo)
        except DatabaseNotFound:
            from ..indexer import index_repository

            self.log(f"indexing {self.task.repo} into a scratch database")
            return index_repository(self.root, self.scratch / "graph.duckdb").db_path

    def close(self) -> None:
        self.retriever.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    # -- context --------------------------------------------------------------------------
    def _search(self, query: str, k: int = 6) -> list[dict]:
        rows: list[dict] = []
        try:
            from ..semantic.store import search

            rows = search(self.retriever.con, self.db_path, query, k)
        except Exception:  # no embeddings, or another model: lexical only
            rows = []
        terms = query_terms(query)
        if terms:
            _, lexical = self.retriever.run_template("lexical", {"terms": terms})
            seen = {r["qualname"] for r in rows}
            rows += [r for r in lexical if r["qualname"] not in seen]
        return rows[:k]

    def _known_import(self, d) -> bool:
        """import-error on a module the repository imports elsewhere is not the candidate's fault."""
        m = re.search(r"Unable to import '([^']+)'", d.message) if d.symbol == "import-error" else None
        return bool(m and self.retriever.run_template("known_import", {"module": m.group(1)})[1])

    def _cards(self, rows: list[dict], budget: int = 900) -> str:
        out, used = [], 0
        for row in rows:
            text = card(row, with_source=False)
            if used + estimate_tokens(text) > budget:
                break
            out.append(text)
            used += estimate_tokens(text)
        return "\n".join(out)

    def _class_info(self, text: str, limit: int = 3) -> str:
        """RRR's get_class_info for the project classes a text names: constructor and members."""
        from ..retrieval.tools import get_class_info

        blocks = []
        for word in dict.fromkeys(re.findall(r"\b[A-Z][A-Za-z0-9_]+\b", text)):
            for info in get_class_info(self.retriever.con, word)[:1]:
                members = [f"{m['name']}{m['signature'] or ''}" for m in info["members"] if not m["name"].startswith("_")]
                blocks.append(f"class {info['qualname']}({', '.join(info['bases'] or [])}): "
                              f"constructor {info['constructor']}; members: {', '.join(members[:20])}")
            if len(blocks) >= limit:
                break
        return "\n".join(blocks)

    # -- generation -----------------------------------------------------------------------
    def _generate(self, context: str, previous: str | None, feedback: str | None, it: Iteration) -> str | None:
        user = [f"Repository file: {self.task.target_file}", f"Write `{self.task.symbol}`: {self.task.description}"]
        if context:
            user += ["", "Relevant project code:", context]
        if previous:
            user += ["", "Your previous attempt:", "```python", previous.rstrip(), "```"]
        if feedback:
            user += ["", "Problems found:", feedback]
        messages = [{"role": "system", "content": SYSTEM.format(symbol=self.task.symbol)},
                    {"role": "user", "content": "\n".join(user)}]
        started = time.perf_counter()
        completion = self.model.complete(messages, max_tokens=1500)
        it.timings["generate"] = time.perf_counter() - started
        it.prompt_tokens += completion.prompt_tokens
        it.completion_tokens += completion.completion_tokens
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        return code_from_answer(completion.text, self.task.symbol)

    def _candidate_code(self, text: str, import_lines: list[str]) -> str:
        node = _find(_PARSER.parse(text.encode()).root_node, self.task.symbol)
        body = text.encode()[node.start_byte:node.end_byte].decode() if node is not None else ""
        indent = " " * node.start_point[1] if node is not None else ""
        return "\n".join([*import_lines, *([""] if import_lines else []), indent + body]) + "\n"

    # -- the loop -------------------------------------------------------------------------
    def run(self, apply: bool = False) -> RefineResult:
        started = time.perf_counter()
        limits = self.task.limits
        iterations: list[Iteration] = []
        context = ""
        if self.switches["initial_context"]:
            context = self._cards(self._search(self.task.description))
        if self.switches.get("class_tools"):
            context = "\n".join(filter(None, [self._class_info(self.task.description), context]))
        code = self.task.starting_code
        stop, tests_passed = "iterations", None
        offline = isinstance(self.model, OfflineRepairer)
        if code is None:
            if offline:
                raise CodegraphError("the offline generator repairs code but cannot write it from a description: "
                                     "give the task a starting_code, or configure a model (--model, --base-url)")
            first = Iteration(0, "")
            code = self._generate(context, None, None, first)
            if code is None:
                code = ""
        feedback: str | None = None
        max_iterations = limits.iterations if self.switches["iterate"] else 1
        for number in range(1, max_iterations + 1):
            it = Iteration(number, code)
            iterations.append(it)
            if not code.strip():
                feedback = "The answer held no Python code block defining the symbol."
                stop = "no code"
            else:
                try:
                    spliced = splice(self.original, self.task.symbol, code)
                except ValueError as exc:
                    raise CodegraphError(str(exc)) from None
                self.target.write_text(spliced.text, encoding="utf-8")
                t = time.perf_counter()
                diagnostics = [d for d in self.linter.lint(self.target)
                               if spliced.first_line <= d.line <= spliced.last_line or d.line in spliced.import_lines
                               or d.symbol == "syntax-error"]  # a candidate can break the lines after it
                diagnostics = [d for d in diagnostics if not self._known_import(d)]
                it.timings["lint"] = time.perf_counter() - t
                it.diagnostics = [d.to_dict() for d in diagnostics]
                retrievals = []
                if diagnostics and (self.switches["structural"] or offline):
                    t = time.perf_counter()
                    candidate = Candidate.from_file(self.target)
                    retrievals = self.retriever.retrieve_all(candidate, diagnostics)
                    it.timings["retrieve"] = time.perf_counter() - t
                    it.retrievals = [{"symbol": r.diagnostic.symbol, "line": r.diagnostic.line, "source": r.source,
                                      "rule": r.rule, "sql": r.sql, "params": r.params,
                                      "rows": [row.get("qualname") for row in r.rows], "attempts": r.attempts}
                                     for r in retrievals]
                if not diagnostics:
                    if not self.task.tests:
                        stop = "lint clean (no tests given)"
                        break
                    run = _run_tests(self.root, self.task.tests, limits.test_seconds, self.task.python)
                    it.timings["tests"] = run.seconds
                    it.tests = asdict(run)
                    tests_passed = run.passed
                    if run.passed:
                        stop = "lint clean and tests pass"
                        break
                    feedback = f"The tests failed:\n{run.output[-3000:]}" if self.switches["tests"] else None
                else:
                    tests_passed = None
                    if self.switches["lint_feedback"] or offline:
                        lines = [f"line {d.line - spliced.first_line + 1} of your code: {d.symbol}: {d.message}"
                                 for d in diagnostics]
                        feedback = "\n".join(lines)
                        if retrievals and self.switches["structural"]:
                            feedback = render(retrievals, budget_tokens=1500)
                if offline:
                    if not diagnostics:
                        stop = "tests fail and the offline generator only repairs lint errors"
                        break
                    lines, done = self.model.repair(spliced.text.split("\n"), retrievals,
                                                    (spliced.first_line, spliced.last_line),
                                                    _import_insert_line(_PARSER.parse(spliced.text.encode()).root_node))
                    it.repairs = done
                    if not done:
                        stop = "no repair found"
                        break
                    new_text = "\n".join(lines)
                    added = [l for l in lines[:_import_insert_line(_PARSER.parse(new_text.encode()).root_node)]
                             if l.strip() and l.strip() not in {o.strip() for o in self.original.split("\n")}]
                    code = self._candidate_code(new_text, added)
                    continue
            if number == max_iterations:
                break
            if time.perf_counter() - started > limits.seconds:
                stop = "time limit"
                break
            if self.prompt_tokens + self.completion_tokens > limits.tokens:
                stop = "token limit"
                break
            if self.switches["by_generation"]:
                context = self._cards(self._search(code or self.task.description))
            new = self._generate(context if not self.switches["lint_feedback"] or self.switches["structural"] else "",
                                 code, feedback, it)
            code = new or ""
        # an empty last answer does not undo the attempts before it
        final = next((it for it in reversed(iterations) if it.code.strip()), iterations[-1])
        lint_clean = bool(final.code.strip()) and final.lint_clean
        success = lint_clean and (tests_passed is True or (not self.task.tests and lint_clean))
        final_text = splice(self.original, self.task.symbol, final.code).text if final.code.strip() else self.original
        diff = "".join(difflib.unified_diff(self.original.splitlines(True), final_text.splitlines(True),
                                            f"a/{self.task.target_file}", f"b/{self.task.target_file}"))
        applied = False
        if apply and success:
            self.task.target_path.write_text(final_text, encoding="utf-8")
            applied = True
        return RefineResult(str(self.task.source or ""), self.task.mode, self.model.name, success, lint_clean,
                            tests_passed, stop, final.code, diff, iterations, time.perf_counter() - started,
                            self.prompt_tokens, self.completion_tokens, applied)


def refine(task: Task, model: ChatModel | None = None, *, db_path=None, apply: bool = False,
           log: Callable[[str], None] | None = None) -> RefineResult:
    refiner = Refiner(task, model, db_path=db_path, log=log)
    try:
        return refiner.run(apply=apply)
    finally:
        refiner.close()


__all__ = ["refine", "Refiner", "RefineResult", "MODE_SWITCHES"]

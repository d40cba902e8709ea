"""The refinement loop: retrieve -> generate -> splice -> lint -> retrieve per error -> regenerate,
then run the task's tests and feed failures back, until lint and tests pass or a limit is hit.

Everything happens in a scratch copy of the repository, which is removed on every way out (a
SIGTERM included); the user's files change only with `apply=True`. The model's code runs only
inside the fence of `sandbox.py`. `limits.seconds` bounds the whole run: every step gets what is
left of it. The switches of `Task.mode` reproduce the papers' baselines with the same loop.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import duckdb

from ..graphfile import find_db
from ..errors import CodegraphError, DatabaseNotFound, QueryError
from ..indexer import index_repository
from ..languages import CheckError, Checker, for_file
from ..llm import ChatModel, ModelError, estimate_tokens
from ..retrieval.candidate import Candidate
from ..retrieval.context import card, render
from ..retrieval.engine import Retriever, query_terms
from ..retrieval.task_context import task_context
from ..retrieval.tools import get_class_info
from ..semantic.search import search
from .offline import OfflineRepairer
from .sandbox import choose_level, run_fenced, fence_environment
from .scratch import Scratch, copy_repository, remove_tree, run_copy, write_inside
from .task import Task, confine_env, confine_target, confine_tests

MAX_ANSWER_BYTES = 200_000
LINT_SECONDS = 60.0
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # colours and cursor moves: the model reads plain text
PREPARE_SECONDS = 900.0  # fetching a build's plugins the first time: Maven downloads from its repositories
# What each mode uses: (context for the description, lint feedback, SQL retrieval per error,
# retrieval with the last generation, test feedback, iterate at all)
MODE_SWITCHES = {
    "direct": dict(initial_context=False, lint_feedback=False, structural=False, by_generation=False, tests=False, iterate=False),
    "naive-rag": dict(initial_context=True, lint_feedback=False, structural=False, by_generation=False, tests=False, iterate=False),
    "repocoder": dict(initial_context=True, lint_feedback=False, structural=False, by_generation=True, tests=False, iterate=True),
    "reflexion": dict(initial_context=False, lint_feedback=True, structural=False, by_generation=False, tests=True, iterate=True),
    "cocogen": dict(initial_context=True, lint_feedback=True, structural=True, by_generation=False, tests=True, iterate=True,
                    task_context=True),
    "rrr": dict(initial_context=True, lint_feedback=True, structural=True, by_generation=False, tests=True, iterate=True,
                class_tools=True, task_context=True),
}

SYSTEM = ("You write {language} code inside an existing repository. Answer with one ```{fence} block that "
          "holds the complete definition of `{symbol}`, preceded by any import lines it needs. Use the "
          "project's real names, signatures and imports shown to you. No explanations.")


@dataclass
class TestRun:
    passed: bool
    returncode: int
    seconds: float
    output: str
    isolation: str = "rlimits"
    peak_memory_mb: float = 0.0  # the whole process tree's, as the launcher measured it
    stopped_by: str | None = None  # "memory" or "disk" when a limit ended the run


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
    error: str | None = None  # what went wrong in this iteration (the model's endpoint, the linter)

    @property
    def lint_clean(self) -> bool:
        return not self.diagnostics and self.error is None


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
    isolation: str | None = None  # the fence the tests ran behind (docs/refine.md)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        data = asdict(self)
        for item, it in zip(data["iterations"], self.iterations):
            item["lint_clean"] = it.lint_clean
        return data


class _OutOfTime(Exception):
    pass


class Refiner:
    """One run of the loop over one task; a context manager that always removes its scratch copy."""

    def __init__(self, task: Task, model: ChatModel | None = None, *, db_path: str | Path | None = None,
                 checker: Checker | None = None, log: Callable[[str], None] | None = None) -> None:
        self.task = task
        task.target_file = confine_target(task.repo, task.target_file)
        self.language = for_file(task.target_file.rpartition("/")[2])  # confine_target refuses a file of none
        task.tests = confine_tests(task.repo, task.tests)
        if task.tests:
            self.language.check_tests(task.repo, task.tests)
        confine_env(task.repo, task.env, task.pass_env)
        self.model = model or OfflineRepairer()
        self.switches = MODE_SWITCHES[task.mode]
        self.log = log or (lambda message: None)
        self.isolation = choose_level(task.isolation) if task.tests else None
        self.deadline = time.monotonic() + task.limits.seconds
        self._own_checker = checker is None
        self.checker = checker or self.language.checker()
        self.retriever = None
        self._scratch = Scratch()
        self.scratch = self._scratch.path
        try:
            self.root = self.scratch / "repo"
            self.notes = copy_repository(task.repo, self.root)
            for note in self.notes:
                self.log(note)
            self.db_path = self._database(db_path)
            llm_sql = None if isinstance(self.model, OfflineRepairer) else self.model
            self.retriever = Retriever(self.db_path, model=llm_sql if self.switches["structural"] else None)
            self.original = task.target_path.read_text(encoding="utf-8")
            self.target = self.root / task.target_file
        except BaseException:
            self.close()
            raise
        self.prompt_tokens = self.completion_tokens = 0
        self._runs = 0
        self._tests_prepared, self._preparing_failed = False, None

    def _database(self, db_path) -> Path:
        if db_path:
            return find_db(db_path)
        try:
            return find_db(None, start=self.task.repo)
        except DatabaseNotFound:
            self.log(f"indexing {self.task.repo} into a scratch database")
            return index_repository(self.root, self.scratch / "graph.duckdb").db_path

    def close(self) -> None:
        if self.retriever is not None:
            self.retriever.close()
            self.retriever = None
        if self._own_checker:
            self.checker.close()
        self._scratch.remove()

    def __enter__(self) -> "Refiner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _OutOfTime()
        return left

    # -- context --------------------------------------------------------------------------
    def _search(self, query: str, k: int = 6) -> list[dict]:
        """Semantic, then lexical search; either may fail (no embeddings, a timeout) without
        ending the run: the context is then smaller, and the failure is in the notes."""
        rows: list[dict] = []
        try:
            rows = search(self.retriever.con, self.db_path, query, k)
        except CodegraphError as exc:  # no embeddings, or another model: lexical only
            self.notes.append(f"semantic search: {exc}")
        terms = query_terms(query)
        if terms:
            try:
                _, lexical = self.retriever.run_template("lexical", {"terms": terms})
            except QueryError as exc:
                self.notes.append(f"lexical search: {exc}")
                lexical = []
            seen = {r["qualname"] for r in rows}
            rows += [r for r in lexical if r["qualname"] not in seen]
        return rows[:k]

    def _task_context(self, budget: int = 2000) -> str:
        """What the code will most likely need (retrieval/task_context.py); the naive-rag and
        repocoder baselines keep their papers' retrieval instead."""
        try:
            found = task_context(self.db_path, self.task.description, self.task.target_file, self.task.symbol,
                                 budget_tokens=budget, con=self.retriever.con)
        except (CodegraphError, duckdb.Error) as exc:
            self.notes.append(f"task context: {exc}")
            return self._cards(self._search(self.task.description))
        return found.text

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
    def _generate(self, context: str, previous: str | None, feedback: str | None,
                  it: Iteration) -> tuple[str | None, str | None]:
        """(code, problem): the code the model wrote, or a feedback line saying why there is none."""
        user = [f"Repository file: {self.task.target_file}", f"Write `{self.task.symbol}`: {self.task.description}"]
        if context:
            user += ["", "Relevant project code:", context]
        if previous:
            user += ["", "Your previous attempt:", f"```{self.language.name}", previous.rstrip(), "```"]
        if feedback:
            user += ["", "Problems found:", feedback]
        system = SYSTEM.format(language=self.language.title, fence=self.language.name, symbol=self.task.symbol)
        messages = [{"role": "system", "content": system},
                    {"role": "user", "content": "\n".join(user)}]
        started = time.perf_counter()
        try:
            completion = self.model.complete(messages, max_tokens=1500,
                                             deadline=time.monotonic() + self._remaining())
        finally:
            it.timings["generate"] = it.timings.get("generate", 0.0) + time.perf_counter() - started
        it.prompt_tokens += completion.prompt_tokens
        it.completion_tokens += completion.completion_tokens
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        size = len(completion.text.encode("utf-8", "replace"))
        if size > MAX_ANSWER_BYTES:
            return None, (f"Your answer was {size // 1000} kB, over the {MAX_ANSWER_BYTES // 1000} kB limit: "
                          f"answer with only the definition of `{self.task.symbol}` and its imports.")
        code = self.language.code_from_answer(completion.text, self.task.symbol)
        return code, None if code else self._no_code()

    def _no_code(self) -> str:
        return f"The answer held no {self.language.title} code block defining the symbol."

    def _candidate_code(self, text: str, import_lines: list[str]) -> str:
        body = self.language.definition_of(text, self.task.symbol)
        return "\n".join([*import_lines, *([""] if import_lines else []), body]) + "\n"

    def _run_tests(self) -> TestRun:
        """The tests, fenced, in a copy of the scratch copy made for this run and removed after it:
        nothing the tests leave behind (a link where the target was, a replaced file) is read back.
        Until the language has what its tests' tools fetch (the fence has no network), it prepares
        them first, outside the fence, in a copy of its own."""
        self._runs += 1
        if not self._tests_prepared:
            self._prepare_tests()
        run_dir = self.scratch / f"run-{self._runs}"
        try:
            repo = run_copy(self.root, run_dir)
            python = self.task.python or sys.executable
            plan = self.language.test_plan(repo, self.task.tests, run_dir, python, self.task.limits.test_memory_mb)
            variables = dict(self.task.env)
            path = [str(repo / entry) for entry in variables.pop("PATH", "").split(os.pathsep) if entry]
            env = fence_environment(run_dir, plan.roots, plan.argv[0], {**variables, **plan.env},
                                    self.task.pass_env, path)
            timeout = min(self.task.limits.test_seconds, self._remaining())
            run = run_fenced(plan.argv, cwd=plan.cwd or repo, run_dir=run_dir, env=env, timeout_s=timeout,
                             memory_mb=self.task.limits.test_memory_mb, disk_mb=self.task.limits.test_disk_mb,
                             level=self.isolation or "rlimits", read_only=plan.read_only)
        finally:
            remove_tree(run_dir)
        output = [line for line in _ANSI.sub("", run.output).strip().splitlines()
                  if not (plan.noise and re.match(plan.noise, line))]
        if run.timed_out:
            output.append(f"tests did not finish within {timeout:g} s")
        if self._preparing_failed:
            output.append(f"codegraph: {self._preparing_failed}")
        passed = run.returncode == 0 and not run.timed_out
        if passed and plan.tests_ran and not any(int(n) for n in re.findall(plan.tests_ran, run.output, re.M)):
            passed = False
            output.append("codegraph: no test ran: the tests named select none (check their names, and that the "
                          "build runs their framework)")
        return TestRun(passed, run.returncode, run.seconds,
                       "\n".join(output[-60:]), run.level, run.peak_memory_mb, run.stopped_by)

    def _prepare_tests(self) -> None:
        prepare_dir = self.scratch / f"prepare-{self._runs}"
        try:
            repo = run_copy(self.root, prepare_dir)
            problem = self.language.prepare_tests(repo, self.task.tests, min(PREPARE_SECONDS, self._remaining()))
        finally:
            remove_tree(prepare_dir)
        self._tests_prepared = problem is None
        self._preparing_failed = problem
        if problem:
            self.notes.append(problem)
            self.log(problem)

    def _lint(self, spliced) -> list:
        timeout = min(LINT_SECONDS, self._remaining())
        return self.language.keep(self.checker.lint(self.target, timeout_s=timeout), spliced.first_line,
                                  spliced.last_line, spliced.import_lines, self.retriever.known_import)

    # -- the loop -------------------------------------------------------------------------
    def run(self, apply: bool = False) -> RefineResult:
        started = time.perf_counter()
        iterations: list[Iteration] = []
        stop, tests_passed = "iterations", None
        offline = isinstance(self.model, OfflineRepairer)
        code = self.task.starting_code
        if code is None and offline:
            raise CodegraphError("the offline generator repairs code but cannot write it from a description: "
                                 "give the task a starting_code, or configure a model (--model, --base-url)")
        if self.isolation:
            self.log(f"tests run with isolation {self.isolation!r} (docs/refine.md)")
        try:
            stop, tests_passed = self._loop(code, iterations, offline)
        except _OutOfTime:
            stop = f"time limit ({self.task.limits.seconds:g} s)"
        if not iterations:
            iterations.append(Iteration(1, "", error=stop))
        return self._result(iterations, stop, tests_passed, started, apply)

    def _loop(self, code: str | None, iterations: list[Iteration], offline: bool) -> tuple[str, bool | None]:
        limits = self.task.limits
        stop, tests_passed = "iterations", None
        context = ""
        if self.switches.get("task_context") and not offline:
            context = self._task_context()
        elif self.switches["initial_context"]:
            context = self._cards(self._search(self.task.description))
        if self.switches.get("class_tools"):
            context = "\n".join(filter(None, [self._class_info(self.task.description), context]))
        feedback: str | None = None
        if code is None:
            first = Iteration(1, "")
            try:
                code, feedback = self._generate(context, None, None, first)
            except ModelError as exc:
                first.error = str(exc)
                iterations.append(first)
                if not exc.retryable:
                    return f"model error: {exc}", None
                code = None
            code = code or ""
        max_iterations = limits.iterations if self.switches["iterate"] else 1
        for number in range(1, max_iterations + 1):
            it = iterations[-1] if iterations and iterations[-1].number == number else Iteration(number, code)
            it.code = code
            if it not in iterations:
                iterations.append(it)
            if not code.strip():
                feedback = feedback or self._no_code()
                stop = "no code"
            else:
                try:
                    spliced = self.language.splice(self.original, self.task.symbol, code)
                except ValueError as exc:
                    raise CodegraphError(str(exc)) from None
                write_inside(self.root, self.task.target_file, spliced.text)
                t = time.perf_counter()
                try:
                    diagnostics = self._lint(spliced)
                except CheckError as exc:
                    it.error = str(exc)
                    diagnostics = []
                it.timings["lint"] = time.perf_counter() - t
                it.diagnostics = [d.to_dict() for d in diagnostics]
                retrievals = []
                if it.error:
                    feedback = f"Your code could not be checked: {it.error}"
                    stop = "lint failed"
                    tests_passed = None
                elif diagnostics and (self.switches["structural"] or offline):
                    t = time.perf_counter()
                    candidate = Candidate.from_file(self.target)
                    retrievals = self.retriever.retrieve_all(candidate, diagnostics,
                                                             deadline=time.monotonic() + self._remaining(),
                                                             description=self.task.description)
                    it.timings["retrieve"] = time.perf_counter() - t
                    it.retrievals = [{"symbol": r.diagnostic.symbol, "line": r.diagnostic.line, "source": r.source,
                                      "rule": r.rule, "sql": r.sql, "params": r.params,
                                      "rows": [row.get("qualname") for row in r.rows], "attempts": r.attempts}
                                     for r in retrievals]
                if it.error:
                    pass
                elif not diagnostics:
                    if not self.task.tests:
                        return "lint clean (no tests given)", tests_passed
                    run = self._run_tests()
                    it.timings["tests"] = run.seconds
                    it.tests = asdict(run)
                    tests_passed = run.passed
                    if run.passed:
                        return "lint clean and tests pass", tests_passed
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
                    if it.error:
                        return stop, tests_passed
                    if not diagnostics:
                        return "tests fail and the offline generator only repairs lint errors", tests_passed
                    lines, done = self.model.repair(spliced.text.split("\n"), retrievals,
                                                    (spliced.first_line, spliced.last_line),
                                                    self.language.import_insert_line(spliced.text), self.language)
                    it.repairs = done
                    if not done:
                        return "no repair found", tests_passed
                    new_text = "\n".join(lines)
                    added = [l for l in lines[:self.language.import_insert_line(new_text)]
                             if l.strip() and l.strip() not in {o.strip() for o in self.original.split("\n")}]
                    code = self._candidate_code(new_text, added)
                    continue
            if number == max_iterations:
                break
            self._remaining()
            if self.prompt_tokens + self.completion_tokens > limits.tokens:
                return "token limit", tests_passed
            if self.switches["by_generation"]:
                context = self._cards(self._search(code or self.task.description))
            upcoming = Iteration(number + 1, "")
            iterations.append(upcoming)
            try:
                new, problem = self._generate(
                    context if not self.switches["lint_feedback"] or self.switches["structural"] else "",
                    code, feedback, upcoming)
            except ModelError as exc:
                upcoming.error = str(exc)
                if not exc.retryable:
                    return f"model error: {exc}", tests_passed
                new, problem = None, None
            code = new or ""
            feedback = problem
        return stop, tests_passed

    def _result(self, iterations: list[Iteration], stop: str, tests_passed: bool | None, started: float,
                apply: bool) -> RefineResult:
        # an empty last answer does not undo the attempts before it
        final = next((it for it in reversed(iterations) if it.code.strip()), iterations[-1])
        lint_clean = bool(final.code.strip()) and final.lint_clean and final.error is None
        success = lint_clean and (tests_passed is True or (not self.task.tests and lint_clean))
        final_text = (self.language.splice(self.original, self.task.symbol, final.code).text if final.code.strip()
                      else self.original)
        diff = "".join(difflib.unified_diff(self.original.splitlines(True), final_text.splitlines(True),
                                            f"a/{self.task.target_file}", f"b/{self.task.target_file}"))
        applied = False
        if apply and success:
            write_inside(self.task.repo.resolve(), confine_target(self.task.repo, self.task.target_file), final_text,
                         durable=True)
            applied = True
        return RefineResult(str(self.task.source or ""), self.task.mode, self.model.name, success, lint_clean,
                            tests_passed, stop, final.code, diff, iterations, time.perf_counter() - started,
                            self.prompt_tokens, self.completion_tokens, applied, self.isolation, self.notes)


@contextlib.contextmanager
def _terminate_as_exit():
    """SIGTERM unwinds like Ctrl-C, so the scratch copy is removed (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def refine(task: Task, model: ChatModel | None = None, *, db_path=None, apply: bool = False,
           log: Callable[[str], None] | None = None) -> RefineResult:
    with _terminate_as_exit(), Refiner(task, model, db_path=db_path, log=log) as refiner:
        return refiner.run(apply=apply)


__all__ = ["refine", "Refiner", "RefineResult", "MODE_SWITCHES", "copy_repository"]

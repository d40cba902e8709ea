"""RepoClassBench-Python on the public upstream repositories, from a local checkout.

    python -m benchmarks.repoclassbench stats
    python -m benchmarks.repoclassbench sanity --repo psf/requests --git-dir CLONE/.git [--setup EXTRA.json]
    python -m benchmarks.repoclassbench run --repo psf/requests --git-dir CLONE/.git \
        --generator replay|offline|openai [--mode cocogen] [--samples 1] [--model M --base-url URL]

The data file (../shared/data/repoclassbench/python_data.json, MIT) names for each task a class to
write, descriptions, the pytest ids expected to pass and the ground-truth class. Its snapshots
are private copies whose identifiers were case-flipped (`Session` -> `SESsiON`); this harness
uses the public repository instead, at the upstream fix commit of the task's SWE-bench instance
(the "Merge pull request #N" commit after the base commit; else the base commit), and maps
flipped names back by matching them case-insensitively against the upstream code; each record
keeps the mapping and how similar the upstream class is to the ground truth. The checkout is
installed by its own declared means (`-e .[test extra]`, a PDM lock's pins, requirements-dev.txt
or a requirements/tests file) in a private virtualenv made by uv, with dependencies resolved as
of the commit's date (`--exclude-newer`; `--latest-deps` turns that off) and the interpreter of
`--python`; extra per-repository steps come from a JSON file the user supplies
({"owner/name": ["pip requirement", ...]}).

`sanity` shows, per task, that the upstream class passes the expected tests and that replacing
it with a placeholder makes them fail. `run` removes the class (placeholder), indexes that state,
runs `refine` to write it, and evaluates the result with the expected tests like the original
evaluator: passed, failed, test rate, lint status, and the feedback. Generators: `replay` answers
with the ground truth (proves the pipeline), `offline` repairs a ground truth damaged by one
near-miss member call, `openai` asks any OpenAI-compatible model (`--samples` answers per task,
for pass@k). One results file per task under benchmarks/results/repoclassbench/<run>/; tasks
already done are skipped; `--workers` spreads tasks over processes. The upstream code is read
and run from a scratch checkout and never committed.
"""
from __future__ import annotations

import argparse
import difflib
import functools
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "repoclassbench" / "python_data.json"


@dataclass
class BenchTask:
    task_id: str
    repo: str
    instance_id: str
    base_commit: str
    class_name: str  # as flipped in the data
    file: str  # path inside the repository
    tests: list[str]
    ground_truth: str
    sketchy: str
    detailed: str


def load_tasks(path: Path = DATA) -> list[BenchTask]:
    out = []
    for t in json.loads(path.read_text()):
        md = t["repo_metadata"]
        setup = md.get("setup_details") or {}
        instance = setup.get("instance_id") or md.get("issue_id") or t["task_id"].rsplit("_", 1)[0]
        repo = setup.get("repo") or "litestar-org/litestar"  # the only task set without SWE-bench details
        base = setup.get("base_commit") or md.get("commit_id")
        file = t["file"]
        if "/repos/" in file:  # litestar's paths are absolute paths of the authors' machine
            file = file.split("/repos/", 1)[1].split("/", 1)[1]
        elif "/" in file:
            file = file.split("/", 1)[1]
        out.append(BenchTask(t["task_id"], repo, instance, base, t["class_name"], file,
                             t["evaluation_metadata"]["test_directives"], t["ground_truth_class_body"],
                             t["sketchy_description"], t["detailed_description"]))
    return out


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=True).stdout


def fix_commit(git_dir: Path, task: BenchTask) -> str:
    """The merge of the instance's pull request after its base commit, else the base commit."""
    if not re.search(r"-\d+$", task.instance_id) or task.instance_id.endswith("-0001"):
        return task.base_commit  # not a SWE-bench instance: the commit is upstream already
    number = task.instance_id.rsplit("-", 1)[-1]
    log = git(git_dir, "log", "--format=%H %s", "--ancestry-path", f"{task.base_commit}..HEAD")
    for line in reversed(log.splitlines()):
        sha, _, subject = line.partition(" ")
        if re.search(rf"Merge pull request #{number}\b|\(#{number}\)$", subject):
            return sha
    return task.base_commit


def checkout(git_dir: Path, commit: str, dest: Path) -> list[str]:
    """Write the commit's tree into `dest`; returns the paths whose blobs the clone lacks (a
    partial or size-capped mirror), which `git archive` would refuse outright."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", commit], capture_output=True, check=False)
    if archive.returncode == 0:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(dest, filter="data")
        return []
    entries = [line.split("\t", 1) for line in git(git_dir, "ls-tree", "-r", "-z", commit).split("\0") if line]
    missing: list[str] = []
    with subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE) as batch:
        for meta, path in entries:
            mode, kind, sha = meta.split()
            if kind != "blob":
                continue  # submodules
            batch.stdin.write(sha.encode() + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if len(header) < 3:  # "<sha> missing"
                missing.append(path)
                continue
            data = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":
                target.symlink_to(data.decode())
            else:
                target.write_bytes(data)
                if mode == "100755":
                    target.chmod(0o755)
        batch.stdin.close()
    return missing


def class_span(source: str, name: str) -> tuple[int, int, str] | None:
    """(start line, end line, real name) of a top-level class whose name matches case-insensitively."""
    lines = source.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"class\s+(\w+)\b", line)
        if m and m.group(1).lower() == name.lower():
            start = i
            while start > 0 and lines[start - 1].startswith("@"):
                start -= 1
            end = i + 1
            while end < len(lines) and (not lines[end].strip() or lines[end].startswith((" ", "\t", ")"))):
                end += 1
            while end > i + 1 and not lines[end - 1].strip():
                end -= 1
            return start, end, m.group(1)
    return None


def real_test_ids(root: Path, tests: list[str]) -> list[str]:
    """Map case-flipped test ids back: each part matched case-insensitively against the test file."""
    out = []
    for test in tests:
        test = re.sub(r"@\w+$", "", test)  # litestar's `@redis`-style suffixes cannot be selected
        path, *parts = test.split("::")
        file = root / path
        if not file.is_file():
            continue
        names = {w.lower(): w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", file.read_text(errors="replace"))}
        mapped = []
        for part in parts:
            base, bracket, rest = part.partition("[")
            mapped.append(names.get(base.lower(), base) + bracket + rest)
        out.append("::".join([path, *mapped]))
    return out


class InstallError(Exception):
    pass


BUILD_TOOLS = ("setuptools", "wheel", "setuptools-scm")


def _declared_test_extra(root: Path) -> str | None:
    """The checkout's own extra for running tests, if it declares one."""
    import configparser
    import tomllib

    extras: set[str] = set()
    if (root / "pyproject.toml").is_file():
        try:
            extras |= set(tomllib.loads((root / "pyproject.toml").read_text()).get("project", {})
                          .get("optional-dependencies", {}))
        except tomllib.TOMLDecodeError:
            pass
    if (root / "setup.cfg").is_file():
        cfg = configparser.ConfigParser()
        try:
            cfg.read(root / "setup.cfg")
            if cfg.has_section("options.extras_require"):
                extras |= set(cfg["options.extras_require"])
        except configparser.Error:
            pass
    return next((e for e in ("test", "tests", "testing") if e in extras), None)


class Environment:
    """A virtualenv with the checkout installed by its own declared means.

    With `as_of` (the commit's date) dependencies resolve as they were on that day (uv's
    `--exclude-newer`), so an old commit gets the numpy or wrapt it was written against instead of
    today's releases; a PDM lock's exact pins are used where the checkout has one.
    """

    def __init__(self, root: Path, extra: list[str], version: str | None = None, *,
                 python: str | None = None, as_of: str | None = None) -> None:
        self.root = root
        self.venv = root.parent / (root.name + "-venv")
        started = time.perf_counter()
        # a checkout from `git archive` has no history: tell setuptools-scm the version it would find
        self.env = {**os.environ, "SETUPTOOLS_SCM_PRETEND_VERSION": version or "0.0.0",
                    "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        self.env.pop("VIRTUAL_ENV", None)
        uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
        if not Path(uv).is_file():
            raise InstallError("uv is missing: pip install 'codegraph[bench]' (or pip install uv)")
        self._run([uv, "venv", "-q", "-p", python or sys.executable, str(self.venv)], required=True)
        self.pip = [uv, "pip", "install", "-q", "--python", self.python]  # no date limit: exact pins
        pip = list(self.pip)
        if as_of:  # the build backend stays current: editable installs need PEP 660 (setuptools >= 64)
            now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            pip += ["--exclude-newer", as_of, *(f for tool in BUILD_TOOLS
                                                for f in ("--exclude-newer-package", f"{tool}={now}"))]
        # the seed packages of that day: tests that `import pkg_resources` need a setuptools that has it
        self._run([*self.pip, *(["--exclude-newer", as_of] if as_of else []), "pip", "setuptools", "wheel"],
                  required=True)
        self.lock_failures = self._install_lock(root)
        test_extra = _declared_test_extra(root)
        target = f"{root}[{test_extra}]" if test_extra else str(root)
        self._run([*pip, "-e", target, *(["--no-deps"] if (root / "pdm.lock").is_file() else [])], required=True)
        for name in ("requirements-dev.txt", "requirements/tests.txt", "requirements-test.txt", "requirements_test.txt"):
            if (root / name).is_file():
                self._run([*pip, "-r", str(root / name)], required=False)
        self._run([*pip, "pytest", *extra], required=True)
        self.install_seconds = time.perf_counter() - started
        self.as_of = as_of
        self.python_version = subprocess.run([self.python, "-c", "import platform; print(platform.python_version())"],
                                             capture_output=True, text=True, check=False).stdout.strip()

    def _run(self, cmd: list[str], required: bool) -> bool:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=self.env, cwd=self.root, check=False)
        if proc.returncode != 0 and required:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-6:])
            raise InstallError(f"`{' '.join(Path(cmd[0]).name if i == 0 else c for i, c in enumerate(cmd))}` "
                               f"failed:\n{tail}")
        return proc.returncode == 0

    def _install_lock(self, root: Path) -> list[str]:
        """A PDM lock file pins the dependencies as of the commit: install exactly those."""
        lock = root / "pdm.lock"
        if not lock.is_file():
            return []
        import tomllib

        packages = tomllib.loads(lock.read_text()).get("package", [])
        pins = [f"{p['name']}=={p['version']}" + (f"; {p['marker']}" if p.get("marker") else "") for p in packages]
        req = root.parent / (root.name + "-lock.txt")
        req.write_text("\n".join(pins) + "\n")
        if self._run([*self.pip, "--no-deps", "-r", str(req)], required=False):
            return []
        return [pin for pin in pins if not self._run([*self.pip, "--no-deps", pin], required=False)]

    def disk_mb(self) -> float:
        return sum(p.stat().st_size for p in self.venv.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def collected(self, tests: list[str]) -> list[str]:
        """Expected ids whose parameter ids this commit generates differently are replaced by the
        ids pytest actually collects for the same test function (it refuses unknown ids)."""
        files = sorted({t.split("::")[0] for t in tests})
        try:
            proc = subprocess.run([self.python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                   *files], cwd=self.root, capture_output=True, text=True, env=self.env, timeout=600)
        except subprocess.TimeoutExpired:
            return tests
        known = [line.strip() for line in proc.stdout.splitlines() if "::" in line]
        if not known:
            return tests
        known_set = set(known)
        out: list[str] = []
        for test in tests:
            if test in known_set or "[" not in test:
                out.append(test)
                continue
            base = test.split("[", 1)[0]
            out.extend(k for k in known if k.split("[", 1)[0] == base and k not in out)
        return list(dict.fromkeys(out))

    def run_tests(self, tests: list[str], timeout: float = 900) -> dict:
        """Passed, failed and skipped among the expected ids; an id that did not run (its file
        fails to import, a crash, a timeout) counts as failed, as in the original evaluator."""
        report = self.root / ".bench-junit.xml"
        started = time.perf_counter()
        passed = skipped = 0
        remaining, tail = list(tests), []
        while remaining:
            cmd = [self.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *remaining]
            try:
                proc = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, timeout=timeout, env=self.env)
            except subprocess.TimeoutExpired:
                tail = [f"timeout after {timeout:g} s"]
                break
            output = proc.stdout + proc.stderr
            tail = output.strip().splitlines()[-8:]
            # pytest runs nothing when one named id cannot be collected: drop what it names (a whole
            # file when the file does not import, else the one id) and run the rest
            dropped = set()
            for kind, named in re.findall(r"(found no collectors for|ERROR: not found:) (\S+)", output):
                path, _, rest = named.partition("::")
                rel = Path(path).relative_to(self.root).as_posix() if Path(path).is_absolute() else path
                dropped |= {t for t in remaining if (t.split("::")[0] == rel if kind.startswith("found")
                                                     else t == f"{rel}::{rest}")}
            if proc.returncode == 4 and dropped:
                remaining = [t for t in remaining if t not in dropped]
                continue
            if report.exists():
                for case in ET.parse(report).getroot().iter("testcase"):
                    if any(child.tag in ("failure", "error") for child in case):
                        continue
                    if any(child.tag == "skipped" for child in case):
                        skipped += 1
                    else:
                        passed += 1
            break
        report.unlink(missing_ok=True)
        passed = min(passed, len(tests))
        skipped = min(skipped, len(tests) - passed)
        runnable = len(tests) - skipped
        return {"passed": passed, "failed": runnable - passed, "skipped": skipped, "expected": len(tests),
                "test_rate": round(passed / runnable, 3) if runnable else None,
                "seconds": round(time.perf_counter() - started, 1), "tail": tail}


def class_text(source: str, span: tuple[int, int, str]) -> str:
    return "\n".join(source.split("\n")[span[0]:span[1]])


def placeholder(name: str) -> str:
    return f"class {name}:\n    pass\n"


def with_class(source: str, span: tuple[int, int, str], body: str) -> str:
    lines = source.split("\n")
    return "\n".join(lines[: span[0]] + body.rstrip("\n").split("\n") + lines[span[1]:])


def _hallucinate(source: str, class_name: str) -> tuple[str, str] | None:
    """The class with one `self.method(` call misspelt (a near-miss member): (code, what changed)."""
    methods = set(re.findall(r"^    (?:async\s+)?def\s+(\w+)", source, re.M))
    for m in re.finditer(r"self\.(\w+)\(", source):
        name = m.group(1)
        if name in methods and len(name) > 4 and not name.startswith("__"):
            bad = name[:2] + name[3] + name[2] + name[4:] if name[2] != name[3] else name[:2] + name[3:]
            if bad not in methods:
                return source[: m.start(1)] + bad + source[m.end(1):], f"self.{name} -> self.{bad}"
    return None


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a.lower(), b.lower(), autojunk=False).ratio()


@functools.cache
def task_commit(git_dir: Path, task_id: str) -> tuple[str, dict[str, float]]:
    """The commit whose class matches the task's ground truth best: the private snapshots sit at
    the instance's base commit for some repositories and after its fix for others (a class the
    fix adds exists only there). Returns (commit, similarity per candidate)."""
    task = tasks_by_id()[task_id]
    scores: dict[str, float] = {}
    for commit in dict.fromkeys([fix_commit(git_dir, task), task.base_commit]):
        try:
            source = git(git_dir, "show", f"{commit}:{task.file}")
        except subprocess.CalledProcessError:
            scores[commit] = 0.0
            continue
        span = class_span(source, task.class_name)
        scores[commit] = _similarity(class_text(source, span), task.ground_truth) if span else 0.0
    return max(scores, key=lambda c: scores[c]), {c[:12]: round(v, 3) for c, v in scores.items()}


@functools.cache
def tasks_by_id() -> dict[str, BenchTask]:
    return {t.task_id: t for t in load_tasks()}


def describe(git_dir: Path, commit: str) -> str | None:
    """The release the commit belongs to, as setuptools-scm would name it."""
    try:
        tag = git(git_dir, "describe", "--tags", "--abbrev=0", commit).strip()
    except subprocess.CalledProcessError:
        return None
    match = re.search(r"\d+(\.\d+)+", tag)
    return match.group(0) if match else None


@dataclass
class Prepared:
    """A worker's checkout of one commit with its virtualenv and graph (kept across its tasks)."""

    commit: str
    root: Path
    env: Environment | None = None
    error: str | None = None
    missing: list[str] = field(default_factory=list)  # files absent from the clone
    db_path: Path | None = None
    seconds: float = 0.0


_PREPARED: dict[str, Prepared] = {}


def prepare(task: BenchTask, options: dict, with_index: bool = False) -> Prepared:
    git_dir = Path(options["git_dir"])
    commit = task_commit(git_dir, task.task_id)[0]
    prep = _PREPARED.get(commit)
    if prep is None:
        root = Path(options["scratch"]) / f"{os.getpid()}-{commit[:12]}"
        prep = _PREPARED[commit] = Prepared(commit, root, missing=checkout(git_dir, commit, root))
        try:
            as_of = git(git_dir, "show", "-s", "--format=%cI", commit).strip() if options.get("as_of_commit") else None
            prep.env = Environment(root, options.get("extra", []), describe(git_dir, commit),
                                   python=options.get("python"), as_of=as_of)
            prep.seconds = prep.env.install_seconds
        except InstallError as exc:
            prep.error = str(exc)
    if with_index and prep.db_path is None and prep.error is None:
        from codegraph.indexer import index_repository

        prep.db_path = index_repository(prep.root, prep.root.parent / f"{prep.root.name}.duckdb").db_path
    return prep


def _base_record(task: BenchTask, prep: Prepared, options: dict) -> dict:
    record = {"task_id": task.task_id, "repo": task.repo, "commit": prep.commit, "environment": prep.root.name,
              "commit_candidates": task_commit(Path(options["git_dir"]), task.task_id)[1]}
    if prep.missing:
        record["missing_files"] = prep.missing
    if prep.env is not None:
        record.update(install_seconds=round(prep.env.install_seconds, 1), venv_mb=round(prep.env.disk_mb()),
                      lock_pins_failed=prep.env.lock_failures, python=prep.env.python_version,
                      deps_as_of=prep.env.as_of)
    return record


def _mapping(task: BenchTask, source: str, span: tuple[int, int, str]) -> dict:
    """How the flipped task maps onto upstream: the real class name and how alike the bodies are."""
    similarity = _similarity(class_text(source, span), task.ground_truth)
    return {"flipped": task.class_name, "class": span[2], "file": task.file, "body_similarity": round(similarity, 3)}


def sanity_work(task_id: str, options: dict) -> dict:
    task = tasks_by_id()[task_id]
    prep = prepare(task, options)
    record = _base_record(task, prep, options)
    if prep.error:
        return {**record, "error": prep.error, "sane": False}
    target = prep.root / task.file
    original = target.read_text()
    span = class_span(original, task.class_name)
    if span is None:
        return {**record, "error": f"class {task.class_name} not found in {task.file}", "sane": False}
    tests = prep.env.collected(real_test_ids(prep.root, task.tests))
    record["mapping"] = {**_mapping(task, original, span), "tests": f"{len(tests)} ids for {len(task.tests)} expected"}
    record["ground_truth"] = prep.env.run_tests(tests, options["test_seconds"])
    try:
        target.write_text(with_class(original, span, placeholder(span[2])))
        record["removed"] = prep.env.run_tests(tests, options["test_seconds"])
    finally:
        target.write_text(original)
    gt, rm = record["ground_truth"], record["removed"]
    record["sane"] = gt["failed"] == 0 and gt["passed"] > 0 and rm["passed"] < gt["passed"]
    return record


def _class_qualname(db_path: Path, file: str, name: str) -> str | None:
    from codegraph.db import connect_readonly

    con = connect_readonly(db_path)
    try:
        row = con.execute("""SELECT c.qualname FROM classes c JOIN files f USING (file_id)
                             WHERE f.path = $p AND c.name = $n""", {"p": file, "n": name}).fetchone()
    finally:
        con.close()
    return row[0] if row else None


def _generator(options: dict, truth: str, name: str, scratch: Path):
    """(model, starting code or None, note) for one sample."""
    from codegraph.llm import OpenAIChat, ReplayModel
    from codegraph.refine.offline import OfflineRepairer

    kind = options["generator"]
    if kind == "replay":
        recording = scratch / f"{os.getpid()}-replay.json"
        recording.write_text(json.dumps({"completions": [f"```python\n{truth}```"]}))
        return ReplayModel(str(recording)), None, "ground truth replayed"
    if kind == "offline":
        damaged = _hallucinate(truth, name)
        if damaged is None:
            return None, None, "no near-miss member call to damage"
        return OfflineRepairer(), damaged[0], damaged[1]
    return (OpenAIChat(options["model"], options.get("base_url"), options.get("api_key"),
                       temperature=options["temperature"]), None, None)


def _feedback(run, evaluation: dict) -> dict:
    last = run.iterations[-1] if run.iterations else None
    return {"diagnostics": [f"{d['symbol']}: {d['message']}" for d in (last.diagnostics if last else [])][:10],
            "tests_tail": evaluation.get("tail", [])[-4:]}


def run_work(task_id: str, options: dict) -> dict:
    """Remove the class, index that state, let refine write it, evaluate with the expected tests."""
    from benchmarks.metrics import dependency_invocation_rate, reference_dependencies, sample_from_run
    from codegraph.indexer import index_repository
    from codegraph.languages.python.splice import splice
    from codegraph.refine.loop import refine
    from codegraph.refine.task import Limits, Task

    task = tasks_by_id()[task_id]
    prep = prepare(task, options, with_index=True)
    record = {**_base_record(task, prep, options), "run": {k: options.get(k) for k in RUN_OPTIONS}}
    if prep.error:
        return {**record, "error": prep.error}
    target = prep.root / task.file
    original = target.read_text()
    span = class_span(original, task.class_name)
    tests = prep.env.collected(real_test_ids(prep.root, task.tests)) if span else []
    if span is None or not tests:
        return {**record, "error": f"class {task.class_name} or its tests not found upstream"}
    name = span[2]
    truth = class_text(original, span) + "\n"
    qualname = _class_qualname(prep.db_path, task.file, name)
    provided = reference_dependencies(prep.db_path, qualname, with_members=True) if qualname else set()
    removed = with_class(original, span, placeholder(name))
    scratch = prep.root.parent
    task_db = scratch / f"{os.getpid()}-task.duckdb"
    shutil.copyfile(prep.db_path, task_db)
    record.update(mapping=_mapping(task, original, span), tests=len(tests), provided=sorted(provided), samples=[])
    limits = Limits(iterations=options["iterations"], seconds=options["seconds"], test_seconds=options["test_seconds"])
    description = task.detailed if options["description"] == "detailed" else task.sketchy
    try:
        target.write_text(removed)
        index_repository(prep.root, task_db)  # the graph of the repository without the class
        for _ in range(options["samples"]):
            model, starting, note = _generator(options, truth, name, scratch)
            if model is None:
                return {**record, "error": note}
            run = refine(Task(prep.root, task.file, name, description, tests, starting, options["mode"], limits,
                              None, prep.env.python), model, db_path=task_db)
            final = splice(removed, name, run.code).text if run.code.strip() else removed
            target.write_text(final)
            evaluation = prep.env.run_tests(tests, options["test_seconds"])
            target.write_text(removed)
            sample = sample_from_run(run, test_rate=evaluation["test_rate"] or 0.0,
                                     dir_=dependency_invocation_rate(provided, run.code))
            sample.update(note=note, evaluation={k: evaluation[k] for k in ("passed", "failed", "skipped")},
                          per_iteration=[{"number": it.number,
                                          "diagnostics": [f"{d['symbol']}: {d['message']}" for d in it.diagnostics][:5],
                                          "retrievals": len(it.retrievals), "repairs": it.repairs,
                                          "tests_passed": it.tests.get("passed") if it.tests else None}
                                         for it in run.iterations])
            if not run.success:
                sample["feedback"] = _feedback(run, evaluation)
            record["samples"].append(sample)
    finally:
        target.write_text(original)
        task_db.unlink(missing_ok=True)
    return record


RUN_OPTIONS = ("generator", "mode", "model", "samples", "iterations", "temperature", "description")
RESULTS = Path(__file__).parent / "results" / "repoclassbench"


def _selected(args) -> list[str]:
    tasks = [t for t in load_tasks() if t.repo == args.repo
             and (not args.only or any(o in t.task_id for o in args.only))]
    if not tasks:
        raise SystemExit(f"no tasks for {args.repo}" + (f" matching {args.only}" if args.only else ""))
    return [t.task_id for t in sorted(tasks, key=lambda t: (t.instance_id, t.task_id))][: args.limit]


def _run_name(args) -> str:
    who = args.model if args.generator == "openai" else args.generator
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{who}-{args.mode}" + (f"-n{args.samples}" if args.samples > 1 else ""))


def _print(task_id: str, record: dict) -> None:
    if "error" in record:
        print(f"{task_id}: ERROR {record['error'].splitlines()[0]}", flush=True)
    elif "ground_truth" in record:
        gt, rm = record["ground_truth"], record["removed"]
        print(f"{task_id}: ground truth {gt['passed']}/{gt['expected']} (skipped {gt['skipped']}), "
              f"removed {rm['passed']}/{rm['expected']} -> {'sane' if record['sane'] else 'NOT sane'}", flush=True)
    else:
        print(f"{task_id}: " + ", ".join(f"{'ok' if s['success'] else 'fail'} rate {s['test_rate']}"
                                          for s in record["samples"]), flush=True)


def main(argv: list[str] | None = None) -> None:
    from benchmarks.runner import ResultStore, run_all, shard

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("stats", help="tasks and test ids per repository")
    for command, help_text in (("sanity", "ground truth passes, removal fails, per task"),
                               ("run", "refine writes the class; evaluated with the expected tests")):
        p = sub.add_parser(command, help=help_text)
        p.add_argument("--repo", required=True, help="owner/name as in the data, e.g. psf/requests")
        p.add_argument("--git-dir", type=Path, required=True, help="a local clone's .git (or bare) directory")
        p.add_argument("--setup", type=Path, help='JSON {"owner/name": ["extra pip requirement", ...]}')
        p.add_argument("--only", nargs="*", help="only tasks whose id contains one of these")
        p.add_argument("--limit", type=int, help="at most this many tasks")
        p.add_argument("--workers", type=int, default=1, help="worker processes (each prepares its own checkout)")
        p.add_argument("--shard", help="I/N: this machine's share of the tasks")
        p.add_argument("--test-seconds", type=float, default=900)
        p.add_argument("--retry-errors", action="store_true", help="rerun tasks whose record is an error")
        p.add_argument("--rerun", action="store_true", help="rerun the selected tasks even if they have results")
        p.add_argument("--python", help="interpreter for the project's virtualenv (default: this one)")
        p.add_argument("--latest-deps", action="store_true",
                       help="resolve dependencies as of today instead of as of the commit's date")
        p.add_argument("--results", type=Path, help="results directory (default benchmarks/results/repoclassbench/...)")
        if command == "run":
            p.add_argument("--generator", choices=("replay", "offline", "openai"), required=True)
            p.add_argument("--mode", default="cocogen")
            p.add_argument("--samples", type=int, default=1, help="answers per task, for pass@k")
            p.add_argument("--temperature", type=float, default=0.0)
            p.add_argument("--iterations", type=int, default=3)
            p.add_argument("--seconds", type=float, default=1800, help="time limit per refine run")
            p.add_argument("--description", choices=("detailed", "sketchy"), default="detailed")
            p.add_argument("--model")
            p.add_argument("--base-url")
            p.add_argument("--api-key")
    args = parser.parse_args(argv)
    if args.command == "stats":
        tasks = load_tasks()
        counts: dict[str, int] = {}
        for t in tasks:
            counts[t.repo] = counts.get(t.repo, 0) + 1
        print(json.dumps({"tasks": len(tasks), "tests": sum(len(t.tests) for t in tasks), "by_repo": counts}, indent=1))
        return
    if args.command == "run" and args.generator == "openai" and not args.model:
        parser.error("--generator openai needs --model (and --base-url for a local server)")
    ids = shard(_selected(args), args.shard)
    scratch = Path(tempfile.mkdtemp(prefix="codegraph-rcb-"))
    options = {"git_dir": str(args.git_dir.resolve()), "scratch": str(scratch), "test_seconds": args.test_seconds,
               "python": args.python, "as_of_commit": not args.latest_deps,
               "extra": json.loads(args.setup.read_text()).get(args.repo, []) if args.setup else []}
    if args.command == "sanity":
        store, work = ResultStore(args.results or RESULTS / "sanity"), sanity_work
    else:
        options.update({k: getattr(args, k) for k in RUN_OPTIONS}, seconds=args.seconds, base_url=args.base_url,
                       api_key=args.api_key)
        store, work = ResultStore(args.results or RESULTS / "runs" / _run_name(args)), run_work
    try:
        written = run_all(work, ids, store, options, workers=args.workers, retry_errors=args.retry_errors,
                          rerun=args.rerun, progress=_print)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{len(written)} task(s) run, {len(ids) - len(written)} already done; results in {store.directory}")


if __name__ == "__main__":
    main()

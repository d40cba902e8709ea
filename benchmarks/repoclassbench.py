"""RepoClassBench-Python on the public upstream repositories, from a local checkout.

    python benchmarks/repoclassbench.py sanity --repo psf/requests --git-dir /path/to/requests.git \
        [--setup EXTRA.json] [--out benchmarks/results/repoclassbench_requests.json]

The data file (../shared/data/repoclassbench/python_data.json, MIT) names for each task a class to
write, descriptions, the pytest ids expected to pass and the ground-truth class. Its snapshots
are private copies whose identifiers were case-flipped (`Session` -> `SESsiON`); this harness
uses the public repository instead, at the upstream fix commit of the task's SWE-bench instance
(the "Merge pull request #N" commit after the base commit; else the base commit), and maps
flipped names back by matching them case-insensitively against the upstream code. It installs
the checkout by its own declared means (`pip install -e .`, plus requirements-dev.txt or a
`test`/`tests`/`dev` extra when present) in a private virtualenv; extra per-repository steps come
from a JSON file the user supplies ({"owner/name": ["pip requirement", ...]}).

`sanity` shows, per task, that the upstream class passes the expected tests and that replacing
it with a placeholder makes them fail: the harness measures what it claims to measure. The
upstream code is read and run from the checkout and never committed.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
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


def checkout(git_dir: Path, commit: str, dest: Path) -> None:
    data = subprocess.run(["git", f"--git-dir={git_dir}", "archive", commit], capture_output=True, check=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(dest, filter="data")


_CLASS = re.compile(r"^class\s+(\w+)", re.M)


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


class Environment:
    """A virtualenv with the checkout installed by its own declared means."""

    def __init__(self, root: Path, extra: list[str]) -> None:
        self.root = root
        self.venv = root.parent / (root.name + "-venv")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
        pip = [str(self.venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        self.lock_failures = self._install_lock(pip, root)
        subprocess.run([*pip, "-e", str(root), *(["--no-deps"] if (root / "pdm.lock").is_file() else [])],
                       check=True, capture_output=True)
        for name in ("requirements-dev.txt", "requirements/tests.txt", "requirements-test.txt"):
            if (root / name).is_file():
                subprocess.run([*pip, "-r", str(root / name)], check=False, capture_output=True)
        subprocess.run([*pip, "pytest", *extra], check=True, capture_output=True)
        self.install_seconds = time.perf_counter() - started

    @staticmethod
    def _install_lock(pip: list[str], root: Path) -> list[str]:
        """A PDM lock file pins the dependencies as of the commit: install exactly those."""
        lock = root / "pdm.lock"
        if not lock.is_file():
            return []
        import tomllib

        packages = tomllib.loads(lock.read_text()).get("package", [])
        pins = [f"{p['name']}=={p['version']}" + (f"; {p['marker']}" if p.get("marker") else "") for p in packages]
        req = root.parent / (root.name + "-lock.txt")
        req.write_text("\n".join(pins) + "\n")
        if subprocess.run([*pip, "--no-deps", "-r", str(req)], capture_output=True).returncode == 0:
            return []
        failed = []
        for pin in pins:  # one bad pin must not cost all the others
            if subprocess.run([*pip, "--no-deps", pin], capture_output=True).returncode != 0:
                failed.append(pin)
        return failed

    def disk_mb(self) -> float:
        return sum(p.stat().st_size for p in self.venv.rglob("*") if p.is_file()) / 1e6

    def collected(self, tests: list[str]) -> list[str]:
        """Expected ids whose parameter ids this commit generates differently are replaced by the
        ids pytest actually collects for the same test function (it refuses unknown ids)."""
        files = sorted({t.split("::")[0] for t in tests})
        proc = subprocess.run([str(self.venv / "bin" / "python"), "-m", "pytest", "--collect-only", "-q",
                               "-p", "no:cacheprovider", *files], cwd=self.root, capture_output=True, text=True)
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
        report = self.root / ".bench-junit.xml"
        cmd = [str(self.venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--junitxml={report}", *tests]
        started = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, timeout=timeout)
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        except subprocess.TimeoutExpired:
            return {"passed": 0, "failed": len(tests), "error": "timeout"}
        passed = failed = 0
        if report.exists():
            for case in ET.parse(report).getroot().iter("testcase"):
                if any(child.tag in ("failure", "error") for child in case):
                    failed += 1
                elif not any(child.tag == "skipped" for child in case):
                    passed += 1
            report.unlink()
        return {"passed": passed, "failed": failed, "expected": len(tests),
                "test_rate": round(passed / len(tests), 3) if tests else None,
                "seconds": round(time.perf_counter() - started, 1), "tail": tail}


def placeholder(name: str) -> str:
    return f"class {name}:\n    pass\n"


def with_class(source: str, span: tuple[int, int, str], body: str) -> str:
    lines = source.split("\n")
    return "\n".join(lines[: span[0]] + body.rstrip("\n").split("\n") + lines[span[1]:])


def each_task(args, limit: int | None = None, with_index: bool = False):
    """(task, commit, checkout root, environment, graph database) for the repository's tasks; one
    checkout, virtualenv and index per commit, all in a scratch folder removed at the end."""
    tasks = [t for t in load_tasks() if t.repo == args.repo and (not getattr(args, "only", None)
                                                                 or any(o in t.task_id for o in args.only))][:limit]
    if not tasks:
        raise SystemExit(f"no tasks for {args.repo}")
    extra = json.loads(args.setup.read_text()).get(args.repo, []) if args.setup else []
    scratch = Path(tempfile.mkdtemp(prefix="codegraph-rcb-"))
    prepared: dict[str, tuple] = {}
    try:
        for task in tasks:
            commit = fix_commit(args.git_dir, task)
            root = scratch / commit[:12]
            if commit not in prepared:
                checkout(args.git_dir, commit, root)
                db_path = None
                if with_index:
                    from codegraph.indexer import index_repository

                    db_path = index_repository(root, scratch / f"{commit[:12]}.duckdb").db_path
                prepared[commit] = (Environment(root, extra), db_path)
            yield (task, commit, root, *prepared[commit])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def sanity(args) -> None:
    results = []
    for task, commit, root, env, _ in each_task(args):
        target = root / task.file
        original = target.read_text()
        span = class_span(original, task.class_name)
        record = {"task_id": task.task_id, "commit": commit, "class": span[2] if span else None,
                  "install_seconds": round(env.install_seconds, 1), "venv_mb": round(env.disk_mb()),
                  "lock_pins_failed": env.lock_failures}
        if span is None:
            record["error"] = f"class {task.class_name} not found in {task.file}"
            results.append(record)
            continue
        tests = env.collected(real_test_ids(root, task.tests))
        record["tests_mapped"] = f"{len(tests)} ids for {len(task.tests)} expected"
        record["ground_truth"] = env.run_tests(tests)
        try:
            target.write_text(with_class(original, span, placeholder(span[2])))
            record["removed"] = env.run_tests(tests)
        finally:
            target.write_text(original)
        gt, rm = record["ground_truth"], record["removed"]
        record["sane"] = gt["passed"] == len(tests) and rm["passed"] < gt["passed"]
        results.append(record)
        print(f"{task.task_id}: ground truth {gt['passed']}/{len(tests)}, removed {rm['passed']}/{len(tests)}",
              flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"{sum(r.get('sane', False) for r in results)}/{len(results)} tasks sane; wrote {args.out}")


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


def run_refine(args) -> None:
    """Prove the pipeline on real tasks: replay the ground truth, and repair a damaged ground truth offline."""
    from codegraph.refine.loop import refine
    from codegraph.refine.models import ReplayModel
    from codegraph.refine.task import Limits, Task

    results = []
    for task, commit, root, env, db_path in each_task(args, args.tasks, with_index=True):
        scratch = root.parent
        source = (root / task.file).read_text()
        span = class_span(source, task.class_name)
        tests = real_test_ids(root, task.tests)
        if span is None or not tests:
            continue
        truth = "\n".join(source.split("\n")[span[0]:span[1]]) + "\n"
        python = str(env.venv / "bin" / "python")
        limits = Limits(iterations=3, seconds=900, test_seconds=900)
        record = {"task_id": task.task_id, "class": span[2], "tests": len(tests)}
        recording = scratch / "replay.json"
        recording.write_text(json.dumps({"completions": [f"```python\n{truth}```"]}))
        replay = refine(Task(root, task.file, span[2], task.detailed, tests, None, "cocogen", limits, None, python),
                        ReplayModel(str(recording)), db_path=db_path)
        record["replay"] = {"success": replay.success, "lint_clean": replay.lint_clean,
                            "tests_passed": replay.tests_passed, "iterations": len(replay.iterations),
                            "seconds": round(replay.seconds, 1), "stop": replay.stop_reason}
        damaged = _hallucinate(truth, span[2])
        if damaged:
            offline = refine(Task(root, task.file, span[2], task.detailed, tests, damaged[0], "cocogen", limits,
                                  None, python), None, db_path=db_path)
            record["offline"] = {"injected": damaged[1], "success": offline.success,
                                 "lint_clean": offline.lint_clean, "tests_passed": offline.tests_passed,
                                 "iterations": len(offline.iterations), "seconds": round(offline.seconds, 1),
                                 "repairs": [r for it in offline.iterations for r in it.repairs],
                                 "stop": offline.stop_reason}
        results.append(record)
        print(json.dumps(record), flush=True)
    out = args.out or Path(__file__).parent / "results" / f"repoclassbench_refine_{args.repo.replace('/', '_')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sanity", help="ground truth passes, removal fails, per task")
    s.add_argument("--repo", required=True, help="owner/name as in the data, e.g. psf/requests")
    s.add_argument("--git-dir", type=Path, required=True, help="a local clone's .git (or bare) directory")
    s.add_argument("--setup", type=Path)
    s.add_argument("--only", nargs="*", help="only tasks whose id contains one of these")
    s.add_argument("--out", type=Path)
    sub.add_parser("stats", help="tasks per repository")
    r = sub.add_parser("refine", help="replay the ground truth, and repair it offline after damaging it")
    r.add_argument("--repo", required=True)
    r.add_argument("--git-dir", type=Path, required=True)
    r.add_argument("--setup", type=Path)
    r.add_argument("--tasks", type=int, default=3)
    r.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.command == "refine":
        run_refine(args)
        return
    if args.command == "stats":
        tasks = load_tasks()
        counts: dict[str, int] = {}
        for t in tasks:
            counts[t.repo] = counts.get(t.repo, 0) + 1
        print(json.dumps({"tasks": len(tasks), "tests": sum(len(t.tests) for t in tasks), "by_repo": counts}, indent=1))
        return
    args.out = args.out or Path(__file__).parent / "results" / f"repoclassbench_{args.repo.replace('/', '_')}.json"
    sanity(args)


if __name__ == "__main__":
    main()

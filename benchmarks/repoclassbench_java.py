"""RepoClassBench-Java on the public upstream repositories: reachable, sane, and the context a task gets.

    python -m benchmarks.repoclassbench_java locate --repos REPOS.json
    python -m benchmarks.repoclassbench_java sanity --repos REPOS.json [--setup SETUP.json] [--only REPO]
    python -m benchmarks.repoclassbench_java context --repos REPOS.json [--budget 2000] [--only REPO]
    python -m benchmarks.repoclassbench_java refine --repos REPOS.json [--setup SETUP.json] [--per-repo N]
    python -m benchmarks.repoclassbench_java splice

The data file (../shared/data/repoclassbench/java_data.json, MIT) names for each of its 130 tasks a
class to write (`file`, `class_name`), two descriptions, the test class that checks it and the
ground-truth class. Its repositories came as a download that is unreachable; this harness uses
the public history instead. REPOS.json (the user's, read at run time) maps each repository name of
the data to a git directory holding its history ({"zouzhiy-excel": "/path/to/clone/.git", ...}).

`locate`: each task's commit, the newest commit whose file at the task's path has the ground
truth's git blob hash and which has the task's test file.

`sanity`: per repository and commit, a scratch checkout (`git archive`), Maven run in the first
folder from the top that holds a pom.xml, as the benchmark's own harness does
(`mvn test -Dtest=T1,T2,... -DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false`, all
the tasks' test classes of that commit in one run), each test class's surefire report read:
the ground truth compiles and its tests pass. Per-repository steps come from SETUP.json, the
user's: {"repo": {"maven_args": ["-Dx=y"], "edits": [{"file": "pom.xml", "from": "<version>1.18.20<",
"to": "<version>1.18.30<"}]}} (an edit applies to the scratch checkout only, and must match).

`context`: per task, a checkout with the task's class emptied (its file holds its package and an
empty class) and every test file hidden
(the benchmark's harness meant to hide them and never did), indexed; the task context for the
class (`codegraph context`, the detailed description, at --budget tokens) against BM25 code
chunks at the same budget (whole definitions, best first, as benchmarks.context_bench does; a
class counts as held by the chunks strictly when its own chunk is shown, leniently when a chunk of
one of its members is).
Ground truth: what the real class uses of its project (nobody here chose it): the project
methods and constructors its code calls, the classes it extends or implements, and the project
classes its fields, parameters and return types name, read from the index of the full checkout.
Recall: the share of those the context names (by qualname).

`refine`: per task, `codegraph refine` in the task's state (the class emptied; the model's index
without the test files, which stay in the repository for Maven) with the ground truth as its first
candidate and no model: the answer spliced in, javac's check, the test class through Maven behind
the fence. Ground truth: the benchmark's own class and test. A SETUP.json `maven_args` cannot go
through a task file: they go to the checkout's `.mvn/maven.config`, which Maven reads.

`splice`: each ground truth, answered whole, spliced into its task's emptied file (no repository
needed): is the result the project's file?
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import threading
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from benchmarks.context_bench import chunks_seen
from codegraph.db import connect_readonly
from codegraph.indexer import index_repository
from codegraph.languages import language
from codegraph.languages.java.check import package_of
from codegraph.refine.loop import refine
from codegraph.refine.offline import OfflineRepairer
from codegraph.refine.task import task_from_dict
from codegraph.retrieval.task_context import task_context

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "repoclassbench" / "java_data.json"
RESULTS = Path("benchmarks/results/repoclassbench_java")
_TEST_PATH = re.compile(r"(^|/)src/test/")


def load_tasks(path: Path = DATA) -> list[dict]:
    out = []
    for t in json.loads(path.read_text()):
        repo = t["repo_metadata"]["repo_name"]
        out.append({"task_id": t["task_id"], "repo": repo, "file": t["file"].split("/", 1)[1],
                    "class_name": t["class_name"], "test_file": t["evaluation_metadata"]["test_file"].split("/", 1)[1],
                    "test_class": t["evaluation_metadata"]["test_class_name"],
                    "description": t["detailed_description"], "sketchy": t["sketchy_description"],
                    "truth": t["ground_truth_class_body"]})
    return out


def git(git_dir: str, *args: str, input: str | None = None) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True, input=input,
                          check=True).stdout


def blob_hash(text: str) -> str:
    body = text.encode()
    return hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()


def _objects(git_dir: str, specs: list[str]) -> list[str | None]:
    out = git(git_dir, "cat-file", "--batch-check=%(objectname)", input="\n".join(specs) + "\n").split("\n")
    return [None if o.endswith("missing") else o.strip() for o in out[:len(specs)]]


def locate(tasks: list[dict], repos: dict[str, str]) -> dict[int, str | None]:
    """task id -> the newest commit holding the ground truth at its path and the test file."""
    found: dict[int, str | None] = {}
    commits: dict[str, list[str]] = {}
    for task in tasks:
        git_dir = repos.get(task["repo"])
        if git_dir is None:
            found[task["task_id"]] = None
            continue
        if task["repo"] not in commits:
            commits[task["repo"]] = git(git_dir, "log", "--all", "--format=%H").split()
        history = commits[task["repo"]]
        blobs = _objects(git_dir, [f"{c}:{task['file']}" for c in history])
        tests = _objects(git_dir, [f"{c}:{task['test_file']}" for c in history])
        truth = blob_hash(task["truth"])
        found[task["task_id"]] = next((c for c, b, t in zip(history, blobs, tests) if b == truth and t), None)
    return found


def checkout(git_dir: str, commit: str, dest: Path) -> list[str]:
    """The commit's files under dest; returns the paths whose contents the git directory lacks (a
    mirror may leave its largest files out: they stay absent, and the record says so)."""
    entries = []
    for line in git(git_dir, "ls-tree", "-r", "-z", commit).split("\0"):
        if not line:
            continue
        meta, path = line.split("\t", 1)
        mode, kind, oid = meta.split()
        if kind == "blob" and ".." not in path.split("/") and not path.startswith("/"):
            entries.append((mode, oid, path))
    process = subprocess.Popen(["git", "--git-dir", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE)
    missing = []
    with process:
        feeder = threading.Thread(target=lambda: (process.stdin.write(
            "".join(f"{oid}\n" for _, oid, _ in entries).encode()), process.stdin.close()), daemon=True)
        feeder.start()
        for mode, oid, path in entries:
            header = process.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                missing.append(path)
                continue
            data = process.stdout.read(int(header[2]))
            process.stdout.read(1)  # the newline after the contents
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == "120000":  # a symbolic link: kept as the text of its target, never followed
                target.write_bytes(data)
                continue
            target.write_bytes(data)
            if mode == "100755":
                target.chmod(0o755)
        feeder.join()
    return missing


def maven_root(root: Path) -> Path | None:
    """The first folder from the top holding a pom.xml (breadth first), as the benchmark's harness."""
    level = [root]
    while level:
        for folder in level:
            if (folder / "pom.xml").is_file():
                return folder
        level = sorted(p for folder in level for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    return None


def surefire(root: Path) -> dict[str, dict]:
    """Test class (simple name) -> {tests, failures, errors, skipped}, from every surefire report
    under root, by each test case's class (a TestNG run reports one suite for all its classes)."""
    out: dict[str, dict] = {}
    for report in root.rglob("surefire-reports/TEST-*.xml"):
        try:
            suite = ET.parse(report).getroot()
        except ET.ParseError:
            continue
        for case in suite.iter("testcase"):
            name = (case.get("classname") or suite.get("name") or "").rpartition(".")[2]
            counts = out.setdefault(name, {"tests": 0, "failures": 0, "errors": 0, "skipped": 0})
            counts["tests"] += 1
            for kind, key in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
                counts[key] += case.find(kind) is not None
    return out


def prepare(repo: str, root: Path, setup: dict) -> list[str]:
    """The user's steps for a repository applied to its scratch checkout; its extra Maven arguments."""
    steps = setup.get(repo, {})
    for edit in steps.get("edits", ()):
        path = root / edit["file"]
        text = path.read_text(encoding="utf-8")
        if edit["from"] not in text:
            raise SystemExit(f"--setup: {repo}: {edit['file']} has no {edit['from']!r}: fix the edit or drop it")
        path.write_text(text.replace(edit["from"], edit["to"]), encoding="utf-8")
    return list(steps.get("maven_args", ()))


def sanity(tasks: list[dict], repos: dict[str, str], setup: dict, scratch: Path) -> dict[int, dict]:
    commits = locate(tasks, repos)
    groups: dict[tuple[str, str], list[dict]] = {}
    out: dict[int, dict] = {}
    for task in tasks:
        commit = commits[task["task_id"]]
        if commit is None:
            out[task["task_id"]] = {"repo": task["repo"], "sane": False, "why": "no commit holds the ground truth"}
            continue
        groups.setdefault((task["repo"], commit), []).append(task)
    for (repo, commit), group in groups.items():
        try:
            out.update(_sane(repo, commit, group, repos, setup, scratch))
        except (OSError, subprocess.SubprocessError) as exc:  # one commit's failure is its tasks' record
            out.update({t["task_id"]: {"repo": repo, "commit": commit, "sane": False, "why": str(exc)[:500]}
                        for t in group})
    return out


def _sane(repo: str, commit: str, group: list[dict], repos: dict[str, str], setup: dict,
          scratch: Path) -> dict[int, dict]:
    out: dict[int, dict] = {}
    root = scratch / f"{repo}-{commit[:10]}"
    shutil.rmtree(root, ignore_errors=True)
    absent = checkout(repos[repo], commit, root)
    pom = maven_root(root)
    extra = prepare(repo, root, setup)
    started = time.perf_counter()
    tests = ",".join(sorted({t["test_class"] for t in group}))
    done = subprocess.run(["mvn", "-B", "-q", "test", f"-Dtest={tests}", "-DfailIfNoTests=false",
                           "-Dsurefire.failIfNoSpecifiedTests=false", *extra],
                          cwd=pom or root, capture_output=True, text=True, timeout=3600) if pom else None
    seconds = round(time.perf_counter() - started, 1)
    reports = surefire(root)
    tail = (done.stdout + done.stderr)[-1500:] if done is not None else "no pom.xml"
    for task in group:
        report = reports.get(task["test_class"])
        sane = bool(report) and report["tests"] > 0 and not report["failures"] and not report["errors"]
        out[task["task_id"]] = {"repo": repo, "commit": commit, "sane": sane, "report": report,
                                "maven_exit": done.returncode if done else None, "maven_seconds": seconds,
                                "absent_from_the_mirror": absent[:20],
                                **({} if sane else {"maven_tail": tail})}
    print(repo, commit[:10], f"{sum(out[t['task_id']]['sane'] for t in group)}/{len(group)} sane", seconds, "s",
          flush=True)
    shutil.rmtree(root, ignore_errors=True)
    return out


_USES = """
WITH own AS (SELECT qualname FROM symbols WHERE qualname = $c OR starts_with(qualname, $c || '.'))
SELECT DISTINCT c.resolved_callee FROM calls c JOIN symbols d ON d.qualname = c.resolved_callee
WHERE (c.caller_qualname = $c OR starts_with(c.caller_qualname, $c || '.'))
  AND c.resolved_callee NOT IN (SELECT qualname FROM own)
UNION
SELECT resolved_base FROM inheritance WHERE class_qualname = $c AND resolved_base IN (SELECT qualname FROM classes)
"""
_TYPES = re.compile(r"[A-Z][\w$]*")


def uses(db: Path, klass: str) -> set[str]:
    """What the class uses of its project: called methods and constructors, its bases, and the
    project classes named in its members' types."""
    con = connect_readonly(db)
    try:
        found = {r[0] for r in con.execute(_USES, {"c": klass}).fetchall()}
        texts = con.execute("""SELECT coalesce(signature, '') || ' ' || coalesce(annotation, '') FROM members
                               WHERE class_qualname = $c""", {"c": klass}).fetchall()
        module = con.execute("SELECT module FROM classes WHERE qualname = $c", {"c": klass}).fetchone()
        names = {n for (t,) in texts for n in _TYPES.findall(t)}
        for name in names:
            row = con.execute("""
                SELECT c.qualname FROM classes c WHERE c.name = $n AND c.qualname <> $k AND NOT contains(c.qualname, '$')
                ORDER BY (regexp_extract(c.module, '^(.*)\\.[^.]+$', 1) = regexp_extract($m, '^(.*)\\.[^.]+$', 1)) DESC,
                         (c.qualname IN (SELECT target FROM imports WHERE module = $m)) DESC, c.qualname LIMIT 1""",
                              {"n": name, "k": klass, "m": module[0] if module else ""}).fetchone()
            if row:
                found.add(row[0])
    finally:
        con.close()
    return {u for u in found if u and u != klass and not u.startswith(klass + ".")}


def _checkouts(tasks: list[dict], repos: dict[str, str], scratch: Path, prefix: str):
    """(task, commit, a fresh checkout of it) for each task that has a commit."""
    commits = locate(tasks, repos)
    for task in tasks:
        commit = commits[task["task_id"]]
        if commit is None:
            continue
        root = scratch / f"{prefix}{task['task_id']}"
        shutil.rmtree(root, ignore_errors=True)
        checkout(repos[task["repo"]], commit, root)
        yield task, commit, root


def _empty_class(root: Path, task: dict) -> None:
    """The task's state: its class's file holds only its package and an empty class (what the
    model writes goes there)."""
    target = root / task["file"]
    package = package_of(target.read_text(encoding="utf-8", errors="replace"))
    target.write_text((f"package {package};\n\n" if package else "") + f"public class {task['class_name']} {{\n}}\n",
                      encoding="utf-8")


def _hide_tests(root: Path) -> None:
    for path in [p for p in root.rglob("*.java") if _TEST_PATH.search(p.relative_to(root).as_posix())]:
        path.unlink()


def context(tasks: list[dict], repos: dict[str, str], budget: int, scratch: Path) -> dict[int, dict]:
    out: dict[int, dict] = {}
    for task, commit, root in _checkouts(tasks, repos, scratch, "t"):
        full = scratch / f"t{task['task_id']}-full.duckdb"
        index_repository(root, full, embed=False, libraries=False, full=True)
        con = connect_readonly(full)
        try:
            row = con.execute("SELECT qualname FROM classes WHERE path = $p AND name = $n ORDER BY length(qualname) LIMIT 1",
                              {"p": task["file"], "n": task["class_name"]}).fetchone()
        finally:
            con.close()
        if row is None:
            continue
        klass = row[0]
        used = uses(full, klass)
        _empty_class(root, task)  # the task's state, every test file hidden
        _hide_tests(root)
        db = scratch / f"t{task['task_id']}.duckdb"
        index_repository(root, db, embed=False, libraries=False, full=True)
        started = time.perf_counter()
        found = task_context(db, task["description"], task["file"], task["class_name"], budget_tokens=budget,
                             exclude_target=True) if used else None
        ms = (time.perf_counter() - started) * 1000
        con = connect_readonly(db)
        try:
            shown = chunks_seen(con, db, {"qualname": klass, "description": task["description"]}, "bm25", budget)
        finally:
            con.close()
        # a class counts as held by a chunk of its own or of one of its members (lenient to the baseline:
        # a class's whole source rarely fits the budget)
        bm25 = len(used & shown) / len(used) if used else None
        bm25_lenient = len({u for u in used if u in shown or any(s.startswith(u + ".") for s in shown)}) / len(used) \
            if used else None
        held = used & found.qualnames() if found else set()
        out[task["task_id"]] = {"repo": task["repo"], "class": klass, "uses": len(used),
                                "recall": round(len(held) / len(used), 4) if used else None,
                                "bm25_recall": round(bm25, 4) if bm25 is not None else None,
                                "bm25_recall_lenient": round(bm25_lenient, 4) if bm25_lenient is not None else None,
                                "missed": sorted(used - held)[:20], "context_ms": round(ms, 1)}
        print(task["task_id"], task["repo"], klass, out[task["task_id"]]["recall"], out[task["task_id"]]["bm25_recall"],
              flush=True)
        shutil.rmtree(root, ignore_errors=True)
        for path in (full, db):
            for extra in path.parent.glob(path.name + "*"):
                extra.unlink(missing_ok=True)
    return out


def refine_truth(tasks: list[dict], repos: dict[str, str], setup: dict, scratch: Path,
                 test_seconds: float) -> dict[int, dict]:
    """Each task through `codegraph refine` with its ground truth as the first candidate (no model):
    the answer spliced into the task's state, javac's check, the test class through Maven behind
    the fence. What fails here is the pipeline's own failure on code known to be right."""
    out: dict[int, dict] = {}
    for task, commit, root in _checkouts(tasks, repos, scratch, "r"):
        extra = prepare(task["repo"], root, setup)
        if extra:  # a task file carries no Maven arguments: the project's own .mvn/maven.config does
            config = (maven_root(root) or root) / ".mvn" / "maven.config"
            config.parent.mkdir(exist_ok=True)
            config.write_text((config.read_text() if config.is_file() else "") + "\n".join(extra) + "\n")
        _empty_class(root, task)
        # the model's view: an index without the test files (the tests stay in the repository to be run)
        hidden = scratch / f"r{task['task_id']}-hidden"
        shutil.copytree(root, hidden, symlinks=True)
        _hide_tests(hidden)
        db = scratch / f"r{task['task_id']}.duckdb"
        index_repository(hidden, db, embed=False, libraries=False, full=True)
        shutil.rmtree(hidden, ignore_errors=True)
        job = task_from_dict({"repo": str(root), "target_file": task["file"], "symbol": task["class_name"],
                              "description": task["description"], "tests": [task["test_file"]],
                              "starting_code": task["truth"],
                              "limits": {"seconds": test_seconds * 3, "test_seconds": test_seconds}})
        started = time.perf_counter()
        result = refine(job, OfflineRepairer(), db_path=db)
        last = result.iterations[-1]
        out[task["task_id"]] = {"repo": task["repo"], "commit": commit, "success": result.success,
                                "lint_clean": result.lint_clean, "tests_passed": result.tests_passed,
                                "stop": result.stop_reason, "isolation": result.isolation,
                                "maven_config": extra, "seconds": round(time.perf_counter() - started, 1),
                                "test_seconds": round(last.tests["seconds"], 1) if last.tests else None,
                                "diagnostics": [f"{d['line']}: {d['symbol']}: {d['message'][:200]}"
                                                for d in last.diagnostics][:10],
                                **({} if result.success else {"notes": result.notes[-3:],
                                                              "tests_tail": (last.tests or {}).get("output", "")[-1500:]})}
        print(task["task_id"], task["repo"], result.success, result.stop_reason, out[task["task_id"]]["seconds"], "s",
              flush=True)
        shutil.rmtree(root, ignore_errors=True)
        for path in db.parent.glob(db.name + "*"):
            path.unlink(missing_ok=True)
    return out


def splice_truth(tasks: list[dict], scratch: Path) -> dict[int, str]:
    """Each ground truth, as a model's whole-file answer, spliced into its task's emptied file:
    `same` (the file the project has, byte for byte), `blank lines` (only empty lines differ) or
    `differs`."""
    java = language("java")
    out = {}
    for task in tasks:
        root = scratch / f"s{task['task_id']}"
        (root / task["file"]).parent.mkdir(parents=True, exist_ok=True)
        (root / task["file"]).write_text(task["truth"], encoding="utf-8")
        _empty_class(root, task)
        answer = java.code_from_answer(f"```java\n{task['truth']}```", task["class_name"]) or ""
        text = java.splice((root / task["file"]).read_text(encoding="utf-8"), task["class_name"], answer).text
        truth = task["truth"].rstrip("\n")
        out[task["task_id"]] = "same" if text.rstrip("\n") == truth else \
            "blank lines" if [l for l in text.split("\n") if l.strip()] == [l for l in truth.split("\n") if l.strip()] \
            else "differs"
        shutil.rmtree(root, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("locate", "sanity", "context", "refine", "splice"))
    parser.add_argument("--repos", type=Path, help="JSON: repository name of the data -> git dir (all but splice)")
    parser.add_argument("--setup", type=Path, help="JSON: repository -> {maven_args, edits} (see above)")
    parser.add_argument("--only", help="one repository of the data")
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--limit", type=int, help="the first N tasks only (of --only's)")
    parser.add_argument("--per-repo", type=int, help="the first N tasks of each repository only")
    parser.add_argument("--test-seconds", type=float, default=900, help="refine: a Maven run's limit")
    parser.add_argument("--data", type=Path, default=DATA, help="the benchmark's java_data.json")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.repos is None and args.command != "splice":
        parser.error(f"{args.command} needs --repos (a JSON file: repository name of the data -> its git dir)")
    repos = json.loads(args.repos.read_text()) if args.repos else {}
    tasks = [t for t in load_tasks(args.data) if args.only in (None, t["repo"])][:args.limit]
    if args.per_repo:
        by_repo: dict[str, list[dict]] = {}
        for t in tasks:
            by_repo.setdefault(t["repo"], []).append(t)
        tasks = [t for group in by_repo.values() for t in group[:args.per_repo]]
    setup = json.loads(args.setup.read_text()) if args.setup else {}
    record: dict = {"measured": time.strftime("%Y-%m-%d"), "command": " ".join(
        ["python -m benchmarks.repoclassbench_java", args.command] + (["--only", args.only] if args.only else []))}
    with tempfile.TemporaryDirectory(prefix="codegraph-rcbj-") as tmp:
        if args.command == "locate":
            found = locate(tasks, repos)
            record |= {"tasks": len(tasks), "located": sum(c is not None for c in found.values()),
                       "commits": {str(k): v for k, v in found.items()}}
        elif args.command == "sanity":
            found = sanity(tasks, repos, setup, Path(tmp))
            record |= {"tasks": len(tasks), "sane": sum(r["sane"] for r in found.values()),
                       "tasks_by_id": {str(k): v for k, v in found.items()}}
        elif args.command == "splice":
            found = splice_truth(tasks, Path(tmp))
            record |= {"tasks": len(found), **{kind: sum(v == kind for v in found.values())
                                                for kind in ("same", "blank lines", "differs")},
                       "tasks_by_id": {str(k): v for k, v in found.items()}}
        elif args.command == "refine":
            found = refine_truth(tasks, repos, setup, Path(tmp), args.test_seconds)
            record |= {"tasks": len(found), "success": sum(r["success"] for r in found.values()),
                       "lint_clean": sum(r["lint_clean"] for r in found.values()),
                       "tasks_by_id": {str(k): v for k, v in found.items()}}
        else:
            found = context(tasks, repos, args.budget, Path(tmp))
            scored = [r for r in found.values() if r["recall"] is not None]
            record |= {"budget": args.budget, "tasks": len(scored),
                       "recall": round(statistics.mean(r["recall"] for r in scored), 4) if scored else None,
                       "bm25_recall": round(statistics.mean(r["bm25_recall"] or 0 for r in scored), 4) if scored else None,
                       "bm25_recall_lenient": round(statistics.mean(r["bm25_recall_lenient"] or 0 for r in scored), 4)
                       if scored else None,
                       "context_ms_p50": round(statistics.median(r["context_ms"] for r in scored), 1) if scored else None,
                       "tasks_by_id": {str(k): v for k, v in found.items()}}
    print({k: v for k, v in record.items() if k not in ("commits", "tasks_by_id")})
    out = args.out or RESULTS / f"{args.command}{'-' + args.only if args.only else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()

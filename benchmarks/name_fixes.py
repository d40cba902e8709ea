"""Real mistakes from real history: commits that fixed a name, and whether the graph offered it.

    python -m benchmarks.name_fixes --repo NAME=GITDIR ... [--side NAME=CHECKOUT ...] [--mined FILE]

Ground truth nobody here wrote: the projects' own version history, read by pylint. A commit is a
name fix when pylint reports one of E0602 (undefined-variable), E1101 (no-member), E0611
(no-name-in-module), E0401 (import-error), E1123 (unexpected-keyword-arg) or E1120
(no-value-for-parameter) in a file the commit changes, before the commit and not after, on a
line the commit changed (or, for an undefined name, a name an import the commit added binds).
The name the fix introduced: what the commit put in place of the name on that line (`foo.bar`
-> `foo.baz`: baz), the name an added import binds, or the missing parameter.

Mining scans the non-merge commits since --since that change at most 4 Python files and 40
lines, keeps those with a hunk that swaps an identifier or only adds imports (a cheap filter: the
verdict is pylint's), and lints each changed file at the parent and at the commit (in worktrees
of the repository, with no pylintrc of the project's). Each side (`--side NAME=CHECKOUT`, put
first on the PYTHONPATH of benchmarks/name_fixes_eval.py) then indexes the repository at each
parent and answers the message as `codegraph diagnose` does, and builds the task context of the
enclosing function from its docstring: is the name in the cards, in the context?
"""

from __future__ import annotations

import argparse
import ast
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import astroid
from pylint.lint import Run
from pylint.reporters import CollectingReporter

from benchmarks.sides import RESULTS

MESSAGES = ("E0602", "E1101", "E0611", "E0401", "E1123", "E1120")
EVAL = Path(__file__).with_name("name_fixes_eval.py")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+|\S")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_IMPORT = re.compile(r"\s*(from\s+\S+\s+)?import\s")
_KEYWORDS = {"def", "class", "return", "import", "from", "as", "if", "else", "elif", "for", "while", "in", "not",
             "and", "or", "is", "None", "True", "False", "with", "try", "except", "raise", "lambda", "yield",
             "pass", "assert", "del", "global", "nonlocal", "async", "await", "self", "cls"}
_QUOTED = re.compile(r"'([^']+)'")


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, errors="replace",
                          check=False).stdout


def _hunks(repo: str, sha: str, paths: list[str]) -> list[dict]:
    """The commit's hunks (no context lines): the file, the old and new first lines, the lines."""
    hunks: list[dict] = []
    path = None
    for line in _git(repo, "show", "-U0", "--format=", sha, "--", *paths).splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@"):
            m = re.match(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", line)
            hunks.append({"path": path, "old": int(m.group(1)), "new": int(m.group(3)), "removed": [], "added": []})
        elif hunks and line.startswith("-") and not line.startswith("---"):
            hunks[-1]["removed"].append(line[1:])
        elif hunks and line.startswith("+") and not line.startswith("+++"):
            hunks[-1]["added"].append(line[1:])
    return [h for h in hunks if h["path"]]


def _swapped(removed: str, added: str) -> list[str]:
    """The identifiers `added` puts where `removed` had others, when that is all that changed."""
    old, new = _TOKEN.findall(removed), _TOKEN.findall(added)
    if len(old) != len(new) or old == new:
        return []
    pairs = [(a, b) for a, b in zip(old, new) if a != b]
    if len(pairs) > 2 or not all(_IDENT.match(a) and _IDENT.match(b) and a not in _KEYWORDS and b not in _KEYWORDS
                                 for a, b in pairs):
        return []
    return [b for _, b in pairs]


def candidates(repo: str, since: str, limit: int | None) -> list[dict]:
    """Small commits with a hunk that swaps an identifier or only adds imports, newest first."""
    out, commit = [], None
    for line in _git(repo, "log", "--no-merges", f"--since={since}", "--format=@%H %P", "--numstat", "--",
                     "*.py").splitlines():
        if line.startswith("@"):
            sha, *parents = line[1:].split()
            commit = {"sha": sha, "parents": parents, "files": []}
            out.append(commit)
        elif line.strip() and commit is not None:
            added, removed, path = line.split("\t", 2)
            if path.endswith(".py") and added != "-":
                commit["files"].append((path, int(added) + int(removed)))
    kept = []
    for c in out:
        if len(c["parents"]) != 1 or not c["files"] or len(c["files"]) > 4 or sum(n for _, n in c["files"]) > 40:
            continue
        hunks = _hunks(repo, c["sha"], [p for p, _ in c["files"]])
        if any((h["removed"] and len(h["removed"]) == len(h["added"]) <= 3
                and any(_swapped(r, a) for r, a in zip(h["removed"], h["added"])))
               or (not h["removed"] and h["added"] and all(_IMPORT.match(a) for a in h["added"])) for h in hunks):
            kept.append({"sha": c["sha"], "parent": c["parents"][0], "paths": sorted({h["path"] for h in hunks})})
        if limit and len(kept) >= limit:
            break
    return kept


_RC = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
_RC.write("[tool.pylint.main]\n")
_RC.close()


def _forget_project(worktree: Path, old: str | None, new: str) -> None:
    """Drop from astroid's cache every module of the worktree before pylint reads another commit
    (pylint runs in this process; the standard library's modules stay). astroid may hold a module
    by a path relative to the folder pylint ran in: such a path is the worktree's too. When files
    came or went, its caches of where modules live are stale as well: start from nothing."""
    listing = subprocess.run(["git", "-C", str(worktree), "diff", "--name-status", old, new], capture_output=True,
                             text=True, check=False).stdout if old else ""
    if old is None or any(line[:1] in "ADRC" for line in listing.splitlines()):
        astroid.MANAGER.clear_cache()
        return
    cache = astroid.MANAGER.astroid_cache
    for name in [n for n, m in cache.items() if getattr(m, "file", None)
                 and (not os.path.isabs(m.file) or m.file.startswith(str(worktree)))]:
        del cache[name]


def _pylint(worktree: Path, paths: list[str]) -> dict[str, list[dict]]:
    """The messages pylint gives each of `paths` (one in-process run for all), by path."""
    present = [p for p in paths if (worktree / p).is_file()]
    out: dict[str, list[dict]] = {p: [] for p in paths}
    if not present:
        return out
    reporter = CollectingReporter()
    here = os.getcwd()
    try:
        os.chdir(worktree)
        Run([f"--rcfile={_RC.name}", "--disable=all", f"--enable={','.join(MESSAGES)}", "--persistent=n",
             "--score=n", *present], reporter=reporter, exit=False)
    except (Exception, SystemExit, RecursionError) as exc:  # noqa: BLE001 - a file pylint cannot read is no case
        print(f"pylint on {present} in {worktree}: {type(exc).__name__}", file=sys.stderr, flush=True)
    finally:
        os.chdir(here)
    relative = {str((worktree / p).resolve()): p for p in present}
    for m in reporter.messages:
        path = relative.get(str(Path(m.abspath).resolve()))
        if m.msg_id in MESSAGES and path:
            out[path].append({"message-id": m.msg_id, "symbol": m.symbol, "message": m.msg, "line": m.line,
                              "path": path})
    return out


def _bound_by_imports(lines: list[str]) -> set[str]:
    names = set()
    for line in lines:
        try:
            tree = ast.parse(line.strip())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _fix_names(message: dict, hunks: list[dict]) -> tuple[list[str], str]:
    """What the fix put in place for this message: (names, how), or ([], why not)."""
    quoted = _QUOTED.findall(message["message"])
    if message["message-id"] == "E1120" and quoted:
        return [quoted[0]], "the missing parameter"
    added_imports = _bound_by_imports([a for h in hunks for a in h["added"] if _IMPORT.match(a)])
    if message["message-id"] == "E0602" and quoted and quoted[0] in added_imports:
        return [quoted[0]], "an import the commit added"
    for h in hunks:
        span = range(h["old"], h["old"] + len(h["removed"]))
        if message["line"] in span and len(h["removed"]) == len(h["added"]):
            index = message["line"] - h["old"]
            names = _swapped(h["removed"][index], h["added"][index])
            if names:
                return names, "swapped on the line"
            new = set(_TOKEN.findall(h["added"][index])) - set(_TOKEN.findall(h["removed"][index]))
            names = sorted(n for n in new if _IDENT.match(n) and n not in _KEYWORDS)
            if names:
                return names, "new on the line"
    return [], "no name the fix introduced on a changed line"


def _enclosing(source: str, line: int) -> dict | None:
    """The function or method around `line` at the parent: its symbol and docstring."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    best = None

    def visit(node, prefix):
        nonlocal best
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if isinstance(child, ast.ClassDef):
                    visit(child, name + ".")
                elif child.lineno <= line <= (child.end_lineno or child.lineno) and prefix.count(".") <= 1:
                    best = {"symbol": name, "docstring": ast.get_docstring(child) or "", "start": child.lineno}

    visit(tree, "")
    return best


_WORKTREES: dict[str, Path] = {}


def _worktree(repo: str) -> Path:
    """This process's worktree of the repository (made once, moved from commit to commit)."""
    if repo not in _WORKTREES:
        path = Path(tempfile.mkdtemp(prefix="codegraph-fixes-")) / "wt"
        subprocess.run(["git", "-C", repo, "worktree", "add", "--detach", "--force", str(path)], check=True,
                       capture_output=True)
        _WORKTREES[repo] = path
    return _WORKTREES[repo]


_AT: dict[str, str] = {}  # worktree -> the commit checked out


def _checkout(repo: str, sha: str) -> Path:
    path = _worktree(repo)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "--force", "--detach", sha], check=True,
                   capture_output=True)
    if _AT.get("repo") != repo:  # another repository's modules may share names
        _AT.clear()
    _forget_project(path, _AT.get(str(path)), sha)
    _AT.update({"repo": repo, str(path): sha})
    return path


def lint_commit(task: tuple[str, str, dict]) -> list[dict]:
    """The name fixes of one candidate commit."""
    name, repo, commit = task
    try:
        worktree = _checkout(repo, commit["parent"])
        before = _pylint(worktree, commit["paths"])
        if not any(before.values()):
            return []
        sources = {path: (worktree / path).read_text(encoding="utf-8", errors="replace")
                   for path in commit["paths"] if (worktree / path).is_file()}
        worktree = _checkout(repo, commit["sha"])
        linted = _pylint(worktree, [path for path, messages in before.items() if messages])
        found = []
        for path, messages in before.items():
            if not messages:
                continue
            after = Counter((m["message-id"], m["message"]) for m in linted[path])
            hunks = [h for h in _hunks(repo, commit["sha"], [path]) if h["path"] == path]
            for message in messages:
                key = (message["message-id"], message["message"])
                if after[key]:
                    after[key] -= 1
                    continue
                names, how = _fix_names(message, hunks)
                if not names:
                    continue
                found.append({"repo": name, "parent": commit["parent"], "commit": commit["sha"], "path": path,
                              "line": message["line"], "message_id": message["message-id"],
                              "symbol": message["symbol"], "message": message["message"], "names": names,
                              "how": how, "function": _enclosing(sources.get(path, ""), message["line"])})
        return found
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"{name} {commit['sha'][:10]}: {exc}", file=sys.stderr, flush=True)
        return []


def mine(repos: dict[str, str], since: str, limit: int | None, jobs: int) -> list[dict]:
    tasks = []
    for name, repo in repos.items():
        found = candidates(repo, since, limit)
        print(f"{name}: {len(found)} candidate commits", flush=True)
        tasks += [(name, repo, c) for c in found]
    instances = []
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for i, found in enumerate(pool.imap_unordered(lint_commit, tasks, chunksize=4), 1):
            instances += found
            if i % 50 == 0:
                print(f"  {i}/{len(tasks)} commits linted, {len(instances)} name fixes", flush=True)
    return sorted(instances, key=lambda i: (i["repo"], i["commit"], i["path"], i["line"]))


def evaluate(side: str, checkout: str, repos: dict[str, str], instances: list[dict], scratch: Path) -> list[dict]:
    """Each instance answered by one side, at its parent commit."""
    out = []
    by_parent: dict[tuple[str, str], list[dict]] = {}
    for instance in instances:
        by_parent.setdefault((instance["repo"], instance["parent"]), []).append(instance)
    for (name, parent), group in sorted(by_parent.items()):
        worktree = _checkout(repos[name], parent)
        cases = scratch / "cases.json"
        cases.write_text(json.dumps(group))
        answers = scratch / f"answers-{side}.json"
        env = {**os.environ, "PYTHONPATH": os.path.abspath(checkout)}
        done = subprocess.run([sys.executable, str(EVAL), str(cases), str(worktree),
                               str(scratch / f"{side}-{name}-{parent[:10]}.duckdb"), str(answers)],
                              env=env, cwd=scratch, capture_output=True, text=True, timeout=1800, check=False)
        if done.returncode:
            print(f"{side} {name} {parent[:10]}: {done.stderr[-600:]}", file=sys.stderr, flush=True)
            continue
        out += json.loads(answers.read_text())
        subprocess.run(["git", "-C", str(worktree), "clean", "-fdxq"], check=False)
    return out


def summarise(answers: list[dict]) -> dict:
    rows: dict[str, list[dict]] = {}
    for answer in answers:
        rows.setdefault(answer["message_id"], []).append(answer)
    rows["all"] = answers
    return {kind: {"fixes": len(group),
                   "answered": round(sum(a["answered"] for a in group) / len(group), 4),
                   "in_cards": round(sum(a["in_cards"] for a in group) / len(group), 4),
                   "in_cards_or_context": round(sum(a["in_cards"] or a["in_context"] for a in group) / len(group), 4)}
            for kind, group in sorted(rows.items()) if group}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", default=[], metavar="NAME=GITDIR")
    parser.add_argument("--side", action="append", default=[], metavar="NAME=CHECKOUT")
    parser.add_argument("--since", default="2017-01-01")
    parser.add_argument("--limit", type=int, help="candidate commits per repository (newest first)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--mined", type=Path, help="read the name fixes from this file, or write them there")
    parser.add_argument("--out", type=Path, default=RESULTS / "name_fixes.json")
    args = parser.parse_args(argv)
    repos = dict(r.split("=", 1) for r in args.repo)
    started = time.time()
    if args.mined and args.mined.exists():
        instances = json.loads(args.mined.read_text())
    else:
        instances = mine(repos, args.since, args.limit, args.jobs)
        if args.mined:
            args.mined.write_text(json.dumps(instances, indent=1) + "\n")
    print(f"{len(instances)} name fixes in {time.time() - started:.0f} s: "
          f"{dict(Counter(i['message_id'] for i in instances))}", flush=True)
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "repos": sorted(repos), "since": args.since,
                     "fixes": len(instances), "by_repo": dict(Counter(i["repo"] for i in instances)),
                     "instances": instances, "sides": {}}  # the instances: what --mined reads back
    with tempfile.TemporaryDirectory(prefix="codegraph-fixes-eval-") as tmp:
        for side, checkout in (s.split("=", 1) for s in args.side):
            answers = evaluate(side, checkout, repos, instances, Path(tmp))
            results["sides"][side] = {"checkout": checkout, "summary": summarise(answers), "answers": answers}
            print(side, json.dumps(results["sides"][side]["summary"]), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

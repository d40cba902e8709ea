"""Replay upstream releases as edits: does an update still equal a full rebuild?

    python -m benchmarks.update_replay [--pair click==8.1.3 click==8.1.7 ...] [--every 1] [--stdlib-edits] \
        [--asyncio] [--return-edits] [--mutations] [--out benchmarks/results/update_replay.json]

Each pair is two releases of one project (pinned sdists from PyPI, or two folders). A copy of the
older one is indexed; then its .py files are replaced, added or removed one at a time, in path
order, as the newer release has them, and after each the database is updated. Every `--every`
steps the updated graph is compared with a full rebuild of the same tree, table by table, every
row. The edits are the project's own, written by nobody here; the rebuild is the oracle.
With --stdlib-edits, the running Python's standard library is replayed into a copy of itself
edited as cost_bench.SCALE_EDITS says: updates of a large graph whose edits reach far. With
--return-edits, each pair's newer release is also replayed into a copy of itself whose files each
change only what some functions return (return_edits): edits an update answers from what the
other files read of a return, checked against the rebuild all the same. --mutations does the
same with the edits of benchmarks/mutations.py (a call that runs another function, arguments
swapped, a base changed, a method renamed, a parameter added, ...), one step a file.
"""

from __future__ import annotations

import argparse
import ast
import filecmp
import hashlib
import json
import shutil
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path

import duckdb

from benchmarks.cost_bench import copy_tree, scale_edits
from benchmarks.mutations import mutated
from benchmarks.repair_bench import _extract
from codegraph.indexer import index_repository
from codegraph.schema import BY_NAME, EXTRACTED

DEFAULT_PAIRS = (("click==8.0.4", "click==8.1.3"), ("click==8.1.3", "click==8.1.7"),
                 ("marshmallow==3.19.0", "marshmallow==3.20.1"), ("toolz==0.12.0", "toolz==0.12.1"),
                 ("pytest==7.4.0", "pytest==7.4.4"))
TABLES = (*EXTRACTED, "files", "skipped_files", "words", "getattr_strings")
_BY_FILE = ("words", "getattr_strings")  # rows that say nothing of their file but its id: read with its path


def table_rows(db_path: Path) -> dict[str, list[str]]:
    """Every row of the graph's tables, without file ids (a rebuild numbers files afresh)."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        out = {}
        for table in TABLES:
            drop = " EXCLUDE (file_id)" if "file_id" in BY_NAME[table].names() else ""
            rows = f"SELECT f.path, t.*{drop} FROM {table} t LEFT JOIN files f USING (file_id)" if table in _BY_FILE \
                else f"SELECT *{drop} FROM {table}"
            out[table] = sorted(map(repr, con.execute(rows).fetchall()))
        return out
    finally:
        con.close()


def _python_files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.py")}


def changed_files(old: Path, new: Path) -> list[str]:
    """The .py files added, removed or edited from old to new, in path order."""
    before, after = _python_files(old), _python_files(new)
    return sorted(p for p in before | after
                  if p not in before or p not in after or not filecmp.cmp(old / p, new / p, shallow=False))


def replay(old: Path, new: Path, work: Path, every: int = 1, libraries: bool = False,
           edits: dict[str, list[str]] | None = None) -> dict:
    """With `libraries`, the graph holds the library layer too (the standard library and the
    packages the project imports), whose functions' returns project calls may read. `edits`:
    what each file's step changed, said with its differences."""
    repo = work / "repo"
    shutil.copytree(old, repo)
    index_repository(repo, embed=False, libraries=libraries)
    steps = changed_files(old, new)
    seconds, differences, compared, reresolved = [], [], 0, []
    for n, path in enumerate(steps):
        if (new / path).exists():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(new / path, repo / path)
        else:
            (repo / path).unlink()
        started = time.perf_counter()
        updated = index_repository(repo, embed=False, libraries=libraries)
        seconds.append(time.perf_counter() - started)
        reresolved.append(updated.reresolved)
        if (n + 1) % every and n + 1 != len(steps):
            continue
        rebuilt = index_repository(repo, work / "rebuilt.duckdb", embed=False, libraries=libraries)
        mine, theirs = table_rows(updated.db_path), table_rows(rebuilt.db_path)
        compared += 1
        for table in TABLES:
            if mine[table] != theirs[table]:
                only_update = sorted(set(mine[table]) - set(theirs[table]))
                only_rebuild = sorted(set(theirs[table]) - set(mine[table]))
                differences.append({"step": n, "file": path, "table": table, "edits": (edits or {}).get(path, []),
                                    "update_only": len(only_update), "rebuild_only": len(only_rebuild),
                                    "examples": [*only_update[:2], *only_rebuild[:2]]})
        rebuilt.db_path.unlink()
    return {"files_changed": len(steps), "steps_compared": compared, "differences": differences,
            "update_median_s": round(statistics.median(seconds), 3) if seconds else None,
            "update_max_s": round(max(seconds), 3) if seconds else None,
            "other_files_reresolved": reresolved}


def _returns_swapped(text: str, at_most: int = 3) -> str | None:
    """The module with up to `at_most` of its one-line return statements giving another thing of
    the module: `return C(...)` another class it defines or imports by a capitalised name, `return
    f` another of its functions. None when it has no such statement."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    classes = [n.name for n in tree.body if isinstance(n, ast.ClassDef)] + [
        a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names
        if a.name != "*" and (a.asname or a.name)[:1].isupper()]
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    lines = text.splitlines(keepends=True)
    done = 0
    for node in ast.walk(tree):
        if done == at_most:
            break
        value = node.value if isinstance(node, ast.Return) and node.lineno == node.end_lineno else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in classes:
            name, pool = value.func, classes
        elif isinstance(value, ast.Name) and value.id in functions:
            name, pool = value, functions
        else:
            continue
        other = next((n for n in pool if n != name.id), None)
        line = lines[node.lineno - 1]
        start = len(line.encode()[:name.col_offset].decode(errors="ignore"))
        if other is None or line[start:start + len(name.id)] != name.id:
            continue
        lines[node.lineno - 1] = line[:start] + other + line[start + len(name.id):]
        done += 1
    return "".join(lines) if done else None


def return_edits(tree: Path, scratch: Path) -> tuple[Path, Path]:
    """A copy of the tree, and another whose .py files each give other things from some return
    statements (_returns_swapped)."""
    old, new = scratch / "old", scratch / "new"
    copy_tree(tree, old)
    copy_tree(tree, new)
    for path in sorted(new.rglob("*.py")):
        swapped = _returns_swapped(path.read_text(encoding="utf-8", errors="replace"))
        if swapped is not None:
            path.write_text(swapped, encoding="utf-8")
    return old, new


def mutation_edits(tree: Path, scratch: Path, at_most: int | None = None) -> tuple[Path, Path, dict[str, list[str]]]:
    """A copy of the tree, another whose .py files each carry benchmarks/mutations.py's edits, and
    what was done to each file. With `at_most`, only so many files are edited, those a hash of
    their path puts first (a large tree: each step is compared with a rebuild)."""
    old, new = scratch / "old", scratch / "new"
    copy_tree(tree, old)
    copy_tree(tree, new)
    done = {}
    paths = sorted(new.rglob("*.py"))
    if at_most is not None:
        paths = sorted(sorted(paths, key=lambda p: hashlib.sha256(p.relative_to(new).as_posix().encode()).hexdigest())[:at_most])
    for path in paths:
        name = path.relative_to(new).as_posix()
        edited = mutated(path.read_text(encoding="utf-8", errors="replace"), name)
        if edited is not None:
            path.write_text(edited[0], encoding="utf-8")
            done[name] = [f"{e.kind} (line {e.line + 1})" for e in edited[1]]
    return old, new, done


def stdlib_pair(stdlib: Path, scratch: Path) -> tuple[Path, Path]:
    """A copy of the standard library, and another with cost_bench's SCALE_EDITS made."""
    old, new = (copy_tree(stdlib, scratch / side, "site-packages") for side in ("old", "new"))
    for _name, path, before, after in scale_edits(new):
        text = (new / path).read_text(encoding="utf-8")
        (new / path).write_text(text + after if before is None else text.replace(before, after, 1), encoding="utf-8")
    return old, new


def asyncio_pair(stdlib: Path, scratch: Path) -> tuple[Path, Path]:
    """The standard library's asyncio package, and the same with a comment appended to
    unix_events.py: replayed with the library layer, where `stdin_w.close()` (stdin_w from
    `socket.socketpair()`) resolved through the library after an update and to nothing after a
    rebuild (issue 27, row 12)."""
    old, new = scratch / "old", scratch / "new"
    for side in (old, new):
        copy_tree(stdlib / "asyncio", side / "asyncio")
    target = new / "asyncio" / "unix_events.py"
    target.write_text(target.read_text(encoding="utf-8") + "# comment\n", encoding="utf-8")
    return old, new


def _tree(spec: str, scratch: Path) -> Path:
    """A folder as it is, or a pinned sdist from PyPI, extracted."""
    if Path(spec).is_dir():
        return Path(spec)
    scratch.mkdir(parents=True)
    return _extract(spec, scratch)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pair", nargs=2, action="append", metavar=("OLD", "NEW"),
                        help="two releases (name==version, or folders); default: " +
                             ", ".join(" -> ".join(p) for p in DEFAULT_PAIRS))
    parser.add_argument("--every", type=int, default=1, help="compare with a rebuild every N updates")
    parser.add_argument("--stdlib-edits", action="store_true",
                        help="also replay this Python's standard library into a copy edited as cost_bench.SCALE_EDITS says")
    parser.add_argument("--asyncio", action="store_true",
                        help="also replay a comment appended to asyncio/unix_events.py, with the library layer")
    parser.add_argument("--return-edits", action="store_true",
                        help="also replay each pair's newer release into a copy whose files change only what some "
                             "functions return")
    parser.add_argument("--mutations", action="store_true",
                        help="also replay each pair's newer release into a copy whose files carry "
                             "benchmarks/mutations.py's edits")
    parser.add_argument("--mutate-at-most", type=int, metavar="N",
                        help="with --mutations, edit at most N files of each tree (chosen by a hash of their paths)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "update_replay.json")
    args = parser.parse_args(argv)
    if args.every < 1:
        parser.error("--every must be 1 or more")
    for spec in (spec for pair in args.pair or () for spec in pair):
        if not Path(spec).is_dir() and spec.count("==") != 1:
            parser.error(f"--pair {spec}: give a folder that exists or a pinned release, name==version")
    results = {"measured": time.strftime("%Y-%m-%d"), "pairs": []}
    pairs = [*(args.pair or DEFAULT_PAIRS), *([("stdlib", "stdlib edited as cost_bench.SCALE_EDITS")]
                                              if args.stdlib_edits else []),
             *([("asyncio", "asyncio with a comment, library layer")] if args.asyncio else [])]
    for old_spec, new_spec in pairs:
        with tempfile.TemporaryDirectory(prefix="codegraph-replay-") as tmp:
            stdlib = Path(sysconfig.get_paths()["stdlib"])
            if old_spec == "stdlib" and args.stdlib_edits:
                old, new = stdlib_pair(stdlib, Path(tmp) / "trees")
            elif old_spec == "asyncio" and args.asyncio:
                old, new = asyncio_pair(stdlib, Path(tmp) / "trees")
            else:
                old, new = _tree(old_spec, Path(tmp) / "old"), _tree(new_spec, Path(tmp) / "new")
            runs = [(old_spec, new_spec, old, new, Path(tmp), None)]
            if args.return_edits and old_spec not in ("stdlib", "asyncio"):
                edited = return_edits(new, Path(tmp) / "returns")
                runs.append((new_spec, f"{new_spec} with returns swapped", *edited, Path(tmp) / "returns", None))
            if args.mutations and old_spec not in ("stdlib", "asyncio"):
                *trees, done = mutation_edits(new, Path(tmp) / "mutations", args.mutate_at_most)
                runs.append((new_spec, f"{new_spec} mutated", *trees, Path(tmp) / "mutations", done))
            for old_name, new_name, before, after, work, edits in runs:
                result = {"old": old_name, "new": new_name,
                          **replay(before, after, work, args.every, libraries=old_spec == "asyncio", edits=edits)}
                results["pairs"].append(result)
                print(f"{old_name} -> {new_name}: {result['files_changed']} files, {result['steps_compared']} "
                      f"compared, {len(result['differences'])} differing tables; update median "
                      f"{result['update_median_s']} s; other files re-resolved {sum(result['other_files_reresolved'])}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

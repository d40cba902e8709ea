"""The package's shape: no import cycle (counting imports inside functions and under
TYPE_CHECKING, which only hide one), and nothing outside a language's folder knows its grammar
or its linter."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "codegraph"


def _modules(root: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int]]:
    """(imported module of this package, line) for every import statement anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                base_name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                base_name = node.module or ""
            for alias in node.names:
                name = f"{base_name}.{alias.name}"
                found.append((name if name in modules else base_name, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name in modules and name != module]


def _import_graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    graph: dict[str, dict[str, int]] = defaultdict(dict)
    for module, path in modules.items():
        for target, line in _imports(module, path, modules):
            graph[module].setdefault(target, line)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in list(graph):
        if start in index:
            continue
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def test_the_package_has_no_import_cycle():
    graph = _import_graph(_modules())
    cycles = _cycles(graph)
    described = ["; ".join(f"{a} -> {b} (line {graph[a][b]})" for a in cycle for b in graph[a] if b in cycle)
                 for cycle in cycles]
    assert not cycles, "import cycles: " + " | ".join(described)


def test_the_cycle_finder_finds_a_cycle_an_import_inside_a_function_hides(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def f():\n    from .c import g\n")
    (package / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n")
    (package / "d.py").write_text("from .a import b\n")
    assert _cycles(_import_graph(_modules(package))) == [["pkg.a", "pkg.b", "pkg.c"]]


def _third_party_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


# What only a language's own folder may import: its grammar, its linter; tree-sitter itself only
# under languages/.
_OWNED = {"tree_sitter_python": "languages/python", "pylint": "languages/python", "astroid": "languages/python",
          "tree_sitter": "languages"}


def test_grammars_and_linters_are_imported_only_inside_their_language():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for name in _third_party_imports(path):
            owner = _OWNED.get(name.split(".")[0])
            if owner is not None and not where.startswith(owner + "/"):
                wrong.append(f"{where} imports {name} (only {owner}/ may)")
    assert not wrong, wrong


# What every language shares (the protocol), which anything may import. A language's own folder is
# reached only through the registry (codegraph.languages).
_NEUTRAL = {"codegraph.languages.base", "codegraph.languages.checks"}


def test_nothing_outside_a_language_folder_reaches_into_it():
    graph = _import_graph(_modules())
    reaching = sorted(f"{module} -> {target}" for module, targets in graph.items()
                      if not module.startswith("codegraph.languages")
                      for target in targets if target.startswith("codegraph.languages.") and target not in _NEUTRAL)
    assert not reaching, f"ask the registry (codegraph.languages) instead: {reaching}"


# -- issue 28, row 5: start-up ----------------------------------------------------------------

def test_the_cli_starts_without_duckdb_arrow_or_numpy():
    """`codegraph --version` and `codegraph sql` import the CLI only: the query runs in a child
    process that opens the file, so the command itself never loads DuckDB, Arrow or numpy
    (they were 0.15 s of every call)."""
    import json
    import subprocess
    import sys

    # the registry: the lint worker's start too; the MCP server: `initialize` waits for nothing heavier
    for module in ("codegraph.cli", "codegraph.entry", "codegraph.languages", "codegraph.server"):
        code = f"import json, sys, {module}; print(json.dumps(sorted({{'duckdb', 'pyarrow', 'numpy'}} & set(sys.modules))))"
        loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        assert json.loads(loaded) == [], module


def test_a_parsing_worker_imports_no_database_and_no_build_machinery():
    """A parsing worker is a fresh interpreter that imports what its work is pickled from
    (codegraph.parsing): DuckDB, the writer and the library layer's code were half of its start."""
    import json
    import subprocess
    import sys

    code = ("import json, sys, codegraph.parsing; "
            "print(json.dumps(sorted(m for m in sys.modules if m == 'duckdb' or m in "
            "('codegraph.build', 'codegraph.db', 'codegraph.library_cache', 'codegraph.semantic.models'))))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(loaded) == []


def test_a_helper_process_imports_its_target_and_not_the_program_that_started_it(tmp_path):
    """multiprocessing's spawn ran the parent's main module again in every helper: `codegraph sql`
    imported the whole CLI twice. A Worker's child imports only its target's module."""
    import json
    import subprocess
    import sys

    (tmp_path / "probe.py").write_text(
        "import sys\n"
        "def loaded(connection):\n"
        "    connection.send(sorted(m for m in sys.modules if m.startswith('codegraph')))\n")
    (tmp_path / "main.py").write_text(
        "import json\n"
        "import codegraph.cli\n"
        "from codegraph.worker import Worker\n"
        "if __name__ == '__main__':\n"
        "    worker = Worker('probe:loaded', greeting=True)\n"
        "    print(json.dumps(worker.start()))\n"
        "    worker.close()\n")
    done = subprocess.run([sys.executable, str(tmp_path / "main.py")], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert "codegraph.worker" in loaded and "codegraph.cli" not in loaded


def test_codegraph_sql_starts_its_query_process_before_the_cli_is_imported_and_uses_it(tmp_path, mini_repo):
    """The installed command (codegraph.entry) starts the query process first, so its DuckDB import
    runs beside the CLI's imports; the query is then answered by that process, not a second one."""
    import json
    import subprocess
    import sys

    from codegraph.indexer import index_repository

    db = index_repository(mini_repo, tmp_path / "graph.duckdb", jobs=1, embed=False, libraries=False).db_path
    (tmp_path / "main.py").write_text(
        "import json, sys\n"
        "import codegraph.worker as worker\n"
        "import codegraph.entry as entry\n"
        "spawned, real = [], worker._spawn\n"
        "def counted(*args):\n"
        "    spawned.append('codegraph.cli' in sys.modules)\n"
        "    return real(*args)\n"
        "worker._spawn = counted\n"
        f"sys.argv = ['codegraph', 'sql', '--json', '--db', {str(db)!r}, 'SELECT count(*) AS n FROM classes']\n"
        "try:\n"
        "    entry.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(spawned), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, str(tmp_path / "main.py")], capture_output=True, text=True, cwd=tmp_path)
    assert json.loads(done.stderr.strip().splitlines()[-1]) == [False]  # one process, started before the CLI
    assert json.loads(done.stdout)["rows"][0]["n"] > 0


def test_a_query_process_started_ahead_and_never_used_leaves_quietly_with_its_parent(tmp_path):
    import os
    import subprocess
    import sys
    import time

    code = ("from codegraph.worker import prestart, _spares\n"
            "from codegraph.query_worker import QUERY_TARGET\n"
            "prestart(QUERY_TARGET)\n"
            "print(_spares[QUERY_TARGET][0].pid, flush=True)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    pid = int(done.stdout)
    deadline = time.monotonic() + 20
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}"), "the unused query process outlived its parent"
    assert done.returncode == 0 and done.stderr == ""

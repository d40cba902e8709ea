"""Public names: does the graph answer the names a package's users write (`httpx.Client`, not
`httpx._client.Client`), and do its import cards put the public import first?

Ground truth is the package itself, imported in a virtualenv of its own: the names of its
`__all__` (or, without one, its public attributes that are not modules), where each object's code
is (its source module, not its `__module__`: httpx sets every public object's to "httpx") with its
`__qualname__`, and, for every import card's first line, whether executing that line gives the same
object from a module without a private part. Names a module-level `__getattr__` makes when asked
(attrs' `__version__`) are listed apart: no reader of the source can see them. For each other name
`N` of package `pkg`:

- `canonical`: `canonical('pkg.N')` holds the runtime's qualified name (classes and functions
  defined in the package), or anything (other names);
- `signature_of`, `definitions_named`: at least one row for `pkg.N`; `members_of`: at least one
  row for `pkg.N` (classes whose body defines something);
- `import_card`: the first line of `import_candidates('N')` imports that very object from a public
  module (executed in the package's environment).

Each side (`--side NAME=CHECKOUT`, put first on the PYTHONPATH of the process that indexes) builds
its own graph of the same sdist with the package's environment as its library layer.

    python -m benchmarks.public_names --side base=/tmp/wt-base --side new=. [--package httpx==0.27.0:httpx ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from benchmarks.repair_bench import _extract
from benchmarks.sides import RESULTS

# requirement:import name; pure-Python packages, each with its public API in __init__ (by __all__,
# by star imports, or by plain imports without __all__)
PACKAGES = ("httpx==0.27.0:httpx", "attrs==23.2.0:attrs", "marshmallow==3.21.3:marshmallow",
            "more-itertools==10.3.0:more_itertools", "click==8.1.7:click", "jinja2==3.1.4:jinja2")

_PUBLIC_NAMES = r"""
import importlib, inspect, json, os, re, sys
pkg = importlib.import_module(sys.argv[1])
top = os.path.dirname(os.path.dirname(os.path.abspath(pkg.__file__)))
names = getattr(pkg, "__all__", None)
if names is None:
    names = [n for n in dir(pkg) if not n.startswith("_") and not inspect.ismodule(getattr(pkg, n))]


def module_of(filename):
    rel = os.path.relpath(filename, top)[:-3].replace(os.sep, ".")
    return rel[:-len(".__init__")] if rel.endswith(".__init__") else rel


def source_module(obj):
    # where the object's code is, not its __module__ (httpx sets every public object's to "httpx")
    code = getattr(inspect.unwrap(obj), "__code__", None)
    if code is not None and code.co_filename.startswith(top + os.sep):
        return module_of(code.co_filename)
    if inspect.isclass(obj):  # the package module that binds it and holds its class statement
        statement = re.compile(rf"^\s*class\s+{obj.__name__}\b", re.M)
        for name, module in sorted(sys.modules.items()):
            path = getattr(module, "__file__", None) or ""
            if (name == pkg.__name__ or name.startswith(pkg.__name__ + ".")) and vars(module).get(obj.__name__) is obj \
                    and path.endswith(".py") and statement.search(open(path, encoding="utf-8").read()):
                return module_of(path)
    return obj.__module__


IMPLICIT = {"__module__", "__doc__", "__dict__", "__weakref__", "__qualname__", "__annotations__", "__slots__",
            "__orig_bases__", "__parameters__", "__abstractmethods__", "_abc_impl", "__protocol_attrs__",
            "_is_protocol", "_is_runtime_protocol", "__non_callable_proto_members__", "__firstlineno__",
            "__static_attributes__"}


def defines_members(cls):
    # what its class body wrote, not what Python or a base class (Protocol's __init__) put there
    return any(key not in IMPLICIT and getattr(value, "__qualname__", cls.__qualname__ + ".").startswith(
        cls.__qualname__ + ".") for key, value in vars(cls).items())


out = []
for name in names:
    obj = getattr(pkg, name, None)
    kind = "class" if inspect.isclass(obj) else "function" if inspect.isfunction(obj) else "other"
    module = source_module(obj) if kind != "other" else None
    out.append({"name": name, "kind": kind, "qualname": f"{module}.{obj.__qualname__}" if module else None,
                "own": bool(module) and (module == pkg.__name__ or module.startswith(pkg.__name__ + ".")),
                # made by a module-level __getattr__ when asked: nothing a reader of the source can see
                "dynamic": name not in vars(pkg),
                "members": kind == "class" and defines_members(obj)})
print(json.dumps(out))
"""

# Does each card's line import the object `pkg.name` is, from a module without a private part?
_CARDS_IMPORT = r"""
import importlib, json, sys
pkg = importlib.import_module(sys.argv[1])
cards = json.loads(sys.stdin.read())
out = {}
for name, line in cards.items():
    ok = False
    if line:
        scope = {}
        words = line.split()
        module = words[1] if words[0] == "from" else words[1]
        try:
            exec(line, scope)
            ok = scope.get(name) is getattr(pkg, name) and not any(p.startswith("_") for p in module.split("."))
        except Exception:
            ok = False
    out[name] = ok
print(json.dumps(out))
"""

_INDEX = ("import sys; from codegraph.indexer import index_repository; "
          "index_repository(sys.argv[1], sys.argv[2], embed=False, python=sys.argv[3])")


def _environment(requirement: str, scratch: Path) -> Path:
    venv = scratch / ("venv-" + requirement.split("==")[0])
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", requirement], check=True)
    return venv / "bin" / "python"


def _run(python: Path, script: str, *args: str, stdin: str | None = None) -> object:
    done = subprocess.run([str(python), "-c", script, *args], input=stdin, capture_output=True, text=True,
                          check=True, cwd="/")
    return json.loads(done.stdout)


def _index(checkout: str, root: Path, db_path: Path, python: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(checkout)}
    subprocess.run([sys.executable, "-c", _INDEX, str(root), str(db_path), str(python)], check=True, env=env,
                   capture_output=True, cwd=db_path.parent)  # not this checkout's folder: `-c` puts it first


def _count(con: duckdb.DuckDBPyConnection, sql: str, *params: str) -> int:
    try:
        return len(con.execute(sql, list(params)).fetchall())
    except duckdb.Error:
        return 0


def measure(db_path: Path, package: str, names: list[dict], python: Path) -> dict:
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        rows = []
        cards = {}
        for entry in names:
            if entry["dynamic"]:
                continue
            path = f"{package}.{entry['name']}"
            try:  # a graph built before `canonical` existed answers none
                found = {r[0] for r in con.execute("SELECT qualname FROM canonical(?)", [path]).fetchall()}
            except duckdb.Error:
                found = set()
            first = con.execute("SELECT import_line FROM import_candidates(?) LIMIT 1", [entry["name"]]).fetchall()
            cards[entry["name"]] = first[0][0] if first else None
            rows.append({
                "name": entry["name"], "kind": entry["kind"],
                "canonical": (entry["qualname"] in found) if entry["own"] else bool(found),
                "signature_of": _count(con, "SELECT 1 FROM signature_of(?)", path) > 0,
                "definitions_named": _count(con, "SELECT 1 FROM definitions_named(?)", path) > 0,
                "members_of": (_count(con, "SELECT 1 FROM members_of(?)", path) > 0) if entry["members"] else None,
            })
    finally:
        con.close()
    imported = _run(python, _CARDS_IMPORT, package, stdin=json.dumps(cards))
    for row in rows:
        row["import_card"] = imported[row["name"]]
        row["first_card"] = cards[row["name"]]
    counts = {key: [sum(bool(r[key]) for r in rows if r[key] is not None), sum(r[key] is not None for r in rows)]
              for key in MEASURES}
    return {"names": len(rows), "dynamic": [e["name"] for e in names if e["dynamic"]], "counts": counts,
            **_rates(counts),
            "misses": [r for r in rows if not all(r[key] for key in MEASURES if r[key] is not None)]}


MEASURES = ("canonical", "signature_of", "definitions_named", "members_of", "import_card")


def _rates(counts: dict[str, list[int]]) -> dict[str, float]:
    return {key: round(hit / total, 4) if total else None for key, (hit, total) in counts.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", action="append", required=True, metavar="NAME=CHECKOUT")
    parser.add_argument("--package", action="append", metavar="REQUIREMENT:IMPORT_NAME")
    parser.add_argument("--out", type=Path, default=RESULTS / "public_names.json")
    args = parser.parse_args(argv)
    sides = dict(side.split("=", 1) for side in args.side)
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "sides": sides, "packages": {}}
    with tempfile.TemporaryDirectory(prefix="codegraph-public-") as tmp:
        scratch = Path(tmp)
        for spec in args.package or PACKAGES:
            requirement, package = spec.rsplit(":", 1)
            root = _extract(requirement, scratch)
            python = _environment(requirement, scratch)
            names = _run(python, _PUBLIC_NAMES, package)
            entry = results["packages"][requirement] = {}
            for side, checkout in sides.items():
                db_path = scratch / f"{package}-{side}.duckdb"
                _index(checkout, root, db_path, python)
                entry[side] = measure(db_path, package, names, python)
                print(requirement, side, {k: v for k, v in entry[side].items() if k != "misses"}, flush=True)
    pooled = {}
    for side in sides:
        counts = {key: [sum(r[side]["counts"][key][i] for r in results["packages"].values()) for i in (0, 1)]
                  for key in MEASURES}
        pooled[side] = {"names": sum(r[side]["names"] for r in results["packages"].values()), "counts": counts,
                        **_rates(counts)}
    results["pooled"] = pooled
    print(json.dumps(pooled))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

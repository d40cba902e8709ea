"""The Java call graph against the compiler: javac's attributed trees as the ground truth.

    python -m benchmarks.javac_callgraph --projects PROJECTS.json [--out benchmarks/results/javac_callgraph.json]

PROJECTS.json (the user's, read at run time): name -> {"sources": "group:artifact:version", the
source jar Maven Central publishes, and optionally "classpath": ["group:artifact:version", ...],
the jars its code compiles against}. Each project's sources are compiled by javac (the JDK's
`javax.tools` API, through benchmarks/javac/CallOracle.java) and every method invocation, class
instance creation and method reference is recorded with the method symbol attribution gave it,
caller to callee, where both are the project's code. Nobody here chose those edges: they are the
compiler's. The static graph is codegraph's index of the same files (`--no-embed`), its calls
rows that resolved into the project: once without a library layer, once with Java's (the JDK
and the project's classpath jars as stubs, `with_layer`). Reported per project: recall (the
compiler's edges the graph has), precision (the graph's edges the compiler has; for a virtual
call the compiler's symbol is the declared method, so the row that names it counts), and samples
of both kinds of difference. Maven Central is the only network this needs (MAVEN_REPOSITORY_URL
overrides where the jars come from).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

import duckdb

from codegraph.indexer import index_repository
from codegraph.schema import PROJECT_RESOLUTIONS

ORACLE = Path(__file__).parent / "javac" / "CallOracle.java"
# the oracle reads which constructor an anonymous class's own one calls off javac's tree classes
_EXPORTS = ("--add-exports", "jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED")
_REPOSITORY = os.environ.get("MAVEN_REPOSITORY_URL", "https://repo.maven.apache.org/maven2")
_STATIC = """
SELECT DISTINCT c.caller_qualname, c.resolved_callee FROM calls c
WHERE list_contains($how, c.resolution) AND c.resolved_callee IN (
    SELECT qualname FROM members WHERE kind IN ('method', 'staticmethod', 'constructor'))
"""


def jar(coordinates: str, scratch: Path, classifier: str = "") -> Path:
    """A jar of Maven Central by its coordinates (group:artifact:version), downloaded once."""
    group, artifact, version = coordinates.split(":")
    name = f"{artifact}-{version}{'-' + classifier if classifier else ''}.jar"
    target = scratch / "jars" / name
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        url = f"{_REPOSITORY}/{group.replace('.', '/')}/{artifact}/{version}/{name}"
        with urllib.request.urlopen(url, timeout=120) as response, open(target, "wb") as fh:
            shutil.copyfileobj(response, fh)
    return target


def unpack_sources(sources: Path, root: Path) -> Path:
    """The source jar's .java files under root/src/main/java, as a Maven checkout has them."""
    tree = root / "src" / "main" / "java"
    tree.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(sources) as archive:
        for member in archive.namelist():
            if member.endswith(".java") and not member.startswith("/") and ".." not in member.split("/"):
                (tree / member).parent.mkdir(parents=True, exist_ok=True)
                (tree / member).write_bytes(archive.read(member))
    return tree


def oracle_edges(tree: Path, classpath: list[Path], scratch: Path) -> tuple[set[tuple[str, str]], str]:
    """(caller, callee) pairs javac attributes, and what it said of the compilation."""
    classes = scratch / "oracle"
    if not (classes / "CallOracle.class").exists():
        subprocess.run(["javac", *_EXPORTS, "-d", str(classes), str(ORACLE)], check=True)
    out = scratch / f"{tree.parent.parent.parent.name}.tsv"
    done = subprocess.run(["java", *_EXPORTS, "-cp", str(classes), "CallOracle", str(tree), str(out),
                           os.pathsep.join(map(str, classpath))],
                          check=True, capture_output=True, text=True, timeout=1800)
    edges = set()
    for line in out.read_text().splitlines():
        caller, callee, _ = line.split("\t")
        edges.add((caller, callee))
    return edges, done.stdout.strip()


def static_edges(db: Path) -> set[tuple[str, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return set(con.execute(_STATIC, {"how": list(PROJECT_RESOLUTIONS)}).fetchall())
    finally:
        con.close()


def measure(name: str, spec: dict, scratch: Path) -> dict:
    root = scratch / name
    shutil.rmtree(root, ignore_errors=True)
    tree = unpack_sources(jar(spec["sources"], scratch, "sources"), root)
    classpath = [jar(c, scratch) for c in spec.get("classpath", ())]
    truth, said = oracle_edges(tree, classpath, scratch)
    out = {"sources": spec["sources"], "javac": said, "compiler_edges": len(truth)}
    for key, libraries in (("", False), ("with_layer", True)):
        db = scratch / f"{name}{'-' + key if key else ''}.duckdb"
        before = os.environ.get("CODEGRAPH_JAVA_CLASSPATH")
        os.environ["CODEGRAPH_JAVA_CLASSPATH"] = os.pathsep.join(map(str, classpath))
        try:
            started = time.perf_counter()
            index_repository(root, db, embed=False, libraries=libraries, full=True)
            seconds = time.perf_counter() - started
        finally:
            if before is None:
                os.environ.pop("CODEGRAPH_JAVA_CLASSPATH")
            else:
                os.environ["CODEGRAPH_JAVA_CLASSPATH"] = before
        static = static_edges(db)
        found = truth & static
        rng = random.Random(name)
        scored = {"index_seconds": round(seconds, 2), "static_edges": len(static), "both": len(found),
                  "recall": round(len(found) / len(truth), 4) if truth else None,
                  "precision": round(len(found) / len(static), 4) if static else None,
                  "missed_sample": sorted(rng.sample(sorted(truth - static), min(40, len(truth - static)))),
                  "extra_sample": sorted(rng.sample(sorted(static - truth), min(40, len(static - truth))))}
        if key:
            out[key] = scored
        else:
            out.update(scored)
    return out


def over_projects(module: str, doc: str, measure, options: dict[str, int | str], argv: list[str] | None = None,
                  finish=None, **extra) -> dict:
    """The main of a benchmark over a projects file (name -> {sources, classpath}): its command
    line (--projects, --out and the `options` with their defaults and types), measure(name, spec,
    scratch, *options) per project in one scratch folder, finish(results) for what spans them,
    the results written to --out (default benchmarks/results/<module>.json) and returned.
    `extra`: fields the results file also holds."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--projects", type=Path, required=True,
                        help="JSON: name -> {sources: group:artifact:version, classpath: [...]}")
    for option, default in options.items():
        parser.add_argument(f"--{option}", type=type(default), default=default)
    parser.add_argument("--out", type=Path, default=Path(f"benchmarks/results/{module}.json"))
    args = parser.parse_args(argv)
    values = [getattr(args, option.replace("-", "_")) for option in options]
    command = " ".join([f"python -m benchmarks.{module} --projects {args.projects}",
                        *(f"--{option} {value}" for option, value in zip(options, values))])
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "command": command, **extra, "projects": {}}
    with tempfile.TemporaryDirectory(prefix=f"codegraph-{module}-") as tmp:
        for name, spec in json.loads(args.projects.read_text()).items():
            results["projects"][name] = measure(name, spec, Path(tmp), *values)
            print(name, {k: v for k, v in results["projects"][name].items() if k not in ("samples", "kinds")},
                  flush=True)
    if finish is not None:
        finish(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--projects", type=Path, required=True,
                        help="JSON: name -> {sources: group:artifact:version, classpath: [...]}")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/javac_callgraph.json"))
    args = parser.parse_args(argv)
    if shutil.which("javac") is None or shutil.which("java") is None:
        parser.error("javac and java are needed (a JDK 17: apt-get install openjdk-17-jdk-headless)")
    projects = json.loads(args.projects.read_text())
    results: dict = {"measured": time.strftime("%Y-%m-%d"), "projects": {}}
    with tempfile.TemporaryDirectory(prefix="codegraph-javac-") as tmp:
        for name, spec in projects.items():
            result = measure(name, spec, Path(tmp))
            results["projects"][name] = result
            layer = result["with_layer"]
            print(f"{name}: javac {result['compiler_edges']} edges, graph {result['static_edges']}; "
                  f"recall {result['recall']}, precision {result['precision']}; with the library layer "
                  f"{layer['recall']}, {layer['precision']} ({result['javac']})", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()

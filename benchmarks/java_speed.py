"""Java indexing speed: a full index against tree-sitter-java parsing alone, side by side, and a
one-file update.

    python -m benchmarks.java_speed --projects benchmarks/data/javac_projects.json [--rounds 3]
        [--libraries 1] [--out benchmarks/results/java_speed.json]

Per project (the javac benchmark's projects file: source jars from Maven Central, unpacked as a
Maven checkout), each round times, back to back in one process: tree-sitter-java parsing alone of
every .java file (one core), a full `codegraph index --no-embed` without a library layer (both
cores), and two updates of one mid-sized class: a method added (its interface changes: the files
whose answers read a fact that changed are resolved again) and a statement added to a method's
body (its interface kept: that file alone); the file is put back and the graph brought back
after each, untimed. With `--libraries 1` (the default) each round also times a full index with
Java's library layer (the JDK as stubs and the projects file's jars; the layer's first build, in
the first round, is reported apart), and the updates are of that graph, as a user's default
build makes it. Wall seconds, medians; the machine is noisy, so the ratio of the two in one round
is the figure to read; an update's CPU seconds (it runs in this process) are reported beside its
wall seconds.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from benchmarks.javac_callgraph import jar, over_projects, unpack_sources
from codegraph.indexer import index_repository
from codegraph.languages.java.extract import _PARSER


def parse_only(files: list[Path]) -> float:
    blobs = [f.read_bytes() for f in files]
    started = time.perf_counter()
    for blob in blobs:
        _PARSER.parse(blob)
    return time.perf_counter() - started


def _edited(path: Path) -> str:
    """The file with a method added before its class's last brace."""
    text = path.read_text(encoding="utf-8")
    at = text.rstrip().rfind("}")
    return text[:at] + "\n    public int codegraphBenchmarkAdded(int x) { return x + 1; }\n" + text[at:]


def _body_edited(path: Path) -> str | None:
    """The file with a statement added at the top of its first method's body (None: no method)."""
    data = path.read_bytes()
    stack = [_PARSER.parse(data).root_node]
    while stack:
        node = stack.pop(0)
        if node.type in ("method_declaration", "constructor_declaration"):
            body = node.child_by_field_name("body")
            if body is not None:
                at = body.start_byte + 1
                return (data[:at] + b"\n        int codegraphBenchmarkLocal = 1;" + data[at:]).decode("utf-8")
        stack.extend(node.children)
    return None


def measure(name: str, spec: dict, scratch: Path, rounds: int, libraries: int) -> dict:
    root = scratch / name
    tree = unpack_sources(jar(spec["sources"], scratch, "sources"), root)
    os.environ["CODEGRAPH_JAVA_CLASSPATH"] = os.pathsep.join(str(jar(c, scratch)) for c in spec.get("classpath", ()))
    files = sorted(tree.rglob("*.java"))
    sizes = sorted((f for f in files if _body_edited(f) is not None), key=lambda f: f.stat().st_size)
    target = sizes[len(sizes) // 2]  # a mid-sized class with a method body
    original = target.read_text(encoding="utf-8")
    bare, layered = scratch / f"{name}.duckdb", scratch / f"{name}-layer.duckdb"
    db = layered if libraries else bare
    samples: dict[str, list[float]] = {"parse_only_s": [], "index_s": [], "index_with_layer_s": [],
                                       "one_file_update_s": [], "body_edit_update_s": [],
                                       "one_file_update_cpu_s": [], "body_edit_update_cpu_s": []}
    reresolved: dict[str, int] = {}
    first_layer = None
    for _ in range(rounds):
        samples["parse_only_s"].append(parse_only(files))
        started = time.perf_counter()
        index_repository(root, bare, embed=False, libraries=False, full=True)
        samples["index_s"].append(time.perf_counter() - started)
        if libraries:
            started = time.perf_counter()
            report = index_repository(root, layered, embed=False, full=True)
            seconds = time.perf_counter() - started
            if report.library_resolved and first_layer is None:  # the layer's first build
                first_layer = round(seconds, 3)
            else:
                samples["index_with_layer_s"].append(seconds)
        for key, edited in (("one_file_update_s", _edited(target)), ("body_edit_update_s", _body_edited(target))):
            if edited is None:
                continue
            target.write_text(edited, encoding="utf-8")
            started, cpu = time.perf_counter(), time.process_time()  # an update runs in this process
            report = index_repository(root, db, embed=False, libraries=bool(libraries))
            samples[key].append(time.perf_counter() - started)
            samples[key.replace("_s", "_cpu_s")].append(time.process_time() - cpu)
            reresolved[key] = report.reresolved
            target.write_text(original, encoding="utf-8")
            index_repository(root, db, embed=False, libraries=bool(libraries))
    medians = {k: round(statistics.median(v), 3) for k, v in samples.items() if v}
    if first_layer is not None:
        medians["layer_first_build_s"] = first_layer
    ratios = [i / p for i, p in zip(samples["index_s"], samples["parse_only_s"])]
    return {"sources": spec["sources"], "files": len(files), "lines": sum(f.read_bytes().count(b"\n") for f in files),
            "edited": str(target.relative_to(root)), **medians, "other_files_reresolved": reresolved,
            "ratio_index_to_parse_only": round(statistics.median(ratios), 2), "samples": samples}


def main(argv: list[str] | None = None) -> None:
    over_projects("java_speed", __doc__, measure, {"rounds": 3, "libraries": 1}, argv)


if __name__ == "__main__":
    main()

"""Java updates against rebuilds on real code: per project (a source jar from Maven Central
unpacked as a Maven checkout), edits of one file's interface that change what other files'
names mean, each followed by an update and compared with a full rebuild of the same tree, table
by table (calls, imports, inheritance, the classes' resolved bases, the facts each file read);
then the file put back, updated and compared again. Ground truth: the rebuild. Reported with how
many other files each update resolved again, against all.

    python -m benchmarks.java_update_replay --projects benchmarks/data/javac_projects.json \
        [--per-kind 2] [--libraries 1] [--out benchmarks/results/java_update_replay.json]

With Java's library layer (the JDK's API as stubs; the projects file's jars) unless `--libraries 0`.

Edits (JLS): an overload added beside a method (15.12.2: a call may choose it), a method removed
or renamed, a class's `extends` removed (8.1.4: what it inherits goes) or its `implements` (8.1.5),
a method's return type, a parameter's or a field's type made Object (15.12.3, 15.12.2, 15.11: what
a chained call finds, which overload a call chooses, what a field's member is), a single-type
import removed (7.5.1), a class named `String` added to a package (6.4.1: it shadows java.lang's
there).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import duckdb

from benchmarks.javac_callgraph import jar, over_projects, unpack_sources
from codegraph.indexer import index_repository
from codegraph.languages.java.extract import _PARSER

_TABLES = {"calls": "caller_qualname, line, col, callee_text, resolved_callee, resolution",
           "imports": "module, line, name, resolved_qualname, resolution",
           "inheritance": "class_qualname, base_text, resolved_base",
           "classes": "qualname, base_qualnames"}


def _nodes(data: bytes, kind: str) -> list:
    out, stack = [], [_PARSER.parse(data).root_node]
    while stack:
        node = stack.pop()
        if node.type == kind:
            out.append(node)
        stack.extend(node.children)
    return sorted(out, key=lambda n: n.start_byte)


def _overload(data: bytes) -> bytes | None:
    """A public method gets an overload that takes an Object (it accepts any argument)."""
    for node in _nodes(data, "method_declaration"):
        name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        params = node.child_by_field_name("parameters")
        if body is not None and b"public" in data[node.start_byte:name.start_byte] and params is not None \
                and params.named_child_count == 1:
            method = name.text.decode()
            added = f"\n    public void {method}(Object codegraphAdded) {{ }}\n".encode()
            return data[:node.end_byte] + added + data[node.end_byte:]
    return None


def _removed(data: bytes) -> bytes | None:
    """The first method with a body that other code may call is gone."""
    for node in _nodes(data, "method_declaration"):
        name = node.child_by_field_name("name")
        if node.child_by_field_name("body") is not None and b"private" not in data[node.start_byte:name.start_byte]:
            return data[:node.start_byte] + data[node.end_byte:]
    return None


def _unbased(data: bytes) -> bytes | None:
    """The first class that extends another no longer does."""
    for node in _nodes(data, "class_declaration"):
        superclass = node.child_by_field_name("superclass")
        if superclass is not None:
            return data[:superclass.start_byte] + data[superclass.end_byte:]
    return None


def _replaced(data: bytes, node, text: bytes) -> bytes:
    return data[:node.start_byte] + text + data[node.end_byte:]


def _first_part(data: bytes, kind: str, field: str, keep=lambda part: True):
    """The `field` of the first `kind` node that has one (and that `keep` takes)."""
    return next((part for node in _nodes(data, kind)
                 if (part := node.child_by_field_name(field)) is not None and keep(part)), None)


def _not_object(part) -> bool:
    return part.type != "void_type" and part.text not in (b"Object", b"java.lang.Object")


def _made_object(data: bytes, kind: str) -> bytes | None:
    part = _first_part(data, kind, "type", _not_object)
    return None if part is None else _replaced(data, part, b"Object")


def _returns_object(data: bytes) -> bytes | None:
    """The first method returning a type returns Object instead (15.12.3: what a call gives, and so
    what a chained call on it finds)."""
    return _made_object(data, "method_declaration")


def _takes_object(data: bytes) -> bytes | None:
    """The first parameter of a type takes Object instead (15.12.2: which overload a call chooses)."""
    return _made_object(data, "formal_parameter")


def _field_object(data: bytes) -> bytes | None:
    """The first field of a type holds an Object instead (15.11: what `x.f.m()` finds)."""
    return _made_object(data, "field_declaration")


def _unimplemented(data: bytes) -> bytes | None:
    """The first class that implements interfaces implements none (8.1.5)."""
    part = _first_part(data, "class_declaration", "interfaces")
    return None if part is None else _replaced(data, part, b"")


def _unimported(data: bytes) -> bytes | None:
    """The first single-type import is gone (7.5.1: the simple name means something else or nothing)."""
    for node in _nodes(data, "import_declaration"):
        if b"*" not in node.text and b"static" not in node.text:
            return _replaced(data, node, b"")
    return None


def _renamed(data: bytes) -> bytes | None:
    """The first method with a body that other code may call has another name."""
    for node in _nodes(data, "method_declaration"):
        name = node.child_by_field_name("name")
        if node.child_by_field_name("body") is not None and b"private" not in data[node.start_byte:name.start_byte] \
                and b"@Override" not in data[node.start_byte:name.start_byte]:
            return _replaced(data, name, name.text + b"Renamed")
    return None


_EDITS = {"overload": _overload, "removed": _removed, "unbased": _unbased, "returns Object": _returns_object,
          "takes Object": _takes_object, "field Object": _field_object, "unimplemented": _unimplemented,
          "unimported": _unimported, "renamed": _renamed}


def _rows(db: Path) -> dict[str, list]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        out = {t: con.execute(f"SELECT {c} FROM {t} ORDER BY ALL").fetchall() for t, c in _TABLES.items()}
        out["reads"] = con.execute("SELECT f.path, key FROM reads JOIN files f USING (file_id) ORDER BY ALL").fetchall()
        return out
    finally:
        con.close()


def _step(root: Path, db: Path, scratch: Path, name: str, files: int, libraries: bool) -> dict:
    """Update, rebuild beside, compare."""
    report = index_repository(root, db, embed=False, libraries=libraries)
    rebuilt = scratch / f"{root.name}-rebuilt.duckdb"
    index_repository(root, rebuilt, embed=False, libraries=libraries, full=True)
    updated, fresh = _rows(db), _rows(rebuilt)
    differ = [t for t in fresh if updated[t] != fresh[t]]
    return {"edit": name, "mode": report.mode, "other_files_reresolved": report.reresolved, "java_files": files,
            "equal": not differ, "tables_that_differ": differ}


def measure(name: str, spec: dict, scratch: Path, per_kind: int, libraries: int) -> dict:
    root = scratch / name
    tree = unpack_sources(jar(spec["sources"], scratch, "sources"), root)
    os.environ["CODEGRAPH_JAVA_CLASSPATH"] = os.pathsep.join(str(jar(c, scratch)) for c in spec.get("classpath", ()))
    files = sorted(tree.rglob("*.java"))
    db = scratch / f"{name}.duckdb"
    index_repository(root, db, embed=False, libraries=bool(libraries), full=True)
    chooser = random.Random(name)
    steps = []
    layered = bool(libraries)
    for kind, edit in _EDITS.items():
        candidates = [f for f in files if edit(f.read_bytes()) is not None]
        for target in chooser.sample(candidates, min(per_kind, len(candidates))):
            original = target.read_bytes()
            target.write_bytes(edit(original))
            steps.append(_step(root, db, scratch, f"{kind} {target.relative_to(tree)}", len(files), layered))
            target.write_bytes(original)
            steps.append(_step(root, db, scratch, f"{kind} {target.relative_to(tree)} put back", len(files), layered))
    package = chooser.choice(sorted({f.parent for f in files}))
    shadow = package / "String.java"
    shadow.write_text(f"package {'.'.join(package.relative_to(tree).parts)};\nclass String {{ }}\n")
    steps.append(_step(root, db, scratch, f"shadow {shadow.relative_to(tree)}", len(files) + 1, layered))
    shadow.unlink()
    steps.append(_step(root, db, scratch, f"shadow {shadow.relative_to(tree)} removed", len(files), layered))
    for step in steps:
        print(f"  {name}: {step['edit']}: {'equal' if step['equal'] else 'DIFFERS ' + str(step['tables_that_differ'])}"
              f", {step['other_files_reresolved']} of {step['java_files'] - 1} other files resolved again", flush=True)
    return {"sources": spec["sources"], "files": len(files), "updates": len(steps),
            "equal": sum(s["equal"] for s in steps), "steps": steps}


def main(argv: list[str] | None = None) -> None:
    over_projects("java_update_replay", __doc__, measure, {"per-kind": 2, "libraries": 1}, argv)


if __name__ == "__main__":
    main()

"""Java diagnostics on the mistakes models make: javac's messages to cards, on real Maven projects.

    python -m benchmarks.java_mistakes --projects benchmarks/data/javac_projects.json [--per-kind 25]
        [--libraries 1] [--kinds all | KIND,KIND] [--out benchmarks/results/java_mistakes.json]

PROJECTS.json is the javac call-graph benchmark's (name -> {"sources": the source jar's
group:artifact:version, "classpath": [jars its code compiles against]}). Each project's source jar
from Maven Central is unpacked as a Maven checkout and indexed (`--no-embed`), without a library
layer and, unless `--libraries 0`, with Java's (the JDK and the projects file's jars, the default
build). Then per kind, cases are drawn from the graph without the layer with a seed, one mistake
in one copy of one class file:

- invented-method: a call of a project method renamed the way models err, a word of its name
  swapped for a synonym (`getValue` -> `fetchValue`; never a spelling neighbour, Jaro-Winkler
  below 0.85, never a name the project has);
- wrong-overload: a call of a project method given one argument too many (`, null`);
- missing-import: an `import a.b.C;` of a project class the file uses, removed;
- wrong-package: such an import's package replaced by a sibling package's name or its last part
  made plural (`util` -> `utils`);
- wrong-class-field: a static field `C.F` read through another class of C's package that has no F.

Each mutated file is checked by codegraph's javac checker (the projects file's jars on the
classpath) and answered exactly as `codegraph diagnose` does (rules, then search; no LLM), by
each graph from the same messages (`in_cards`: the default build's; `in_cards_without_layer`). A case
counts when javac reports an error on the file (files that do not compile unchanged are not
used). The fix is in the cards when the rendered context (1,500 tokens) holds the definition the
original code used (its qualname) or, for an import, the original import line; reported per kind
with javac's and the retrieval's time.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import statistics
from pathlib import Path

import duckdb

from benchmarks.javac_callgraph import jar, over_projects, unpack_sources
from benchmarks.mistakes import SYNONYMS
from codegraph.indexer import index_repository
from codegraph.languages import language
from codegraph.retrieval.diagnose import diagnose
from codegraph.retrieval.engine import Retriever
from codegraph.schema import PROJECT_RESOLUTIONS

KINDS = ("invented-method", "wrong-overload", "missing-import", "wrong-package", "wrong-class-field")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


class Cases:
    """The mistakes of one indexed project, drawn with a seed."""

    def __init__(self, con: duckdb.DuckDBPyConnection, root: Path, seed: str) -> None:
        self.con, self.root, self.rng = con, root, random.Random(seed)
        self.names = {r[0] for r in con.execute("SELECT DISTINCT name FROM members").fetchall()}
        self.texts: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self.texts:
            self.texts[path] = (self.root / path).read_text(encoding="utf-8").split("\n")
        return self.texts[path]

    def _jaro(self, a: str, b: str) -> float:
        return self.con.execute("SELECT jaro_winkler_similarity(lower($a), lower($b))", {"a": a, "b": b}).fetchone()[0]

    def invent(self, name: str) -> str | None:
        words = _WORDS.findall(name)
        options = []
        for i, word in enumerate(words):
            for synonym in SYNONYMS.get(word.lower(), []):
                new = words[:i] + [synonym.capitalize() if i else synonym] + words[i + 1:]
                options.append("".join(w if j == 0 else w[:1].upper() + w[1:] for j, w in enumerate(new)))
        self.rng.shuffle(options)
        for option in options:
            if option.isidentifier() and option not in self.names and self._jaro(option, name) < 0.85:
                return option
        return None

    def _calls(self) -> list[tuple]:
        rows = self.con.execute("""
            SELECT f.path, c.line, c.col, c.callee_name, c.resolved_callee FROM calls c JOIN files f USING (file_id)
            JOIN members m ON m.qualname = c.resolved_callee
            WHERE c.kind = 'call' AND c.line = c.end_line AND list_contains($how, c.resolution)
              AND m.kind IN ('method', 'staticmethod') AND f.path LIKE '%.java'
            ORDER BY f.path, c.line, c.col""", {"how": list(PROJECT_RESOLUTIONS)}).fetchall()
        self.rng.shuffle(rows)
        return rows

    @staticmethod
    def _name_at(text: str, name: str, col: int) -> int:
        """Where `name(` starts at or after col (-1: not on this line as written)."""
        found = re.compile(rf"\b{re.escape(name)}\s*\(").search(text, col)
        return found.start() if found else -1

    def invented_method(self):
        for path, line, col, name, truth in self._calls():
            text = self.lines(path)[line - 1]
            at = self._name_at(text, name, col)
            bad = self.invent(name) if at >= 0 else None
            if bad:
                yield path, line, text[:at] + bad + text[at + len(name):], truth

    def wrong_overload(self):
        for path, line, col, name, truth in self._calls():
            text = self.lines(path)[line - 1]
            at = self._name_at(text, name, col)
            if at < 0:
                continue
            opening = text.index("(", at)
            depth, close = 0, -1
            for i in range(opening, len(text)):
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                if depth == 0:
                    close = i
                    break
            if close < 0:
                continue
            empty = not text[opening + 1:close].strip()
            yield path, line, text[:close] + ("null" if empty else ", null") + text[close:], truth

    def _imports(self) -> list[tuple]:
        rows = self.con.execute("""
            SELECT i.path, i.line, i.imported_module, i.name, c.qualname FROM imports i
            JOIN classes c ON c.qualname = i.imported_module || '.' || i.name
            WHERE NOT i.is_star AND i.level = 0 AND i.path LIKE '%.java'
            ORDER BY i.path, i.line""").fetchall()
        self.rng.shuffle(rows)
        return rows

    def missing_import(self):
        for path, line, package, name, qualname in self._imports():
            lines = self.lines(path)
            if sum(1 for t in lines if re.search(rf"\b{re.escape(name)}\b", t)) > 1:
                yield path, line, "", f"import {qualname};"

    def wrong_package(self):
        packages = sorted({r[0] for r in self.con.execute(
            "SELECT DISTINCT regexp_extract(qualname, '^(.*)\\.[^.]+$', 1) FROM modules").fetchall() if r[0]})
        for path, line, package, name, qualname in self._imports():
            parent, _, last = package.rpartition(".")
            siblings = [p for p in packages if p.rpartition(".")[0] == parent and p != package]
            wrong = self.rng.choice(siblings) if siblings and self.rng.random() < 0.5 else \
                f"{parent}.{last}s" if parent else f"{last}s"
            if wrong == package or self.con.execute("SELECT 1 FROM classes WHERE qualname = $q",
                                                    {"q": f"{wrong}.{name}"}).fetchone():
                continue
            yield path, line, self.lines(path)[line - 1].replace(f"{package}.{name}", f"{wrong}.{name}", 1), \
                f"import {qualname};"

    def wrong_class_field(self):
        fields = self.con.execute("""
            SELECT m.class_qualname, c.name, m.name, m.qualname, c.module FROM members m
            JOIN classes c ON c.qualname = m.class_qualname
            WHERE m.kind = 'class_attribute' AND m.path LIKE '%.java' ORDER BY m.qualname""").fetchall()
        self.rng.shuffle(fields)
        for owner, simple, field, qualname, module in fields:
            package = module.rpartition(".")[0]
            others = [r[0] for r in self.con.execute("""
                SELECT c.name FROM classes c WHERE regexp_extract(c.module, '^(.*)\\.[^.]+$', 1) = $p
                  AND c.qualname = c.module AND c.qualname <> $o
                  AND NOT EXISTS (SELECT 1 FROM members_of(c.qualname) m WHERE m.name = $f)
                ORDER BY c.name""", {"p": package, "o": owner, "f": field}).fetchall()]
            if not others:
                continue
            use = re.compile(rf"\b{re.escape(simple)}\.{re.escape(field)}\b")
            for path, in self.con.execute("SELECT path FROM files WHERE path LIKE '%.java' ORDER BY path").fetchall():
                lines = self.lines(path)
                hit = next((i for i, t in enumerate(lines) if use.search(t) and not t.lstrip().startswith("import")),
                           None)
                if hit is not None:
                    other = self.rng.choice(others)
                    yield path, hit + 1, use.sub(f"{other}.{field}", lines[hit], count=1), qualname
                    break

    def of(self, kind: str):
        return getattr(self, kind.replace("-", "_"))()


def indexed_project(name: str, spec: dict, scratch: Path) -> tuple[Path, Path, str]:
    """(checkout, graph, classpath) of a projects file's entry: its source jar unpacked as a Maven
    checkout, indexed without a library layer, its jars the checker's classpath and the layer's
    (CODEGRAPH_JAVA_CLASSPATH)."""
    root = scratch / name
    unpack_sources(jar(spec["sources"], scratch, "sources"), root)
    classpath = os.pathsep.join(str(jar(c, scratch)) for c in spec.get("classpath", ()))
    os.environ["CODEGRAPH_JAVA_CLASSPATH"] = classpath
    db = scratch / f"{name}.duckdb"
    index_repository(root, db, embed=False, libraries=False, full=True)
    return root, db, classpath


class _LintOnce:
    """The checker, asked once per text of a file: both graphs' answers start from the same
    messages (and javac's time is that one run's)."""

    def __init__(self, checker) -> None:
        self.checker, self.memo = checker, {}

    def lint(self, path, *args):
        key = (str(path), Path(path).read_bytes(), args)
        if key not in self.memo:
            self.memo.clear()  # one file's text at a time
            self.memo[key] = self.checker.lint(path, *args)
        return self.memo[key]

    def __getattr__(self, name):
        return getattr(self.checker, name)


def measure(name: str, spec: dict, scratch: Path, per_kind: int, libraries: int, kinds: str = "all") -> dict:
    """The cases are drawn from the graph without the library layer and answered by it and, with
    `libraries`, by the graph with the layer (the default build) too: the same cases, side by side."""
    root, db, _ = indexed_project(name, spec, scratch)
    layered = scratch / f"{name}-layer.duckdb" if libraries else None
    if layered is not None:
        index_repository(root, layered, embed=False, full=True)
    checker = language("java").checker()
    once = _LintOnce(checker)
    clean: dict[str, bool] = {}
    out: dict = {"sources": spec["sources"], "kinds": {}}
    try:
        with Retriever(db) as retriever, (Retriever(layered) if layered else contextlib.nullcontext()) as with_layer:
            con = retriever.con
            for kind in KINDS if kinds == "all" else [k for k in KINDS if k in kinds.split(",")]:
                cases = Cases(con, root, f"{name}:{kind}")
                rows, tried = [], 0
                for path, line, mutated, truth in cases.of(kind):
                    if len(rows) >= per_kind or tried >= 20 * per_kind:
                        break
                    tried += 1
                    file = root / path
                    if path not in clean:
                        clean[path] = not checker.lint(file)
                    if not clean[path]:
                        continue
                    original = file.read_text(encoding="utf-8")
                    lines = original.split("\n")
                    lines[line - 1] = mutated
                    file.write_text("\n".join(lines), encoding="utf-8")
                    try:
                        report = diagnose(file, db, checker=once, retriever=retriever)
                        layer_report = diagnose(file, layered, checker=once, retriever=with_layer) \
                            if layered is not None else None
                    finally:
                        file.write_text(original, encoding="utf-8")
                    if not report.diagnostics:
                        continue
                    answered = layer_report or report
                    rows.append({"path": path, "line": line, "mutated": mutated.strip()[:200], "truth": truth,
                                 "messages": sorted({d.symbol for d in report.diagnostics}),
                                 "in_cards": truth in answered.context,
                                 "in_cards_without_layer": truth in report.context,
                                 "lint_ms": round(report.lint_ms, 1), "retrieve_ms": round(answered.retrieve_ms, 1)})
                fixed = sum(r["in_cards"] for r in rows)
                out["kinds"][kind] = {
                    "reported": len(rows), "fix_in_cards": fixed,
                    "fix_in_cards_without_layer": sum(r["in_cards_without_layer"] for r in rows),
                    "share": round(fixed / len(rows), 4) if rows else None,
                    "lint_ms_p50": round(statistics.median(r["lint_ms"] for r in rows), 1) if rows else None,
                    "retrieve_ms_p50": round(statistics.median(r["retrieve_ms"] for r in rows), 1) if rows else None,
                    "misses": [r for r in rows if not r["in_cards"] or not r["in_cards_without_layer"]][:15]}
                print(name, kind, f"{fixed}/{len(rows)} ({out['kinds'][kind]['fix_in_cards_without_layer']} "
                      "without the layer)", flush=True)
    finally:
        checker.close()
    return out


def pooled(results: dict) -> None:
    """All projects' and kinds' cases together."""
    kinds = [k for p in results["projects"].values() for k in p["kinds"].values()]
    reported, fixed = sum(k["reported"] for k in kinds), sum(k["fix_in_cards"] for k in kinds)
    results["pooled"] = {"reported": reported, "fix_in_cards": fixed,
                         "fix_in_cards_without_layer": sum(k.get("fix_in_cards_without_layer", 0) for k in kinds),
                         "share": round(fixed / reported, 4) if reported else None}
    print("pooled", results["pooled"])


def main(argv: list[str] | None = None) -> None:
    over_projects("java_mistakes", __doc__, measure, {"per-kind": 25, "libraries": 1, "kinds": "all"}, argv,
                  finish=pooled)


if __name__ == "__main__":
    main()

"""javac or ECJ as Java's checker, measured on the same mistakes in real projects, side by side.

    python -m benchmarks.java_checkers --projects benchmarks/data/javac_projects.json [--per-kind 20]
        [--out benchmarks/results/java_checkers.json]

The cases are benchmarks.java_mistakes' (one mistake a model makes, in one class file of a real
project from Maven Central). Each mutated file is checked by codegraph's javac checker and by ECJ
(org.eclipse.jdt:ecj from Maven Central, kept warm in one process by benchmarks/javac/EcjCheck.java),
interleaved, both given the same sources and classpath. Reported per checker: the share of cases
where it reports an error on the mutated line, the share of member errors (invented method, field
of the wrong class) whose message names the type the member was looked up in by its qualified
name (what a rule needs to pick the query without guessing), and the warm time per file (p50).
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import time
from pathlib import Path

from benchmarks.java_mistakes import KINDS, Cases, indexed_project
from benchmarks.javac_callgraph import jar, over_projects
from codegraph.languages import language
from codegraph.languages.java.check import source_roots
from codegraph.retrieval.engine import Retriever

DRIVER = Path(__file__).parent / "javac" / "EcjCheck.java"
ECJ = os.environ.get("ECJ_COORDINATES", "org.eclipse.jdt:ecj:3.33.0")
_MEMBER_KINDS = ("invented-method", "wrong-class-field")


class Ecj:
    def __init__(self, scratch: Path) -> None:
        self.jar = jar(ECJ, scratch)
        classes = scratch / "ecj-driver"
        if not (classes / "EcjCheck.class").exists():
            subprocess.run(["javac", "-cp", str(self.jar), "-d", str(classes), str(DRIVER)], check=True)
        self.process = subprocess.Popen(["java", "-cp", os.pathsep.join([str(self.jar), str(classes)]), "EcjCheck"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def lint(self, path: Path, classpath: str) -> list[tuple[int, str]]:
        text = path.read_text(encoding="utf-8")
        roots = os.pathsep.join(map(str, source_roots(path, text)))
        self.process.stdin.write(f"{path}\t{roots}\t{classpath}\n")
        self.process.stdin.flush()
        out = []
        for line in self.process.stdout:
            if line.rstrip("\n") == "DONE":
                break
            m = re.match(rf"{re.escape(str(path))}:(\d+): error: (.*)", line.rstrip("\n"))
            if m:
                out.append((int(m.group(1)), m.group(2)))
        return out

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(10)


def measure(name: str, spec: dict, scratch: Path, per_kind: int) -> dict:
    root, db, classpath = indexed_project(name, spec, scratch)
    javac, ecj = language("java").checker(), Ecj(scratch)
    rows: list[dict] = []
    try:
        with Retriever(db) as retriever:
            for kind in KINDS:
                cases, taken, tried = Cases(retriever.con, root, f"{name}:{kind}"), 0, 0
                for path, line, mutated, truth in cases.of(kind):
                    if taken >= per_kind or tried >= 20 * per_kind:
                        break
                    tried += 1
                    file = root / path
                    original = file.read_text(encoding="utf-8")
                    if javac.lint(file) or ecj.lint(file, classpath):
                        continue  # not clean unchanged (for either): not a case
                    lines = original.split("\n")
                    lines[line - 1] = mutated
                    file.write_text("\n".join(lines), encoding="utf-8")
                    try:
                        started = time.perf_counter()
                        by_javac = javac.lint(file)
                        javac_ms = (time.perf_counter() - started) * 1000
                        started = time.perf_counter()
                        by_ecj = ecj.lint(file, classpath)
                        ecj_ms = (time.perf_counter() - started) * 1000
                    finally:
                        file.write_text(original, encoding="utf-8")
                    taken += 1
                    owner = truth.rpartition("(")[0].rpartition(".")[0] if kind == "invented-method" else None
                    rows.append({"kind": kind, "javac_line": any(d.line == line for d in by_javac),
                                 "ecj_line": any(at == line for at, _ in by_ecj),
                                 "javac_any": bool(by_javac), "ecj_any": bool(by_ecj),
                                 "javac_message": next((d.message for d in by_javac if d.line == line), None),
                                 "ecj_message": next((m for at, m in by_ecj if at == line), None),
                                 "owner": owner, "javac_ms": round(javac_ms, 1), "ecj_ms": round(ecj_ms, 1)})
    finally:
        javac.close()
        ecj.close()
    return summarise(rows) | {"sources": spec["sources"], "samples": rows[:: max(1, len(rows) // 12)]}


def _qualified_location(message: str | None) -> bool:
    """Does the message name the type a member was looked up in by its qualified name?"""
    return bool(message) and bool(re.search(r"(?:location:\s*(?:variable \w+ of type |class |interface |enum |record )?"
                                            r"|for the type )[a-z]\w*(?:\.\w+)*\.[A-Z]", message))


def summarise(rows: list[dict]) -> dict:
    def share(values):
        values = list(values)
        return round(sum(values) / len(values), 4) if values else None

    member = [r for r in rows if r["kind"] in _MEMBER_KINDS]
    return {"cases": len(rows),
            "on_the_line": {"javac": share(r["javac_line"] for r in rows), "ecj": share(r["ecj_line"] for r in rows)},
            "any_error": {"javac": share(r["javac_any"] for r in rows), "ecj": share(r["ecj_any"] for r in rows)},
            "member_errors_name_the_qualified_type": {
                "javac": share(_qualified_location(r["javac_message"]) for r in member),
                "ecj": share(_qualified_location(r["ecj_message"]) for r in member)},
            "warm_ms_p50": {"javac": round(statistics.median(r["javac_ms"] for r in rows), 1) if rows else None,
                            "ecj": round(statistics.median(r["ecj_ms"] for r in rows), 1) if rows else None}}


def main(argv: list[str] | None = None) -> None:
    over_projects("java_checkers", __doc__, measure, {"per-kind": 20}, argv, ecj=ECJ)


if __name__ == "__main__":
    main()

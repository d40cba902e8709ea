"""`codegraph diagnose`: lint a candidate, retrieve per diagnostic, render the context."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from ..graphfile import find_db
from ..errors import CodegraphError
from ..llm import ChatModel
from .candidate import Candidate
from .context import render
from .engine import Retrieval, Retriever
from ..languages import Checker, Diagnostic, checked_language


@dataclass
class DiagnoseReport:
    path: str
    module: str
    lines: tuple[int | None, int | None]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    retrievals: list[Retrieval] = field(default_factory=list)
    context: str = ""
    lint_ms: float = 0.0
    retrieve_ms: float = 0.0

    def to_dict(self) -> dict:
        return {"path": self.path, "module": self.module, "lines": list(self.lines),
                "lint_ms": round(self.lint_ms, 1), "retrieve_ms": round(self.retrieve_ms, 1),
                "retrievals": [r.to_dict() for r in self.retrievals], "context": self.context}


def parse_lines(spec: str | None) -> tuple[int | None, int | None]:
    if not spec:
        return None, None
    try:
        first, _, last = spec.partition("-")
        a, b = int(first), int(last or first)
    except ValueError:
        raise CodegraphError(f"--lines {spec!r}: write A-B, e.g. --lines 10-42") from None
    if a < 1 or b < a:
        raise CodegraphError(f"--lines {spec!r}: need 1 <= A <= B")
    return a, b


def diagnose(
    path: str | Path,
    db_path: str | Path | None = None,
    *,
    lines: tuple[int | None, int | None] = (None, None),
    checker: Checker | None = None,
    retriever: Retriever | None = None,
    model: ChatModel | None = None,
    budget_tokens: int = 1500,
    changed_modules: tuple[str, ...] = (),
) -> DiagnoseReport:
    path = Path(path).resolve()
    if not path.is_file():
        raise CodegraphError(f"{path} is not a file: give the candidate source file to check (.py, .java)")
    language = checked_language(path)
    try:
        head = path.read_bytes()[:8192]
    except OSError as exc:
        raise CodegraphError(f"cannot read {path}: {exc}") from None
    if b"\x00" in head:
        raise CodegraphError(f"{path.name} is binary, not {language.title} source")
    checker = checker or language.shared_checker()
    checker.start()  # pylint loads in its process while this one opens the graph
    owns = retriever is None
    if retriever is None:
        retriever = Retriever(find_db(db_path, start=path.parent), model=model)
    try:
        candidate = Candidate.from_file(path)
        started = time.perf_counter()
        diagnostics = language.keep(checker.lint(path, changed_modules), *lines,
                                    known_module=retriever.known_import)
        lint_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        retrievals = retriever.retrieve_all(candidate, diagnostics)
        retrieve_ms = (time.perf_counter() - started) * 1000
        return DiagnoseReport(str(path), candidate.module, lines, diagnostics, retrievals,
                              render(retrievals, budget_tokens), lint_ms, retrieve_ms)
    finally:
        if owns:
            retriever.close()

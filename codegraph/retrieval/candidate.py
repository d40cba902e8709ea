"""The candidate: a file (or part of one) an LLM wrote, read with the same extractor as the index.

It answers what the diagnostics leave out: which call sits at a line and column, which class
encloses a line, and what a dotted name in the candidate means in the repository's graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ..languages import FileFacts, Language, UndecodableSource, for_file, language

_FUNCTION_KINDS = frozenset({"method", "classmethod", "staticmethod", "property", "function"})


@dataclass
class Candidate:
    path: Path
    source: str
    module: str
    facts: FileFacts | None
    lines: list[str] = field(default_factory=list)
    language: Language | None = None  # what reads it, its checker's messages and its rules

    @classmethod
    def from_file(cls, path: str | Path, module: str | None = None, source: str | None = None) -> "Candidate":
        path = Path(path).resolve()
        text = source if source is not None else path.read_text(encoding="utf-8", errors="replace")
        reader = for_file(path.name) or language("python")  # a model's file may have any name
        module = module or reader.module_of_file(path)
        try:
            facts = reader.extract(text.encode("utf-8"), path.name, module, reader.is_package(path.name))
        except UndecodableSource:
            facts = None
        return cls(path, text, module, facts, text.splitlines(), reader)

    def rows(self, table: str) -> list[tuple]:
        return self.facts.rows[table] if self.facts else []

    # -- what sits where ----------------------------------------------------------------------
    def call_at(self, line: int, column: int | None = None, end_line: int | None = None,
                end_column: int | None = None) -> str | None:
        """The callee text of the call a diagnostic points at (pylint marks the call's start).
        `a(x=1).b()`: both calls start there; it is the outermost whose callee ends inside the
        call pylint marks (end_line, end_column)."""
        calls = [r for r in self.rows("calls") if r.kind != "implicit" and line <= r.line <= (end_line or line)]
        if not calls:
            return None
        exact = [r for r in calls if r.line == line and column is not None and r.col == column]
        if exact:
            exact = [r for r in exact if end_column is not None
                     and (r.end_line, r.end_col) <= (end_line or line, end_column)] or exact
            return max(exact, key=lambda r: (r.end_line, r.end_col)).callee_text
        after = sorted((r for r in calls if r.line > line or column is None or r.col >= column),
                       key=lambda r: (r.line, r.col))
        return (after or calls)[0].callee_text

    def enclosing(self, line: int, table: str, kinds: frozenset[str] | None = None) -> tuple | None:
        """The innermost definition row of `table` (classes, members, globals) spanning `line`, of
        one of `kinds` when given (an attribute assigned on that line spans it too)."""
        spans = [r for r in self.rows(table) if r.start_line <= line <= r.end_line
                 and (kinds is None or r.kind in kinds)]
        return min(spans, key=lambda r: r.end_line - r.start_line) if spans else None

    def enclosing_class(self, line: int) -> str | None:
        row = self.enclosing(line, "classes")
        return row.qualname if row else None

    def enclosing_function(self, line: int) -> str | None:
        best = None
        for table in ("members", "globals", "nested_functions"):
            row = self.enclosing(line, table, None if table == "nested_functions" else _FUNCTION_KINDS)
            if row is None:
                continue
            span = row.end_line - row.start_line
            if best is None or span < best[0]:
                best = (span, row.qualname)
        return best[1] if best else None

    def binding(self, name: str, line: int | None = None) -> str | None:
        """What a name imported by the candidate stands for: module-level imports, and imports
        inside the function around `line`."""
        scope = self.enclosing_function(line) if line else None
        found = None
        for row in self.rows("imports"):
            if row.bound_name != name:
                continue
            if row.scope_qualname == self.module or (scope and scope.startswith(row.scope_qualname)):
                found = row.target
        return found

    def names_bound_in(self, function: str | None) -> list[str]:
        """The names code in `function` can read without an import: its parameters, the names
        it (or a function around it) binds or defines (`def helper` inside it), and what the file
        binds at module level."""
        def visible(scope: str) -> bool:
            return bool(function) and (function == scope or function.startswith(scope + "."))

        names = {r.name for r in self.rows("bindings") if visible(r.scope_qualname) and r.kind != "return"}
        names |= {r.name for r in self.rows("parameters") if visible(r.owner_qualname)}
        names |= {r.bound_name for r in self.rows("imports") if r.scope_qualname == self.module and r.bound_name}
        names |= {r.name for r in self.rows("globals") if r.qualname == f"{self.module}.{r.name}"}
        names |= {r.name for table in ("nested_functions", "classes") for r in self.rows(table) if r.scope_qualname and (
            r.scope_qualname == self.module or visible(r.scope_qualname.removesuffix(".<locals>")))}
        return sorted(names)

    def local_definition(self, name: str) -> str | None:
        qualname = f"{self.module}.{name}"
        for table in ("classes", "globals"):
            if any(r.qualname == qualname for r in self.rows(table)):
                return qualname
        return None

    def bases_of(self, class_qualname: str) -> list[str]:
        return [r.base_text for r in sorted(self.rows("inheritance"), key=lambda r: r.position)
                if r.class_qualname == class_qualname]

    def own_members(self, class_qualname: str) -> set[str]:
        return {r.name for r in self.rows("members") if r.class_qualname == class_qualname}

    def line_at(self, line: int) -> str:
        """The text of a 1-based line ("" past the file's ends: a message may point there)."""
        return self.lines[line - 1] if 0 < line <= len(self.lines) else ""

    def excerpt(self, line: int, radius: int = 3) -> str:
        first, last = max(1, line - radius), min(len(self.lines), line + radius)
        width = len(str(last))
        return "\n".join(f"{i:>{width}}{'>' if i == line else ' '} {self.lines[i - 1]}"
                         for i in range(first, last + 1))


class GraphNames:
    """Canonical qualnames from the graph (any layer: `unittest.TestCase` is unittest.case's),
    following re-exports and inheritance, in SQL."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def kind(self, qualname: str) -> str | None:
        row = self.con.execute("SELECT kind FROM all_symbols WHERE qualname = $q LIMIT 1", {"q": qualname}).fetchone()
        return row[0] if row else None

    def canonical(self, dotted: str, depth: int = 0) -> str | None:
        if depth > 8 or not dotted:
            return None
        if self.kind(dotted):
            return dotted
        row = self.con.execute(
            """SELECT resolved_qualname, target FROM all_imports
               WHERE module || '.' || bound_name = $d AND scope_qualname = module AND NOT is_star LIMIT 1""",
            {"d": dotted}).fetchone()
        if row:
            return row[0] or (self.canonical(row[1], depth + 1) if row[1] != dotted else None)
        owner, _, last = dotted.rpartition(".")
        if not owner:
            return None
        owner_q = self.canonical(owner, depth + 1)
        if owner_q is None:
            return None
        kind = self.kind(owner_q)
        if kind == "class":
            return self.member(owner_q, last)
        if kind == "module":
            return self.canonical(f"{owner_q}.{last}", depth + 1) if owner_q != owner else None
        return None

    def member(self, class_qualname: str, name: str) -> str | None:
        row = self.con.execute(
            "SELECT qualname FROM members_of($c) WHERE name = $n AND class = $c LIMIT 1",
            {"c": class_qualname, "n": name}).fetchone()
        return row[0] if row else None

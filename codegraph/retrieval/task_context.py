"""Task-level context: what code about to be written will most likely need, before any answer.

From the task's description, signature and target (file and symbol), it gathers, each with the
reason it was chosen:

- the enclosing class: every member's signature, inherited ones included (name-mangled private
  members of other classes left out: the class cannot reach them);
- the target module: its imports and its top-level names;
- definitions that answer the description (codegraph search: BM25 and the embedding);
- graph neighbours: what the code next to the target calls, and what the modules around the
  target use most (personalised PageRank over the module graph, seeded at the target, as
  Aider's repository map does);

then ranks them and renders them under a hard token budget (estimate_tokens, as everywhere).
With `exclude_target`, nothing of the target's own body is used (its calls, its nested
functions), so a function that already exists can be asked for as if it did not.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np

from ..db import check_schema, connect_readonly, get_meta
from ..errors import CodegraphError
from ..llm import estimate_tokens
from ..schema import PROJECT_CALL_SQL
from ..semantic.search import search
from ..schema import CALLABLE_KINDS
from .context import language_of

_PROJECT_CALL = PROJECT_CALL_SQL
_MODULE_EDGES: dict[tuple, dict[tuple[str, str], int]] = {}


@dataclass
class Item:
    """One definition the context offers, with the reasons it was chosen."""

    qualname: str
    kind: str
    line: str  # the compact form: `def name(sig)`, `class Name(bases)`, `name: annotation`
    score: float
    reasons: list[str] = field(default_factory=list)
    doc: str | None = None
    import_line: str | None = None
    section: str = ""  # the heading it is shown under


@dataclass
class Section:
    title: str
    items: list[Item] = field(default_factory=list)


@dataclass
class TaskContext:
    target: str
    text: str
    tokens: int
    items: list[Item]
    elapsed_ms: float
    notes: list[str] = field(default_factory=list)  # what the graph does not hold that the task named

    def qualnames(self) -> set[str]:
        return {i.qualname for i in self.items}

    def to_dict(self) -> dict:
        return {"target": self.target, "tokens": self.tokens, "elapsed_ms": round(self.elapsed_ms, 1),
                "items": [{"qualname": i.qualname, "kind": i.kind, "reasons": i.reasons, "score": round(i.score, 3)}
                          for i in self.items], "notes": self.notes, "text": self.text}


def _first_line(doc: str | None) -> str | None:
    for line in (doc or "").strip().splitlines():
        if line.strip():
            return line.strip()[:160]
    return None


class TaskContextBuilder:
    def __init__(self, con: duckdb.DuckDBPyConnection, db_path: str | Path) -> None:
        self.con, self.db_path = con, Path(db_path)
        self.language = language_of(None)  # the target file's, once build() knows it

    def _rows(self, sql: str, params: dict) -> list[tuple]:
        return self.con.execute(sql, params).fetchall()

    # -- where the code goes -------------------------------------------------------------------
    def locate(self, target_file: str, symbol: str) -> tuple[str, str, str | None]:
        """(module, target qualname, enclosing class qualname or None)."""
        row = self.con.execute("SELECT module FROM files WHERE path = $p", {"p": target_file}).fetchone()
        if row is None:
            raise CodegraphError(f"{target_file} is not in the graph: index the repository, and give the path "
                                 "relative to its root")
        module = row[0]
        target = self.language.qualname(module, symbol)
        owner = self.language.qualname(module, symbol.rpartition('.')[0]) if "." in symbol else None
        if owner is None:  # a method named without its class? a class itself?
            # not the module: a Java file's module and its class share a name
            found = self.con.execute("SELECT kind, class_qualname FROM symbols WHERE qualname = $q AND kind <> 'module'",
                                     {"q": target}).fetchone()
            if found and found[0] == "class":
                owner = target
        return module, target, owner

    # -- the sources -----------------------------------------------------------------------------
    def class_section(self, owner: str, target: str) -> Section:
        rows = self._rows("""
            SELECT m.qualname, m.kind, m.name, m.signature, m.annotation, m.docstring, m.defined_in
            FROM members_of($c) m
            WHERE m.class = $c AND m.qualname <> $t
              AND NOT (starts_with(m.name, '__') AND NOT ends_with(m.name, '__') AND m.defined_in <> $c)
            ORDER BY m.mro_position, m.kind = 'instance_attribute', m.name""", {"c": owner, "t": target})
        head = self.con.execute("SELECT qualname, bases, docstring FROM classes WHERE qualname = $c", {"c": owner}).fetchone()
        section = Section(f"The class {owner}" + (f"({', '.join(head[1])})" if head and head[1] else "") +
                          (f": {_first_line(head[2])}" if head and head[2] else ""), )
        for qualname, kind, name, signature, annotation, doc, defined_in in rows:
            own = defined_in == owner
            reason = _OWN_MEMBER if own else f"inherited from {defined_in}"
            section.items.append(Item(qualname, kind, self.language.declaration(kind, name, signature, annotation,
                                                                                qualname=qualname),
                                      _member_score(kind, name, annotation, own), [reason], _first_line(doc)))
        return section

    def module_section(self, module: str, target: str, owner: str | None, near_line: int | None) -> Section:
        """Its imports (cheap lines), and its top-level names, those defined near the target first."""
        section = Section(f"The module {module}: what it imports and defines")
        for bound, target_name, resolved, line, in_project in self._rows("""
                SELECT i.bound_name, i.target, i.resolved_qualname, i.line,
                       i.resolved_qualname IN (SELECT qualname FROM symbols) AS in_project
                FROM imports i
                WHERE i.module = $m AND i.scope_qualname = $m AND NOT i.is_star ORDER BY i.line""", {"m": module}):
            qualname = resolved or target_name or bound
            # the project's own names before the library's (typing, dataclasses: known to any model)
            section.items.append(Item(qualname, "import", f"{bound} = {target_name}", 0.65 if in_project else 0.35,
                                      [_IMPORTED]))
        for bound, target_name, resolved, scope in self._rows("""
                SELECT bound_name, target, resolved_qualname, min(scope_qualname) FROM imports
                WHERE module = $m AND scope_qualname <> $m AND NOT is_star AND resolved_qualname IS NOT NULL
                  AND NOT (scope_qualname = $t OR starts_with(scope_qualname, $t || '.'))
                  AND bound_name NOT IN (SELECT bound_name FROM imports WHERE module = $m AND scope_qualname = $m)
                GROUP BY ALL ORDER BY 4, 1""", {"m": module, "t": target}):
            # what the functions beside the target import in their bodies (a cycle kept lazy, a slow
            # import deferred): the target may need the same, and the module's imports do not show it
            section.items.append(Item(resolved, "import", f"{bound} = {target_name}", 0.5,
                                      [f"imported inside {scope.removeprefix(module + '.')}"]))
        for qualname, kind, name, signature, doc, line in self._rows("""
                SELECT qualname, kind, name, signature, docstring, start_line FROM symbols
                WHERE module = $m AND qualname = module || '.' || name AND kind IN ('class', 'function', 'variable')
                  AND qualname <> $t AND qualname IS DISTINCT FROM $o
                ORDER BY start_line""", {"m": module, "t": target, "o": owner}):
            nearness = math.exp(-abs((line or 0) - near_line) / 80) if near_line else 0.0
            base = 0.5 if kind in ("class", "function") else 0.45
            section.items.append(Item(qualname, kind, self.language.declaration(kind, name, signature, qualname=qualname),
                                      base + 0.25 * nearness,
                                      [_DEFINED + (" near the target" if nearness > 0.5 else "")],
                                      _first_line(doc)))
        return section

    def imported_modules_section(self, module: str) -> Section:
        """One object further: the public top-level names of the project modules the target module
        imports as modules (`from . import errors` makes `errors.NotRenderableError` reachable;
        the import line alone does not say what is in it)."""
        section = Section("Modules the target module imports: what they define")
        for bound, qualname, kind, name, signature, doc in self._rows("""
                SELECT i.bound_name, s.qualname, s.kind, s.name, s.signature, s.docstring
                FROM imports i JOIN modules m ON m.qualname = i.resolved_qualname
                JOIN symbols s ON s.module = m.qualname AND s.qualname = s.module || '.' || s.name
                WHERE i.module = $m AND i.scope_qualname = $m AND NOT i.is_star
                  AND s.kind IN ('class', 'function') AND NOT starts_with(s.name, '_')
                ORDER BY i.line, s.start_line""", {"m": module}):
            section.items.append(Item(qualname, kind, f"in {bound}: {self.language.declaration(kind, name, signature, qualname=qualname)}", 0.5,
                                      [_IN_IMPORTED_MODULE], _first_line(doc)))
        return section

    def named_types_section(self, module: str, signature: str, description: str, skip: set[str],
                            whole_class: bool = False) -> Section:
        """Project classes the signature or the description names (`cart: Cart`): their public
        members, as RRR's get_class_info gives them; a class the signature names (a parameter's
        type, the return type) is more likely used than one the description mentions."""
        section = Section("Classes the task names")
        typed = set(re.findall(r"\b[A-Z][A-Za-z0-9_]+\b", signature))
        for word in dict.fromkeys(re.findall(r"\b[A-Z][A-Za-z0-9_]+\b", f"{signature} {description}")):
            row = self.con.execute("""
                SELECT coalesce(i.resolved_qualname, c.qualname) FROM (SELECT 1) LEFT JOIN imports i
                  ON i.module = $m AND i.bound_name = $w AND i.resolved_qualname IS NOT NULL
                LEFT JOIN classes c ON c.qualname = $m || '.' || $w""", {"m": module, "w": word}).fetchone()
            qualname = row[0] if row and row[0] else None
            if qualname is None:
                unique = self._rows("SELECT qualname FROM classes WHERE name = $w LIMIT 2", {"w": word})
                qualname = unique[0][0] if len(unique) == 1 else None
            if qualname is None or qualname in skip:
                continue
            head = self.con.execute("SELECT kind, name, module, docstring FROM classes WHERE qualname = $c",
                                    {"c": qualname}).fetchone()
            if head is not None and whole_class:
                # a whole class being written names the types it extends, holds and takes: the
                # class itself, with its import (a function written into a module has its imports)
                kind, name, where, doc = head
                section.items.append(Item(
                    qualname, kind, self.language.declaration(kind, name, None), 0.8 if word in typed else 0.65,
                    ["a class the task names"], _first_line(doc),
                    self.language.import_statement(where, name)
                    if self.language.needs_import(module, where) and qualname == self.language.qualname(where, name)
                    else None))
            for q, kind, name, signature, annotation, doc, defined_in in self._rows("""
                    SELECT qualname, kind, name, signature, annotation, docstring, defined_in FROM members_of($c)
                    WHERE class = $c AND NOT starts_with(name, '_') ORDER BY mro_position, name""", {"c": qualname}):
                score = (0.75 if word in typed else 0.6) - (0.0 if kind in CALLABLE_KINDS else 0.15)
                section.items.append(Item(q, kind, f"in {word}: {self.language.declaration(kind, name, signature, annotation, qualname=q)}", score,
                                          [f"member of {word}, which the task names"], _first_line(doc)))
        return section

    def search_items(self, query: str, exclude: set[int], k: int = 15) -> list[Item]:
        try:
            hits = search(self.con, self.db_path, query, k, exclude=exclude)
        except CodegraphError:
            return []
        top = max((h["score"] for h in hits), default=1.0) or 1.0
        return [Item(h["qualname"], h["kind"], self.language.declaration(h["kind"], h["name"], h["signature"], qualname=h["qualname"]),
                     0.8 * h["score"] / top, [f"answers the description ({h['why']})"], h.get("docstring"))
                for h in hits]

    def neighbour_items(self, module: str, target: str, owner: str | None, k: int = 15) -> list[Item]:
        """What the code beside the target calls: the other members of its class, or the other
        functions of its module (never the target's own body)."""
        scope = owner or module
        rows = self._rows(f"""
            SELECT c.resolved_callee, count(*) AS n
            FROM calls c
            WHERE (c.caller_qualname = $scope OR starts_with(c.caller_qualname, $scope || '.'))
              AND NOT (c.caller_qualname = $t OR starts_with(c.caller_qualname, $t || '.'))
              AND {_PROJECT_CALL} AND c.resolved_callee IS NOT NULL AND c.resolved_callee <> $t
            GROUP BY 1 ORDER BY n DESC LIMIT $k""", {"scope": scope, "t": target, "k": k})
        top = max((n for _, n in rows), default=1)
        return self._describe([(q, 0.6 * n / top, f"called {n}x by the code beside the target") for q, n in rows])

    def module_edges(self, hidden: str) -> list[tuple[str, str, int]]:
        """Calls and imports between modules, without the hidden target's own calls. The
        repository-wide part is computed once per database state (refine and long-running
        servers ask again and again); the target's share is subtracted."""
        meta = get_meta(self.con)
        key = (str(self.db_path.resolve()), meta.get("indexed_at"), meta.get("vectors_token"))
        edges = _MODULE_EDGES.get(key)
        if edges is None:
            edges = {(a, b): n for a, b, n in self._rows(f"""
                SELECT caller_module, callee_module, count(*) FROM (
                    SELECT f.module AS caller_module, s.module AS callee_module
                    FROM calls c JOIN files f USING (file_id) JOIN symbols s ON s.qualname = c.resolved_callee
                    WHERE {_PROJECT_CALL}
                    UNION ALL
                    SELECT i.module, coalesce(i.resolved_module, s.module)
                    FROM imports i LEFT JOIN symbols s ON s.qualname = i.resolved_qualname
                    WHERE i.resolved_qualname IS NOT NULL)
                WHERE callee_module IS NOT NULL AND caller_module <> callee_module
                GROUP BY 1, 2""", {})}
            _MODULE_EDGES.clear()  # one database state at a time is enough
            _MODULE_EDGES[key] = edges
        own = self._rows(f"""
            SELECT f.module, s.module, count(*) FROM calls c JOIN files f USING (file_id)
            JOIN symbols s ON s.qualname = c.resolved_callee
            WHERE {_PROJECT_CALL} AND (c.caller_qualname = $t OR starts_with(c.caller_qualname, $t || '.'))
              AND f.module <> s.module
            GROUP BY 1, 2""", {"t": hidden})
        if not own:
            return [(a, b, n) for (a, b), n in edges.items()]
        left = dict(edges)
        for a, b, n in own:
            left[(a, b)] = left.get((a, b), 0) - n
        return [(a, b, n) for (a, b), n in left.items() if n > 0]

    def pagerank_items(self, module: str, target: str, k: int = 15) -> list[Item]:
        """Definitions the modules around the target use most: PageRank over the module graph
        (calls and imports between modules), personalised at the target's module."""
        ranks = _personalised_pagerank(self.module_edges(target), module)
        near = [m for m, _ in sorted(ranks.items(), key=lambda kv: -kv[1]) if m != module][:8]
        if not near:
            return []
        rows = self._rows(f"""
            SELECT s.qualname, s.module, count(*) AS n
            FROM calls c JOIN symbols s ON s.qualname = c.resolved_callee
            WHERE list_contains($near, s.module) AND {_PROJECT_CALL}
              AND s.kind IN ('class', 'function') AND NOT starts_with(s.name, '_')
            GROUP BY 1, 2""", {"near": near})
        scored = sorted(((q, ranks[m] * (1 + n) ** 0.5) for q, m, n in rows), key=lambda kv: -kv[1])[:k]
        top = max((s for _, s in scored), default=1.0) or 1.0
        return self._describe([(q, 0.5 * s / top, f"used across {q.rpartition('.')[0]}, a module close to the target")
                               for q, s in scored])

    def _describe(self, scored: list[tuple[str, float, str]]) -> list[Item]:
        if not scored:
            return []
        found = {r[0]: r for r in self._rows("""
            SELECT qualname, kind, name, signature, docstring, class_qualname, module FROM symbols
            WHERE list_contains($q, qualname)""", {"q": [q for q, _, _ in scored]})}
        out = []
        for qualname, score, reason in scored:
            row = found.get(qualname)
            if row is None:
                continue
            _, kind, name, signature, doc, cls, module = row
            importable = cls is None and kind in ("class", "function", "variable")
            out.append(Item(qualname, kind, self.language.declaration(kind, name, signature, qualname=qualname), score, [reason], _first_line(doc),
                            self.language.import_statement(module, name) if importable else None))
        return out

    # -- all together ----------------------------------------------------------------------------
    def build(self, description: str, target_file: str, symbol: str, *, signature: str | None = None,
              budget_tokens: int = 2000, exclude_target: bool = True) -> TaskContext:
        started = time.perf_counter()
        self.language = language_of(target_file)
        module, target, owner = self.locate(target_file, symbol)
        exclude_ids = {r[0] for r in self._rows(
            "SELECT id FROM symbols WHERE qualname = $t OR starts_with(qualname, $t || '.')", {"t": target})} \
            if exclude_target else set()
        hidden = target if exclude_target else "\x00"  # whose calls are not to be seen
        line = self.con.execute("SELECT start_line FROM symbols WHERE qualname = $t", {"t": target}).fetchone()
        notes = self._notes(target_file, module, target, owner, line is not None)
        sections: list[Section] = []
        if owner and owner != target:
            sections.append(self.class_section(owner, target))
        sections.append(self.module_section(module, target, owner, line[0] if line else None))
        sections.append(self.named_types_section(module, signature or "", description, {owner or ""},
                                                 whole_class=owner == target))
        sections.append(self.imported_modules_section(module))
        elsewhere = Section("Elsewhere in the project")
        sections.append(elsewhere)
        candidates: dict[str, Item] = {}
        for section in sections:
            for item in section.items:
                item.section = section.title
                candidates.setdefault(item.qualname, item)
        words = " ".join(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", f"{symbol} {signature or ''}"))
        for item in [*self.search_items(f"{description} {words}", exclude_ids),
                     *self.neighbour_items(module, hidden, owner),
                     *self.pagerank_items(module, hidden)]:
            if item.qualname in (target, module) or item.qualname.startswith(target + "."):
                continue
            parent, _, last = item.qualname.rpartition(".")
            if last.startswith("__") and not last.endswith("__") and parent != owner:
                continue  # name-mangled: only its own class can reach it
            seen = candidates.get(item.qualname)
            if seen is None:
                item.section = elsewhere.title
                candidates[item.qualname] = item
            else:  # found again: both reasons, and the evidence adds up
                seen.score += 0.5 * item.score
                seen.reasons += [r for r in item.reasons if r not in seen.reasons]
                if seen.section == elsewhere.title or not seen.doc:
                    seen.doc = seen.doc or item.doc
                    seen.import_line = seen.import_line or item.import_line
        text, kept = _render([s.title for s in sections], list(candidates.values()), budget_tokens)
        return TaskContext(target, text, estimate_tokens(text), kept, (time.perf_counter() - started) * 1000, notes)

    def _notes(self, target_file: str, module: str, target: str, owner: str | None, exists: bool) -> list[str]:
        """What the task names that the graph does not hold: a misspelt symbol or class reads as
        new code otherwise, and gets ordinary context without a word."""
        notes = []
        if owner and owner != target and self.con.execute(
                "SELECT 1 FROM classes WHERE qualname = $o", {"o": owner}).fetchone() is None:
            notes.append(f"no class {owner.rpartition('.')[2]} in {target_file}: its members are not in this "
                         "context (a class still to be written, or a misspelt name?)")
        if not exists:
            notes.append(f"{target.removeprefix(module + '.')} is not defined in {target_file} yet: the context "
                         "is for new code")
        return notes


# What the heading of an item's section already says: not repeated on every line (a class's forty
# attributes cost a token or two each, not ten).
_OWN_MEMBER, _IMPORTED, _DEFINED = "member of the enclosing class", "imported by the target module", "defined in the target module"
_IN_IMPORTED_MODULE = "defined in a module the target module imports"
_SAID_BY_THE_HEADING = frozenset({_OWN_MEMBER, _IMPORTED, _DEFINED, _IN_IMPORTED_MODULE})


def _member_score(kind: str, name: str, annotation: str | None, own: bool) -> float:
    """How likely code written in the class uses a member: its own methods first, then what it
    inherits; attributes (annotated ones first: the annotation says what they hold) and special
    methods (run by operations, rarely called) after them."""
    special = name.startswith("__") and name.endswith("__")
    if kind in CALLABLE_KINDS and not special:
        return 0.9 if own else 0.7
    if special:
        return (0.75 if own else 0.45) if name == "__init__" else (0.6 if own else 0.4)
    return (0.85 if annotation else 0.8) if own else (0.5 if annotation else 0.45)


def _personalised_pagerank(edges: list[tuple[str, str, int]], seed: str, alpha: float = 0.85,
                           steps: int = 60) -> dict[str, float]:
    """PageRank that teleports to `seed` only (and from dead ends), by sparse power iteration:
    the stdlib's module graph has 1.7k nodes and 12k edges, too many for a dense matrix per call."""
    nodes = {seed: 0}
    for a, b, _ in edges:
        nodes.setdefault(a, len(nodes))
        nodes.setdefault(b, len(nodes))
    if len(nodes) == 1:
        return {seed: 1.0}
    src = np.fromiter((nodes[a] for a, _, _ in edges), np.int64, len(edges))
    dst = np.fromiter((nodes[b] for _, b, _ in edges), np.int64, len(edges))
    weight = np.fromiter((n for _, _, n in edges), np.float64, len(edges))
    out = np.bincount(src, weight, len(nodes))
    share = weight / out[src]
    dead = out == 0
    vector = np.zeros(len(nodes))
    vector[0] = 1.0
    for _ in range(steps):
        moved = np.bincount(dst, vector[src] * share, len(nodes))
        spread = alpha * moved
        spread[0] += 1.0 - alpha + alpha * vector[dead].sum()
        vector = spread
    return dict(zip(nodes, vector.tolist()))


def _entry(item: Item, elsewhere: bool) -> str:
    reasons = [r for r in item.reasons if r not in _SAID_BY_THE_HEADING]
    entry = f"{item.line}  # {'; '.join(reasons)}" if reasons else item.line
    if not elsewhere:
        return entry
    extras = [f'    """{item.doc}"""' if item.doc else "", f"    {item.import_line}" if item.import_line else ""]
    return "\n".join([f"{item.qualname}: {entry}", *filter(None, extras)])


def _render(titles: list[str], items: list[Item], budget: int) -> tuple[str, list[Item]]:
    """The best-scored items that fit, shown under their headings in `titles` order: a hard cap
    on the whole text (each line counted with its newline, headings included)."""
    chosen: dict[str, list[Item]] = {t: [] for t in titles}
    used = 0
    for item in sorted(items, key=lambda i: -i.score):
        cost = estimate_tokens(_entry(item, item.section == titles[-1]) + "\n")
        if not chosen[item.section]:
            cost += estimate_tokens(f"# {item.section}\n")
        if used + cost > budget:
            continue
        chosen[item.section].append(item)
        used += cost
    lines, kept = [], []
    for title in titles:
        if chosen[title]:
            lines.append(f"# {title}")
            lines += [_entry(item, title == titles[-1]) for item in chosen[title]]
            kept += chosen[title]
    return "\n".join(lines), kept


def task_context(db_path: str | Path, description: str, target_file: str, symbol: str, *,
                 signature: str | None = None, budget_tokens: int = 2000, exclude_target: bool = True,
                 con: duckdb.DuckDBPyConnection | None = None) -> TaskContext:
    """The library entry point behind `codegraph context` and refine's first prompt."""
    owns = con is None
    if con is None:
        con = connect_readonly(db_path)
    try:
        if owns:
            check_schema(con, db_path)
        return TaskContextBuilder(con, db_path).build(description, target_file, symbol, signature=signature,
                                                      budget_tokens=budget_tokens, exclude_target=exclude_target)
    finally:
        if owns:
            con.close()

"""Inject one realistic hallucination into a function of a real, indexed repository.

Each case is the file's text with one change inside one function, the line(s) changed, the
category, the pylint symbol(s) that should fire, and the ground truth: the qualname of the
definition (or module) the model should have used. Cases come from the graph itself: imports
that resolve inside the repository, `self.method()` calls that resolve, calls to project
functions whose parameters are known. Deterministic for a seed.
"""

from __future__ import annotations

import random
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import duckdb
import tree_sitter_python
from tree_sitter import Language, Parser

_PARSER = Parser(Language(tree_sitter_python.language()))

CATEGORIES = {
    "wrong-imported-name": ("no-name-in-module",),
    "near-miss-member": ("no-member",),
    "missing-import": ("undefined-variable",),
    "dropped-argument": ("no-value-for-parameter",),
    "extra-argument": ("too-many-function-args",),
    "misspelt-keyword": ("unexpected-keyword-arg",),
    "wrong-module-path": ("import-error", "no-name-in-module"),
}


@dataclass
class Case:
    id: str
    corpus: str
    category: str
    path: str  # relative to the repository root
    module: str
    function: str
    first_line: int  # the function's span: the candidate
    last_line: int
    mutated_line: int
    expected_symbols: tuple[str, ...]
    ground_truth: str
    original: str  # the line before
    mutated: str  # the line after
    text: str  # the whole mutated file

    def summary(self) -> dict:
        data = asdict(self)
        data.pop("text")
        return data


def typo(name: str, rng: random.Random, taken: set[str]) -> str | None:
    """A near miss a model might write: a dropped, doubled or swapped letter."""
    core = name.lstrip("_")
    prefix = name[: len(name) - len(core)]
    if len(core) < 4:
        return None
    options = []
    for i in range(1, len(core) - 1):
        options.append(core[:i] + core[i + 1 :])
        options.append(core[:i] + core[i] + core[i:])
        if core[i] != core[i + 1]:
            options.append(core[:i] + core[i + 1] + core[i] + core[i + 2 :])
    rng.shuffle(options)
    for option in options:
        candidate = prefix + option
        if candidate != name and candidate.isidentifier() and candidate not in taken:
            return candidate
    return None


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _body_insert_line(lines: list[str], first: int, last: int) -> int | None:
    """The 1-based line of the function's first statement after its signature and docstring."""
    tree = _PARSER.parse("\n".join(lines[first - 1 : last]).encode())
    node = tree.root_node.named_children[0] if tree.root_node.named_child_count else None
    while node is not None and node.type == "decorated_definition":
        node = node.child_by_field_name("definition")
    if node is None or node.type != "function_definition":
        return None
    body = node.child_by_field_name("body")
    if body is None or not body.named_child_count:
        return None
    stmts = [c for c in body.named_children if c.type != "comment"]
    if not stmts:
        return None
    target = stmts[0]
    if target.type == "expression_statement" and target.named_children and target.named_children[0].type == "string":
        if len(stmts) < 2:
            return None
        target = stmts[1]
    if target.start_point[0] == node.start_point[0]:  # one-line def
        return None
    return first + target.start_point[0]


class Generator:
    def __init__(self, con: duckdb.DuckDBPyConnection, root: Path, corpus: str, seed: int = 7,
                 exclude: re.Pattern | None = None) -> None:
        self.con, self.root, self.corpus = con, root, corpus
        self.rng = random.Random(seed)
        self.exclude = exclude
        self._text: dict[str, list[str]] = {}
        self.taken = {r[0] for r in con.execute("SELECT DISTINCT name FROM symbols").fetchall()}

    def lines(self, path: str) -> list[str]:
        if path not in self._text:
            self._text[path] = (self.root / path).read_text(encoding="utf-8").split("\n")
        return self._text[path]

    def _functions(self) -> list[tuple]:
        rows = self.con.execute("""
            SELECT qualname, module, path, start_line, end_line FROM symbols
            WHERE kind IN ('function', 'method', 'classmethod', 'staticmethod')
              AND end_line - start_line BETWEEN 2 AND 120 ORDER BY path, start_line""").fetchall()
        return [r for r in rows if not (self.exclude and self.exclude.search(r[2]))]

    def _case(self, category, fn, line_no, original, mutated, truth, lines, insert=False) -> Case:
        qualname, module, path, first, last = fn
        new = list(lines)
        if insert:
            new.insert(line_no - 1, mutated)
            last += 1
        else:
            new[line_no - 1] = mutated
        return Case(f"{self.corpus}:{category}:{qualname}:{line_no}", self.corpus, category, path, module, qualname,
                    first, last, line_no, CATEGORIES[category], truth, original, mutated, "\n".join(new))

    # -- the kinds of hallucination ---------------------------------------------------------
    def imported_names(self, fn) -> list[tuple]:
        """Module-level from-imports of project definitions that the function uses."""
        qualname, module, path, first, last = fn
        return self.con.execute("""
            SELECT DISTINCT i.imported_module, i.name, i.bound_name, i.resolved_qualname, i.line, i.alias
            FROM imports i
            WHERE i.module = $m AND i.scope_qualname = $m AND i.name IS NOT NULL AND NOT i.is_star
              AND i.resolution = 'definition' AND i.resolved_module IS NOT NULL
              AND EXISTS (SELECT 1 FROM calls c JOIN files f USING (file_id)
                          WHERE f.path = $p AND c.caller_qualname = $q AND c.callee_text = i.bound_name)
            ORDER BY i.line""", {"m": module, "p": path, "q": qualname}).fetchall()

    def wrong_imported_name(self, fn) -> Case | None:
        lines = self.lines(fn[2])
        at = _body_insert_line(lines, fn[3], fn[4])
        for imported_module, name, bound, truth, _line, alias in self.imported_names(fn):
            bad = typo(name, self.rng, self.taken)
            if at is None or bad is None or alias:
                continue
            text = f"{_indent(lines[at - 1])}from {imported_module} import {bad} as {bound}"
            return self._case("wrong-imported-name", fn, at, "", text, truth, lines, insert=True)
        return None

    def wrong_module_path(self, fn) -> Case | None:
        lines = self.lines(fn[2])
        at = _body_insert_line(lines, fn[3], fn[4])
        for imported_module, name, bound, _truth, _line, alias in self.imported_names(fn):
            head, _, tail = imported_module.rpartition(".")
            bad_tail = typo(tail, self.rng, self.taken)
            if at is None or bad_tail is None or alias:
                continue
            bad = f"{head}.{bad_tail}" if head else bad_tail
            text = f"{_indent(lines[at - 1])}from {bad} import {name}"
            return self._case("wrong-module-path", fn, at, "", text, imported_module, lines, insert=True)
        return None

    def missing_import(self, fn) -> Case | None:
        lines = self.lines(fn[2])
        for _imported_module, name, bound, truth, line, alias in self.imported_names(fn):
            original = lines[line - 1]
            pattern = re.compile(r"^(\s*from\s+\S+\s+import\s+)(.*)$")
            m = pattern.match(original)
            if not m or "(" in original or "\\" in original or alias:
                continue
            names = [n.strip() for n in m.group(2).split(",")]
            if bound not in names:
                continue
            rest = [n for n in names if n != bound]
            mutated = f"{m.group(1)}{', '.join(rest)}" if rest else f"{_indent(original)}pass"
            # the candidate is the function; the import line is outside it, as when a model
            # writes a function that uses a name the file never imported
            case = self._case("missing-import", fn, line, original, mutated, truth, lines)
            case.mutated_line = self._first_use(fn, bound) or fn[3]
            return case
        return None

    def _first_use(self, fn, name: str) -> int | None:
        row = self.con.execute("""SELECT min(c.line) FROM calls c JOIN files f USING (file_id)
                                  WHERE f.path = $p AND c.caller_qualname = $q AND c.callee_text = $n""",
                               {"p": fn[2], "q": fn[0], "n": name}).fetchone()
        return row[0] if row else None

    def near_miss_member(self, fn) -> Case | None:
        qualname, module, path, first, last = fn
        lines = self.lines(path)
        rows = self.con.execute("""
            SELECT c.line, c.col, c.callee_text, c.resolved_callee FROM calls c JOIN files f USING (file_id)
            WHERE f.path = $p AND c.caller_qualname = $q AND c.resolution = 'self'
              AND c.callee_text LIKE 'self.%' ORDER BY c.line""", {"p": path, "q": qualname}).fetchall()
        for line, col, text, truth in rows:
            member = text.split(".", 1)[1]
            bad = typo(member, self.rng, self.taken)
            original = lines[line - 1]
            if bad is None or original[col : col + len(text)] != text:
                continue
            mutated = original[:col] + f"self.{bad}" + original[col + len(text) :]
            return self._case("near-miss-member", fn, line, original, mutated, truth, lines)
        return None

    def _call_sites(self, fn):
        qualname, module, path, first, last = fn
        return self.con.execute("""
            SELECT c.line, c.col, c.callee_text, c.resolved_callee, s.kind, s.id FROM calls c
            JOIN files f USING (file_id) JOIN symbols s ON s.qualname = c.resolved_callee
            WHERE f.path = $p AND c.caller_qualname = $q AND c.resolution IN ('local', 'import', 'self')
              AND s.kind IN ('function', 'method', 'staticmethod', 'classmethod', 'class')
            ORDER BY c.line, c.col""", {"p": path, "q": qualname}).fetchall()

    def _params(self, kind: str, owner_id: int, qualname: str) -> tuple[str, list[tuple]] | None:
        if kind == "class":
            row = self.con.execute("SELECT qualname FROM members_of($c) WHERE name = '__init__' AND class = $c",
                                   {"c": qualname}).fetchone()
            if row is None:
                return None
            qualname = row[0]
            owner = self.con.execute("SELECT id FROM symbols WHERE qualname = $q", {"q": qualname}).fetchone()
            if owner is None:  # inherited from a library class: not the project's to misuse
                return None
            owner_id, kind = owner[0], "method"
        params = self.con.execute("""SELECT name, kind, default_value FROM parameters WHERE owner_id = $o
                                     ORDER BY position""", {"o": owner_id}).fetchall()
        if kind in ("method", "classmethod") and params:
            params = params[1:]
        return qualname, params

    def _argument_list(self, lines: list[str], line: int, col: int):
        tree = _PARSER.parse("\n".join(lines).encode())
        node = tree.root_node.descendant_for_point_range((line - 1, col), (line - 1, col))
        while node is not None and node.type != "call":
            node = node.parent
        if node is None or node.start_point != (line - 1, col):
            return None, None
        return node, node.child_by_field_name("arguments")

    def api_error(self, fn, category: str) -> Case | None:
        qualname, module, path, first, last = fn
        lines = self.lines(path)
        for line, col, text, callee, kind, owner_id in self._call_sites(fn):
            found = self._params(kind, owner_id, callee)
            if found is None:
                continue
            truth, params = found
            call, args = self._argument_list(lines, line, col)
            if args is None or args.type != "argument_list" or call.end_point[0] != call.start_point[0]:
                continue  # single-line calls only: the edit stays on one line
            items = [a for a in args.named_children if a.type != "comment"]
            if any(a.type in ("list_splat", "dictionary_splat", "parenthesized_list_splat") for a in items):
                continue
            positional = [a for a in items if a.type != "keyword_argument"]
            keywords = [a for a in items if a.type == "keyword_argument"]
            kinds = [p[1] for p in params]
            pos_params = [p for p in params if p[1] in ("positional", "positional-only")]
            required = [p for p in pos_params if p[2] is None]
            original = lines[line - 1]
            row = line - 1
            if category == "dropped-argument":
                if keywords or not positional or len(positional) != len(required) or len(required) != len(pos_params):
                    continue
                if "var-positional" in kinds or any(a.start_point[0] != row for a in positional):
                    continue
                keep = positional[:-1]
                end = keep[-1].end_point[1] if keep else args.start_point[1] + 1
                mutated = original[:end] + original[args.end_point[1] - 1 :]
            elif category == "extra-argument":
                if "var-positional" in kinds or len(positional) != len(pos_params) or keywords:
                    continue
                close = args.end_point[1] - 1
                sep = ", " if positional else ""
                mutated = original[:close] + f"{sep}None" + original[close:]
            else:  # misspelt-keyword
                if "var-keyword" in kinds or not keywords:
                    continue
                kw = keywords[0].child_by_field_name("name")
                bad = typo(kw.text.decode(), self.rng, self.taken) if kw is not None else None
                if bad is None or kw.start_point[0] != row:
                    continue
                mutated = original[: kw.start_point[1]] + bad + original[kw.end_point[1] :]
            if mutated == original:
                continue
            return self._case(category, fn, line, original, mutated, truth, lines)
        return None

    def generate(self, per_category: int) -> list[Case]:
        functions = self._functions()
        self.rng.shuffle(functions)
        makers = {
            "wrong-imported-name": self.wrong_imported_name,
            "near-miss-member": self.near_miss_member,
            "missing-import": self.missing_import,
            "dropped-argument": lambda fn: self.api_error(fn, "dropped-argument"),
            "extra-argument": lambda fn: self.api_error(fn, "extra-argument"),
            "misspelt-keyword": lambda fn: self.api_error(fn, "misspelt-keyword"),
            "wrong-module-path": self.wrong_module_path,
        }
        cases: list[Case] = []
        for category, make in makers.items():
            made = 0
            used_files: dict[str, int] = {}
            for fn in functions:
                if made >= per_category:
                    break
                if used_files.get(fn[2], 0) >= 2:  # spread cases over many files
                    continue
                try:
                    case = make(fn)
                except (UnicodeDecodeError, OSError):
                    case = None
                if case is not None:
                    cases.append(case)
                    made += 1
                    used_files[fn[2]] = used_files.get(fn[2], 0) + 1
        return cases

"""Realistic mistakes, the kinds real models make (not typos), injected into real functions.

What models get wrong in project code (issue 13's study of real generations): they invent a
plausible name instead of the project's one (`fetch_user` for `get_user_by_id`), call a method
on an object the class does not have (`self.items.append(x)` where the class has
`self._append_item`), forget `self.`, use a name without importing it, use a keyword that means
the same but is not the parameter's name, or leave the body a stub. Each kind is generated from
the graph and the project's own code, deterministically for a seed; no LLM.

Every invented name is checked not to be a spelling neighbour of the real one (Jaro-Winkler
below 0.85, DuckDB's own function), and not to exist in the project.
"""

from __future__ import annotations

import re

from benchmarks.hallucinations import Case, Generator, _body_insert_line, _indent

REALISTIC = {
    "invented-member": ("no-member",),
    "invented-function": ("undefined-variable",),
    "wrong-object": ("no-member",),
    "missing-self": ("undefined-variable",),
    "missing-import": ("undefined-variable",),
    "stdlib-without-import": ("undefined-variable",),
    "synonym-keyword": ("unexpected-keyword-arg",),
    "stub-body": (),
}

# Words a model swaps for one another: same meaning, different spelling (hand-written).
SYNONYMS = {
    "get": ["fetch", "retrieve", "obtain", "load"], "set": ["assign", "store", "update"],
    "add": ["append", "insert", "push"], "remove": ["delete", "drop", "discard"], "delete": ["remove", "drop"],
    "make": ["create", "build"], "create": ["make", "build", "construct"], "build": ["make", "create"],
    "find": ["search", "lookup", "locate"], "check": ["verify", "validate", "ensure"],
    "validate": ["check", "verify"], "parse": ["decode", "read"], "format": ["render", "stringify"],
    "compute": ["calculate"], "calc": ["compute"], "run": ["execute"], "call": ["invoke"], "start": ["begin"],
    "stop": ["halt", "end"], "write": ["save", "dump"], "read": ["load"], "load": ["read"], "dump": ["write"],
    "update": ["refresh", "modify"], "value": ["amount"], "name": ["label", "title"], "path": ["location"],
    "size": ["length"], "item": ["entry", "element"], "items": ["entries", "elements"], "data": ["payload"],
    "text": ["content"], "error": ["failure"], "to": ["as"], "is": ["has"], "has": ["contains"],
    "convert": ["transform"], "apply": ["use"], "handle": ["process"], "process": ["handle"],
    "list": ["sequence"], "dict": ["mapping"], "key": ["field"], "init": ["setup"], "reset": ["clear"],
    "clear": ["reset"], "next": ["following"], "first": ["initial"], "last": ["final"], "count": ["tally"],
    "encode": ["serialize"], "decode": ["deserialize"], "join": ["combine"], "split": ["divide"],
    "iter": ["walk"], "new": ["fresh"], "copy": ["clone"], "sort": ["order"], "filter": ["select"],
    "match": ["fit"], "option": ["setting"], "options": ["settings"], "config": ["settings"],
    "default": ["fallback"], "callback": ["handler"], "func": ["function"], "fn": ["function"],
    "timeout": ["time_limit"], "prefix": ["start"], "suffix": ["ending"], "sep": ["separator"],
    "width": ["columns"], "strict": ["exact"], "silent": ["quiet"], "verbose": ["chatty"],
    "encoding": ["charset"], "errors": ["on_error"], "flags": ["options"], "pattern": ["regex"],
}
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


class RealisticGenerator(Generator):
    def _case(self, category, fn, line_no, original, mutated, truth, lines, insert=False) -> Case:
        case = super()._case("missing-import" if category == "missing-import" else "near-miss-member", fn, line_no,
                             original, mutated, truth, lines, insert)
        case.category, case.expected_symbols = category, REALISTIC[category]
        case.id = f"{self.corpus}:{category}:{fn[0]}:{line_no}"
        return case

    def _jaro(self, a: str, b: str) -> float:
        return self.con.execute("SELECT jaro_winkler_similarity(lower($a), lower($b))", {"a": a, "b": b}).fetchone()[0]

    def invent(self, name: str) -> str | None:
        """A plausible other name for `name`: a part swapped for a synonym, trailing qualifiers
        (`_by_id`, `_or_none`) dropped; never a spelling neighbour, never a name the project has."""
        core = name.lstrip("_")
        prefix = name[: len(name) - len(core)]
        parts = [p.lower() for chunk in core.split("_") for p in _PART.findall(chunk)]
        if not parts:
            return None
        options = []
        for i, part in enumerate(parts):
            for synonym in SYNONYMS.get(part, []):
                new = parts[:i] + [synonym] + parts[i + 1:]
                options.append(new)
                if len(new) > 2:
                    options.append(new[:2])  # `fetch_user` for `get_user_by_id`
        self.rng.shuffle(options)
        for option in options:
            candidate = prefix + "_".join(option)
            if candidate.isidentifier() and candidate not in self.taken and self._jaro(candidate, name) < 0.85:
                return candidate
        return None

    def _self_calls(self, fn):
        qualname, module, path, first, last = fn
        return self.con.execute("""
            SELECT c.line, c.col, c.callee_text, c.resolved_callee, s.class_qualname FROM calls c
            JOIN files f USING (file_id) JOIN symbols s ON s.qualname = c.resolved_callee
            WHERE f.path = $p AND c.caller_qualname = $q AND c.resolution = 'self' AND c.callee_text LIKE 'self.%'
              AND s.kind IN ('method', 'classmethod', 'staticmethod')
            ORDER BY c.line""", {"p": path, "q": qualname}).fetchall()

    def invented_member(self, fn) -> Case | None:
        lines = self.lines(fn[2])
        for line, col, text, truth, _cls in self._self_calls(fn):
            member = text.split(".", 1)[1]
            bad = self.invent(member)
            original = lines[line - 1]
            if bad is None or original[col: col + len(text)] != text:
                continue
            mutated = original[:col] + f"self.{bad}" + original[col + len(text):]
            return self._case("invented-member", fn, line, original, mutated, truth, lines)
        return None

    def wrong_object(self, fn) -> Case | None:
        """`self._append_item(x)` -> `self.items.append(x)`: the verb on an invented attribute."""
        lines = self.lines(fn[2])
        for line, col, text, truth, cls in self._self_calls(fn):
            member = text.split(".", 1)[1]
            parts = [p.lower() for chunk in member.lstrip("_").split("_") for p in _PART.findall(chunk)]
            if len(parts) < 2:
                continue
            verb, noun = parts[0], "_".join(parts[1:])
            noun = noun if noun.endswith("s") else noun + "s"
            members = {r[0] for r in self.con.execute("SELECT name FROM members_of($c)", {"c": cls}).fetchall()}
            original = lines[line - 1]
            if noun in members or not noun.isidentifier() or original[col: col + len(text)] != text:
                continue
            mutated = original[:col] + f"self.{noun}.{verb}" + original[col + len(text):]
            return self._case("wrong-object", fn, line, original, mutated, truth, lines)
        return None

    def missing_self(self, fn) -> Case | None:
        lines = self.lines(fn[2])
        module_names = {r[0] for r in self.con.execute(
            "SELECT name FROM symbols WHERE module = $m AND class_qualname IS NULL", {"m": fn[1]}).fetchall()}
        for line, col, text, truth, _cls in self._self_calls(fn):
            member = text.split(".", 1)[1]
            original = lines[line - 1]
            if member in module_names or member in dir(__builtins__) or original[col: col + len(text)] != text:
                continue
            mutated = original[:col] + member + original[col + len(text):]
            return self._case("missing-self", fn, line, original, mutated, truth, lines)
        return None

    def invented_function(self, fn) -> Case | None:
        qualname, module, path, first, last = fn
        lines = self.lines(path)
        rows = self.con.execute("""
            SELECT c.line, c.col, c.callee_text, c.resolved_callee FROM calls c JOIN files f USING (file_id)
            JOIN symbols s ON s.qualname = c.resolved_callee
            WHERE f.path = $p AND c.caller_qualname = $q AND c.resolution IN ('local', 'import')
              AND c.callee_text = c.callee_name AND s.kind = 'function' ORDER BY c.line""",
                                {"p": path, "q": qualname}).fetchall()
        for line, col, text, truth in rows:
            bad = self.invent(text)
            original = lines[line - 1]
            if bad is None or original[col: col + len(text)] != text:
                continue
            mutated = original[:col] + bad + original[col + len(text):]
            return self._case("invented-function", fn, line, original, mutated, truth, lines)
        return None

    def stdlib_without_import(self, fn) -> Case | None:
        """A module-level `import json` removed while the function calls `json.loads(...)`."""
        qualname, module, path, first, last = fn
        lines = self.lines(path)
        rows = self.con.execute("""
            SELECT i.line, i.bound_name, c.resolved_callee, c.line FROM imports i
            JOIN calls c ON c.file_id = i.file_id AND c.caller_qualname = $q
                        AND starts_with(c.callee_text, i.bound_name || '.') AND c.resolution IN ('external', 'library')
            WHERE i.module = $m AND i.scope_qualname = $m AND i.name IS NULL AND i.alias IS NULL
              AND i.imported_module NOT IN (SELECT qualname FROM modules) AND NOT contains(i.imported_module, '.')
            ORDER BY c.line""", {"q": qualname, "m": module}).fetchall()
        for import_line, bound, truth, use_line in rows:
            original = lines[import_line - 1]
            if original.strip() != f"import {bound}":
                continue
            case = self._case("stdlib-without-import", fn, import_line, original, f"{_indent(original)}pass", truth, lines)
            case.mutated_line = use_line
            return case
        return None

    def synonym_keyword(self, fn) -> Case | None:
        qualname, module, path, first, last = fn
        lines = self.lines(path)
        for line, col, text, callee, kind, owner_id in self._call_sites(fn):
            found = self._params(kind, owner_id, callee)
            if found is None:
                continue
            truth, params = found
            if any(p[1] == "var-keyword" for p in params):
                continue
            call, args = self._argument_list(lines, line, col)
            if args is None or call.end_point[0] != call.start_point[0]:
                continue
            for kw in (a for a in args.named_children if a.type == "keyword_argument"):
                name = kw.child_by_field_name("name")
                word = name.text.decode() if name is not None else ""
                bad = self.invent(word)
                original = lines[line - 1]
                if bad is None or bad in {p[0] for p in params} or name.start_point[0] != line - 1:
                    continue
                mutated = original[: name.start_point[1]] + bad + original[name.end_point[1]:]
                return self._case("synonym-keyword", fn, line, original, mutated, truth, lines)
        return None

    def stub_body(self, fn) -> Case | None:
        lines = self.lines(fn[2])
        at = _body_insert_line(lines, fn[3], fn[4])
        if at is None:
            return None
        indent = _indent(lines[at - 1])
        body = [f"{indent}raise NotImplementedError"]
        new = lines[: at - 1] + body + lines[fn[4]:]
        case = Case(f"{self.corpus}:stub-body:{fn[0]}:{at}", self.corpus, "stub-body", fn[2], fn[1], fn[0], fn[3], at,
                    at, (), fn[0], lines[at - 1], body[0], "\n".join(new))
        return case

    def generate_realistic(self, per_category: int) -> list[Case]:
        functions = self._functions()
        self.rng.shuffle(functions)
        makers = {"invented-member": self.invented_member, "invented-function": self.invented_function,
                  "wrong-object": self.wrong_object, "missing-self": self.missing_self,
                  "missing-import": self.missing_import, "stdlib-without-import": self.stdlib_without_import,
                  "synonym-keyword": self.synonym_keyword, "stub-body": self.stub_body}
        cases: list[Case] = []
        for category, make in makers.items():
            made, used_files = 0, {}
            for fn in functions:
                if made >= per_category:
                    break
                if used_files.get(fn[2], 0) >= 2:
                    continue
                try:
                    case = make(fn)
                except (UnicodeDecodeError, OSError):
                    case = None
                if case is not None:
                    case.category = category
                    case.expected_symbols = REALISTIC[category]
                    cases.append(case)
                    made += 1
                    used_files[fn[2]] = used_files.get(fn[2], 0) + 1
        return cases

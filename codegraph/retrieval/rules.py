"""The rule table: a pylint symbol -> a named SQL template and how to fill its parameters.

Rules are data. Each one reads what it needs from the message text and, where the message does
not name the culprit (API and object errors), from the candidate's code at the message's line
and column. A rule that cannot fill its parameters returns None and the LLM fallback takes over.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Callable

from .candidate import Candidate, GraphNames, resolve_in_candidate
from .lint import Diagnostic


@dataclass
class RuleContext:
    candidate: Candidate
    graph: GraphNames


Params = Callable[[Diagnostic, RuleContext], "dict | None"]


@dataclass(frozen=True)
class Rule:
    symbol: str
    template: str | None  # None: answered from the candidate itself, no SQL
    params: Params
    finds: str

    def sql(self) -> str | None:
        return load_template(self.template) if self.template else None


def load_template(name: str) -> str:
    return resources.files("codegraph.queries").joinpath(f"{name}.sql").read_text(encoding="utf-8")


def template_names() -> list[str]:
    return sorted(p.name[:-4] for p in resources.files("codegraph.queries").iterdir() if p.name.endswith(".sql"))


def _match(pattern: str, text: str) -> re.Match | None:
    return re.search(pattern, text)


def _import_error(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"Unable to import '([^']+)'", d.message)
    if not m:
        return None
    module = m.group(1).lstrip(".")
    return {"module": module, "last": module.rpartition(".")[2]}


def _no_name(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"No name '([^']+)' in module '([^']+)'", d.message)
    return {"name": m.group(1), "module": m.group(2)} if m else None


_NO_MEMBER = r"(Instance of|Class|Module) '([^']+)' has no '([^']+)' member"


def _no_member_on_module(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(_NO_MEMBER, d.message)
    if not m or m.group(1) != "Module":
        return None
    return {"module": m.group(2), "name": m.group(3)}


def _no_member_on_class(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(_NO_MEMBER, d.message)
    if not m or m.group(1) == "Module":
        return None
    owner, name = m.group(2), m.group(3)
    cand = ctx.candidate
    qualname = None
    klass = cand.enclosing_class(d.line)
    if klass and klass.rpartition(".")[2] == owner:
        qualname = klass if ctx.graph.kind(klass) == "class" else None
        if qualname is None:  # a new class: look in its bases
            for base in cand.bases_of(klass):
                base_q = resolve_in_candidate(ctx.graph, cand, base, d.line)
                if base_q:
                    qualname = base_q
                    break
    if qualname is None:
        qualname = resolve_in_candidate(ctx.graph, cand, owner, d.line)
    local = sorted(cand.own_members(klass)) if klass and klass.rpartition(".")[2] == owner else []
    return {"owner": qualname or owner, "name": name, "local": local}


def _undefined(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"(?:Undefined variable|Using variable) '([^']+)'", d.message)
    return {"name": m.group(1), "module": ctx.candidate.module} if m else None


def _callee(d: Diagnostic, ctx: RuleContext) -> dict | None:
    cand = ctx.candidate
    text = cand.call_at(d.line, d.column, d.end_line)
    if text is None:
        m = _match(r"but '([^']+)' returns None", d.message)
        text = m.group(1) if m else None
    if text is None:
        return None
    qualname = resolve_in_candidate(ctx.graph, cand, text, d.line)
    if qualname is None:
        return None
    if ctx.graph.kind(qualname) == "class":
        qualname = ctx.graph.member(qualname, "__init__") or qualname
    return {"qualname": qualname}


def _callee_by_name(d: Diagnostic, ctx: RuleContext) -> dict | None:
    text = ctx.candidate.call_at(d.line, d.column, d.end_line)
    m = _match(r"but '([^']+)' returns None", d.message)
    name = m.group(1) if m else (text.rpartition(".")[2] if text else None)
    if not name or not name.isidentifier():
        return None
    return {"name": name, "module": ctx.candidate.module}


_OBJECT_PATTERNS = {
    "not-callable": r"^(.+) is not callable",
    "unsubscriptable-object": r"^Value '(.+)' is unsubscriptable",
    "not-an-iterable": r"^Non-iterable value (.+) is used in an iterating context",
    "unsupported-membership-test": r"^Value '(.+)' doesn't support membership test",
    "not-a-mapping": r"^Non-mapping value (.+) is used in a mapping context",
}


def _object(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(_OBJECT_PATTERNS[d.symbol], d.message)
    if not m:
        return None
    expression = m.group(1).strip()
    if expression.endswith("()"):
        expression = expression[:-2]
    qualname = resolve_in_candidate(ctx.graph, ctx.candidate, expression, d.line)
    return {"qualname": qualname} if qualname else None


def _object_by_name(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(_OBJECT_PATTERNS[d.symbol], d.message)
    if not m:
        return None
    name = m.group(1).strip().removesuffix("()").rpartition(".")[2]
    return {"name": name, "module": ctx.candidate.module} if name.isidentifier() else None


def _redefined(d: Diagnostic, ctx: RuleContext) -> dict | None:
    cand = ctx.candidate
    for table, scope_column in (("members", "class_qualname"), ("classes", "scope_qualname"), ("globals", "module")):
        for row in cand.rows(table):
            if row.start_line <= d.line <= row.start_line + 3 and row.name in cand.lines[d.line - 1]:
                return {"scope": getattr(row, scope_column), "name": row.name}
    return None


def _local(d: Diagnostic, ctx: RuleContext) -> dict | None:
    return {"line": d.line}


RULES: tuple[Rule, ...] = (
    Rule("import-error", "import_error", _import_error,
         "modules whose name is nearest the missing one; definitions named like its last part"),
    Rule("no-name-in-module", "names_in_module_like", _no_name,
         "what the module really offers, nearest name first; where the name is really defined"),
    Rule("no-member", "names_in_module_like", _no_member_on_module,
         "(Module form) what the module really offers, nearest name first"),
    Rule("no-member", "members_like", _no_member_on_class,
         "(Instance/Class form) the class's members, inherited ones included, nearest first"),
    Rule("undefined-variable", "undefined_name", _undefined,
         "where the name is defined with the import to use; near-miss names, local ones first"),
    Rule("used-before-assignment", "undefined_name", _undefined,
         "as undefined-variable"),
    *(rule for symbol in ("no-value-for-parameter", "too-many-function-args", "unexpected-keyword-arg",
                          "redundant-keyword-arg", "missing-kwoa", "assignment-from-no-return",
                          "assignment-from-none")
      for rule in (
          Rule(symbol, "callee", _callee,
               "the called definition (constructor for classes): signature, parameters, short source"),
          Rule(symbol, "named_definitions", _callee_by_name,
               "when the callee's owner is unknown: every definition of that name"),
      )),
    *(rule for symbol in _OBJECT_PATTERNS
      for rule in (
          Rule(symbol, "definition", _object, "what the expression really is: kind, signature, value"),
          Rule(symbol, "named_definitions", _object_by_name,
               "when the expression's owner is unknown: every definition of that name"),
      )),
    Rule("function-redefined", "same_name_in_scope", _redefined,
         "the definitions of that name already in the module or class"),
    Rule("syntax-error", None, _local, "the candidate's lines around the error (no SQL)"),
)


def rules_for(symbol: str) -> list[Rule]:
    return [r for r in RULES if r.symbol == symbol]


def rules_markdown() -> str:
    from .lint import CATEGORIES

    out = ["# Rules: pylint messages to SQL", "",
           "<!-- generated by `python -m codegraph.docgen docs/` from codegraph/retrieval/rules.py; do not edit -->",
           "", "Each diagnostic on the candidate's lines is looked up here. A rule fills its template's",
           "`$parameters` from the message and, where the message does not name the culprit, from the",
           "candidate's code at the message's line and column. Messages no rule covers, and rules that",
           "cannot fill their parameters, go to the LLM fallback; then to lexical search.", "",
           "| symbol | category | template | finds |", "|---|---|---|---|"]
    for rule in RULES:
        template = f"`queries/{rule.template}.sql`" if rule.template else "(local)"
        out.append(f"| `{rule.symbol}` | {CATEGORIES.get(rule.symbol, 'OTHER')} | {template} | {rule.finds} |")
    return "\n".join(out) + "\n"

"""Python's rule table: a pylint symbol -> a named SQL template (codegraph/queries), how to fill
its parameters, and what the offline generator repairs with the best row (repairs.py).

Rules are data. Each one reads what it needs from the message text and, where the message does
not name the culprit (API and object errors), from the candidate's code at the message's line
and column. A rule that cannot fill its parameters returns None and the next one, then the LLM
fallback, takes over.
"""

from __future__ import annotations

import re

from .repairs import keyword as repair_keyword, member as repair_member, module as repair_module
from .repairs import name_in_module as repair_name_in_module, not_callable as repair_not_callable
from .repairs import undefined as repair_undefined
from ..checks import Diagnostic, Rule, RuleContext


def resolve_in_candidate(graph, cand, text: str, line: int) -> str | None:
    """The qualname in the graph that a dotted expression of the candidate names, if any (`graph`:
    retrieval.candidate.GraphNames, `cand`: its Candidate)."""
    if not text or not all(part.isidentifier() for part in text.split(".")):
        if text and text.startswith("super()."):
            klass = cand.enclosing_class(line)
            name = text.split(".", 1)[1]
            for base in cand.bases_of(klass) if klass else []:
                base_q = resolve_in_candidate(graph, cand, base, line)
                found = graph.member(base_q, name) if base_q else None
                if found:
                    return found
        return None
    head, _, rest = text.partition(".")
    if head in ("self", "cls") and rest:
        klass = cand.enclosing_class(line)
        if klass is None:
            return None
        name = rest.split(".")[0]
        if graph.kind(klass) == "class" and name not in cand.own_members(klass):
            found = graph.member(klass, name)
            if found:
                return found
        if name in cand.own_members(klass):
            return f"{klass}.{name}"
        for base in cand.bases_of(klass):
            base_q = resolve_in_candidate(graph, cand, base, line)
            found = graph.member(base_q, name) if base_q else None
            if found:
                return found
        return None
    target = cand.binding(head, line) or cand.local_definition(head)
    if target is None:
        return None
    return graph.canonical(f"{target}.{rest}" if rest else target)


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
    own = klass is not None and klass.rpartition(".")[2] == owner
    local = sorted(cand.own_members(klass)) if own else []
    return {"owner": qualname or owner, "name": name, "local": local,
            "forgotten": _forgotten_bases(ctx, klass, d.line) if own else []}


def _forgotten_bases(ctx: RuleContext, klass: str, line: int) -> list[dict]:
    """The bases the candidate's other classes derive from and `klass` does not list (resolved
    in the graph): `class LoopsTests:` among TestCase classes may have forgotten TestCase."""
    cand = ctx.candidate
    resolved: dict[str, str | None] = {}  # each base as written, resolved once (a file may have thousands)

    def resolve(base: str) -> str | None:
        if base not in resolved and len(resolved) < _MAX_BASES:
            found = resolve_in_candidate(ctx.graph, cand, base, line)
            resolved[base] = found if found and ctx.graph.kind(found) == "class" else None
        return resolved.get(base)

    own = {resolve(base) for base in cand.bases_of(klass)}
    found: dict[str, str] = {}
    for row in sorted(cand.rows("classes"), key=lambda r: r.start_line):
        for base in cand.bases_of(row.qualname) if row.qualname != klass else ():
            qualname = resolve(base)
            if qualname and qualname not in own and qualname != "builtins.object":
                found.setdefault(qualname, row.qualname)
    return [{"base": base, "user_class": user} for base, user in found.items()]


_MAX_BASES = 64


def _undefined(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"(?:Undefined variable|Using variable|Possibly using variable) '([^']+)'", d.message)
    if not m:
        return None
    function = ctx.candidate.enclosing_function(d.line) or ""
    return {"name": m.group(1), "module": ctx.candidate.module, "owner": _class_of(d, ctx) or "",
            "function": function, "local": ctx.candidate.names_bound_in(function)}


def _callee(d: Diagnostic, ctx: RuleContext) -> dict | None:
    cand = ctx.candidate
    text = cand.call_at(d.line, d.column, d.end_line, d.end_column)
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
    text = ctx.candidate.call_at(d.line, d.column, d.end_line, d.end_column)
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
    "not-context-manager": r"^Context manager '(.+)' doesn't implement",
    "not-async-context-manager": r"^Async context manager '(.+)' doesn't implement",
    "async-context-manager-with-regular-with": r"^Context manager '(.+)' is async",
    "unsupported-assignment-operation": r"^'?(.+?)'? does not support item assignment",
    "unsupported-delete-operation": r"^'?(.+?)'? does not support item deletion",
}

# Messages about the candidate's own code, where the graph has nothing to add: the candidate's
# lines around the message are the context (no SQL).
LOCAL_ONLY = (
    "syntax-error", "init-is-generator", "return-in-init", "not-in-loop", "return-outside-function",
    "yield-outside-function", "return-arg-in-generator", "nonexistent-operator", "duplicate-argument-name",
    "bad-reversed-sequence", "too-many-star-expressions", "invalid-star-assignment-target",
    "star-needs-assignment-target", "nonlocal-and-global", "nonlocal-without-binding", "used-prior-global-declaration",
    "misplaced-format-function", "invalid-slots-object", "assigning-non-slot", "invalid-slots", "inconsistent-mro",
    "duplicate-bases", "class-variable-slots-conflict", "invalid-class-object", "invalid-enum-extension",
    "declare-non-slot", "non-iterator-returned", "unexpected-special-method-signature", "invalid-length-returned",
    "invalid-bool-returned", "invalid-index-returned", "invalid-repr-returned", "invalid-str-returned",
    "invalid-bytes-returned", "invalid-hash-returned", "invalid-length-hint-returned", "invalid-format-returned",
    "invalid-getnewargs-returned", "invalid-getnewargs-ex-returned", "relative-beyond-top-level",
    "invalid-all-object", "invalid-all-format", "unpacking-non-sequence", "potential-index-error", "bad-except-order",
    "raising-bad-type", "misplaced-bare-raise", "bad-exception-cause", "notimplemented-raised",
    "invalid-sequence-index", "invalid-slice-index", "invalid-unary-operand-type", "unsupported-binary-operation",
    "repeated-keyword", "invalid-metaclass", "dict-iter-missing-items", "await-outside-async", "unhashable-member",
    "invalid-slice-step", "logging-unsupported-format", "logging-format-truncated", "logging-too-many-args",
    "logging-too-few-args", "bad-format-character", "truncated-format-string", "mixed-format-string",
    "format-needs-mapping", "missing-format-string-key", "too-many-format-args", "too-few-format-args",
    "bad-string-format-type", "bad-str-strip-call", "invalid-envvar-value", "singledispatch-method",
    "singledispatchmethod-function", "yield-inside-async-function", "bare-name-capture-pattern",
    "invalid-match-args-definition", "too-many-positional-sub-patterns", "multiple-class-sub-patterns",
    "invalid-unicode-codec", "bidirectional-unicode", "invalid-character-backspace",
    "invalid-character-carriage-return", "invalid-character-sub", "invalid-character-esc", "invalid-character-nul",
    "invalid-character-zero-width-space", "invalid-field-call", "modified-iterating-dict", "modified-iterating-set",
)
# pylint messages about its own configuration, not about code: no rule can help.
NOT_ABOUT_CODE = ("unrecognized-inline-option", "bad-plugin-value", "bad-configuration-section", "unrecognized-option")


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


def _class_of(d: Diagnostic, ctx: RuleContext) -> str | None:
    """The class around the diagnostic: its graph qualname, or for a class the graph does not
    know yet (being written), its first resolvable base."""
    cand = ctx.candidate
    klass = cand.enclosing_class(d.line)
    if klass is None:
        return None
    if ctx.graph.kind(klass) == "class":
        return klass
    for base in cand.bases_of(klass):
        resolved = resolve_in_candidate(ctx.graph, cand, base, d.line)
        if resolved and ctx.graph.kind(resolved) == "class":
            return resolved
    return None


def _enclosing_class(d: Diagnostic, ctx: RuleContext) -> dict | None:
    owner = _class_of(d, ctx)
    return {"owner": owner, "name": ""} if owner else None


def _defined_name(d: Diagnostic, ctx: RuleContext) -> str | None:
    line = ctx.candidate.line_at(d.line)
    m = re.search(r"\b(?:def|class)\s+(\w+)", line)
    return m.group(1) if m else None


def _method_hidden(d: Diagnostic, ctx: RuleContext) -> dict | None:
    owner, name = _class_of(d, ctx), _defined_name(d, ctx)
    return {"scope": owner, "name": name} if owner and name else None


def _access_before_definition(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"Access to member '([^']+)'", d.message)
    owner = _class_of(d, ctx)
    if not (m and owner):
        return None
    klass = ctx.candidate.enclosing_class(d.line)
    return {"owner": owner, "name": m.group(1), "local": sorted(ctx.candidate.own_members(klass)) if klass else [],
            "forgotten": []}


def _expression_at(d: Diagnostic, ctx: RuleContext) -> str | None:
    line = ctx.candidate.line_at(d.line)
    m = re.match(r"[A-Za-z_][\w.]*", line[d.column:]) if d.column is not None else None
    return m.group(0) if m else None


def _no_member_on_function(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """"Method 'items' has no 'pop' member": the owner is a function or method (often one the
    code forgot to call): what it really is."""
    m = _match(r"(?:Method|Function|Bound method) '([^']+)' has no '([^']+)' member", d.message)
    if not m:
        return None
    expression = _expression_at(d, ctx) or ""
    owner_text = expression.rsplit("." + m.group(2), 1)[0] if ("." + m.group(2)) in expression else None
    qualname = resolve_in_candidate(ctx.graph, ctx.candidate, owner_text, d.line) if owner_text else None
    return {"qualname": qualname} if qualname else None


def _no_member_on_function_by_name(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"(?:Method|Function|Bound method) '([^']+)' has no '([^']+)' member", d.message)
    return {"name": m.group(1), "module": ctx.candidate.module} if m else None


def _abstract(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"Abstract class '([^']+)'", d.message)
    if not m:
        return None
    qualname = resolve_in_candidate(ctx.graph, ctx.candidate, m.group(1), d.line)
    return {"name": qualname or m.group(1)}


def _named_class(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"Inheriting '([^']+)'", d.message)
    return {"name": m.group(1).rpartition(".")[2], "module": ctx.candidate.module, "owner": "",
            "function": "", "local": []} if m else None


def _exception(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"(?:Catching an exception which doesn't inherit from Exception|Raising): ?'?([\w.]+)", d.message)
    name = m.group(1) if m else None
    if name is None:
        line = ctx.candidate.line_at(d.line)
        found = re.search(r"\b(?:raise|except)\s+\(?([A-Za-z_][\w.]*)", line)
        name = found.group(1) if found else ""
    return {"name": name.rpartition(".")[2]}


def _all_variable(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = _match(r"Undefined variable name '([^']+)' in __all__", d.message)
    return {"name": m.group(1), "module": ctx.candidate.module} if m else None


def _class_definition(d: Diagnostic, ctx: RuleContext) -> dict | None:
    owner = _class_of(d, ctx)
    return {"qualname": owner} if owner else None


RULES: tuple[Rule, ...] = (
    Rule("import-error", "import_error", _import_error,
         "modules whose name is nearest the missing one; definitions named like its last part", repair_module),
    Rule("no-name-in-module", "names_in_module_like", _no_name,
         "what the module really offers, nearest name first; where the name is really defined", repair_name_in_module),
    Rule("no-member", "names_in_module_like", _no_member_on_module,
         "(Module form) what the module really offers, nearest name first", repair_member),
    Rule("no-member", "members_like", _no_member_on_class,
         "(Instance/Class form) the class's members, inherited ones included, nearest first", repair_member),
    Rule("no-member", "definition", _no_member_on_function,
         "(Method/Function form) what the owner really is: its kind, signature and return annotation", repair_member),
    Rule("no-member", "named_definitions", _no_member_on_function_by_name,
         "(Method/Function form, owner unresolved) every definition of the owner's name", repair_member),
    Rule("undefined-variable", "undefined_name", _undefined,
         "where the name is defined with the import to use; near-miss names, local ones first", repair_undefined),
    Rule("used-before-assignment", "undefined_name", _undefined,
         "as undefined-variable", repair_undefined),
    Rule("possibly-used-before-assignment", "undefined_name", _undefined,
         "as undefined-variable"),
    Rule("undefined-all-variable", "names_in_module_like", _all_variable,
         "what the module really defines, nearest the name in __all__ first"),
    *(rule for symbol in ("no-self-argument", "no-method-argument", "bad-super-call") for rule in (
        Rule(symbol, "class_members", _enclosing_class,
             "the enclosing class's members, inherited ones included: how its methods are written"),
        Rule(symbol, None, _local, "(a class the graph does not know) the candidate's lines around the message"))),
    Rule("method-hidden", "same_name_in_scope", _method_hidden,
         "the attribute or method of that name already in the class"),
    Rule("access-member-before-definition", "members_like", _access_before_definition,
         "the class's members, nearest the accessed name first"),
    Rule("abstract-class-instantiated", "subclasses", _abstract,
         "the concrete subclasses to instantiate instead"),
    Rule("inherit-non-class", "undefined_name", _named_class,
         "the classes whose name is nearest the base that is not one"),
    *(Rule(symbol, "exception_classes", _exception,
           "the project's exception classes, nearest name first")
      for symbol in ("raising-non-exception", "catching-non-exception")),
    *(rule for symbol in ("no-value-for-parameter", "too-many-function-args", "unexpected-keyword-arg",
                          "redundant-keyword-arg", "missing-kwoa", "assignment-from-no-return",
                          "assignment-from-none", "positional-only-arguments-expected")
      for rule in (
          Rule(symbol, "callee", _callee,
               "the called definition (constructor for classes): signature, parameters, short source",
               repair_keyword if symbol == "unexpected-keyword-arg" else None),
          Rule(symbol, "named_definitions", _callee_by_name,
               "when the callee's owner is unknown: every definition of that name",
               repair_keyword if symbol == "unexpected-keyword-arg" else None),
      )),
    *(rule for symbol in _OBJECT_PATTERNS
      for rule in (
          Rule(symbol, "definition", _object, "what the expression really is: kind, signature, value",
               repair_not_callable if symbol == "not-callable" else None),
          Rule(symbol, "named_definitions", _object_by_name,
               "when the expression's owner is unknown: every definition of that name",
               repair_not_callable if symbol == "not-callable" else None),
      )),
    Rule("function-redefined", "same_name_in_scope", _redefined,
         "the definitions of that name already in the module or class"),
    *(Rule(symbol, None, _local, "the candidate's lines around the message (no SQL)") for symbol in LOCAL_ONLY),
)

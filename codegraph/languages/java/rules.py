"""Java's rule table: a javac error key -> a named SQL template (codegraph/queries), how to fill
its parameters from the message, and what the template finds.

javac's messages name what is missing and where it was looked for (`cannot find symbol; symbol:
method ad(com.ex.Item); location: variable cart of type com.ex.Cart`), so most rules read the
message alone; a simple class name in a message (`method format in class Money`) is found as
javac would: the candidate's imports, its package, then the graph. Types outside the
repository come from the JDK's list (jdk.py), passed to the templates as rows.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from ..checks import Diagnostic, Rule, RuleContext, Site, near_miss, replace_word
from .jdk import jdk_types

# CoCoGen's categories, keyed by javac's error key without "compiler.err."
CATEGORIES = {
    "doesnt.exist": "UNDEF-P",
    "cant.resolve": "UNDEF-O",
    "cant.resolve.location": "UNDEF-CM",
    "cant.resolve.location.args": "UNDEF-CM",
    "cant.resolve.args": "UNDEF-O",
    "cant.resolve.location.args.params": "UNDEF-CM",
    "cant.apply.symbol": "API",
    "cant.apply.symbols": "API",
    "cant.apply.diamond.1": "API",
    "does.not.override.abstract": "API",
    "report.access": "API",
    "non-static.cant.be.ref": "API",
    "abstract.cant.be.instantiated": "OBJ",
    "cant.deref": "OBJ",
    "prob.found.req": "OBJ",
}
# javac stops a file at its first syntax error: that message is all there is, kept wherever it lands
SYNTAX_ERRORS = frozenset({"expected", "expected2", "expected3", "expected4", "illegal.start.of.expr",
                           "illegal.start.of.type", "illegal.start.of.stmt", "premature.eof", "not.stmt",
                           "class.not.allowed", "orphaned", "else.without.if", "unclosed.str.lit",
                           "unclosed.comment", "illegal.char", "invalid.meth.decl.ret.type.req"})
# Messages about the candidate's own code, where the graph has nothing to add: its lines are the context.
LOCAL_ONLY = (*sorted(SYNTAX_ERRORS), "missing.ret.stmt", "already.defined", "var.might.not.have.been.initialized",
              "var.might.already.be.assigned", "unreported.exception.need.to.catch.or.throw", "unreachable.stmt",
              "incomparable.types", "operator.cant.be.applied", "operator.cant.be.applied.1",
              "ref.ambiguous", "cant.assign.val.to.var", "break.outside.switch.loop", "ret.outside.meth",
              "local.var.accessed.from.icls.needs.final", "cant.ref.before.ctor.called", "call.must.be.first.stmt.in.ctor",
              "void.not.allowed.here", "missing.meth.body.or.decl.abstract", "except.never.thrown.in.try",
              "duplicate.class", "class.public.should.be.in.file", "illegal.combination.of.modifiers",
              "mod.not.allowed.here", "incompatible.ret.type.in.lambda", "prob.found.req")


def _one_line(d: Diagnostic) -> str:
    return " ".join(d.message.split())


def _field(d: Diagnostic, label: str) -> str | None:
    """A labelled part of a javac message (`symbol: method ad(Item)`)."""
    m = re.search(rf"\b{label}:\s*([^;]+)", d.message)
    return " ".join(m.group(1).split()) if m else None


def erase(type_text: str) -> str:
    """`java.util.List<com.ex.Item>` -> `java.util.List`; `int[]` stays."""
    depth, out = 0, []
    for ch in type_text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out).strip()


def type_qualname(ctx: RuleContext, name: str) -> str | None:
    """A class name from a message as a qualname of the graph (or the JDK): taken whole when the
    graph knows it; a simple name through the candidate's imports, its package, then any class
    of that name (the one nearest the candidate's package)."""
    name = erase(name)
    if not name:
        return None
    if ctx.graph.kind(name) == "class":
        return name
    cand = ctx.candidate
    head, _, rest = name.partition(".")
    imported = cand.binding(head)
    if imported:
        dotted = f"{imported}.{rest}" if rest else imported
        if ctx.graph.kind(dotted) == "class" or _jdk_class(dotted):
            return dotted
    package = cand.module.rpartition(".")[0]
    for scope in (cand.module, package):
        dotted = f"{scope}.{name}" if scope else name
        if ctx.graph.kind(dotted) == "class":
            return dotted
    if _jdk_class(name):
        return name
    if _jdk_class(f"java.lang.{name}"):
        return f"java.lang.{name}"
    row = ctx.graph.con.execute("""
        SELECT qualname FROM all_classes WHERE name = $n OR qualname LIKE '%.' || $d
        ORDER BY len(list_intersect(string_split(qualname, '.'), string_split($p, '.'))) DESC, qualname
        LIMIT 1""", {"n": name.rpartition(".")[2], "d": name, "p": package}).fetchone()
    return row[0] if row else None


def _jdk_class(qualname: str) -> bool:
    types = jdk_types()
    return types is not None and qualname in types.supertypes


def jdk_members(owner: str) -> list[dict]:
    """The JDK's members of a class and its supertypes, as rows for a template's $external."""
    types = jdk_types()
    if types is None or owner not in types.supertypes:
        return []
    out, seen, todo, shown = [], set(), [owner], set()
    while todo:
        klass = todo.pop(0)
        if klass in seen:
            continue
        seen.add(klass)
        simple = klass.rpartition(".")[2]
        for name, overloads in types.methods.get(klass, {}).items():
            for params, returns in overloads:
                if (name, params) in shown or (name == "<init>" and klass != owner):
                    continue  # overridden nearer the owner; a supertype's constructor is not the owner's
                shown.add((name, params))
                out.append({"name": name, "kind": "constructor" if name == "<init>" else "method",
                            "signature": f"({', '.join(params)}) -> {returns}" if name != "<init>"
                            else f"({', '.join(params)})",
                            "qualname": f"{klass}.{name}({','.join(p.rpartition('.')[2] for p in params)})",
                            "defined_in": klass, "simple": simple})
        for name, field_type in types.fields.get(klass, {}).items():
            if (name, None) in shown:
                continue
            shown.add((name, None))
            out.append({"name": name, "kind": "field", "signature": f": {field_type}",
                        "qualname": f"{klass}.{name}", "defined_in": klass, "simple": simple})
        todo += types.supertypes.get(klass, ())
    return out


def jdk_classes_named(name: str) -> list[str]:
    """The JDK's classes whose simple name is `name` or spelled near it, for a template's $external."""
    types = jdk_types()
    if types is None or not name:
        return []
    lower = name.lower()
    return sorted(q for q in types.supertypes
                  if (simple := q.rpartition(".")[2].rpartition("$")[2].lower()) == lower
                  or (simple[:1] == lower[:1] and SequenceMatcher(None, simple, lower).ratio() >= 0.8))[:100]


def _location_type(location: str | None) -> str | None:
    """`variable cart of type com.ex.Cart` -> com.ex.Cart; `class com.ex.Shop` -> com.ex.Shop."""
    if not location:
        return None
    m = re.search(r"\bof type (.+)$", location)
    if m:
        return m.group(1).strip()
    m = re.match(r"(?:class|interface|enum|record|@interface|annotation)\s+(.+)$", location)
    return m.group(1).strip() if m else None


def _arguments(d: Diagnostic) -> list[str] | None:
    """`symbol: method ad(com.ex.Item,int)` -> ["Item", "int"]: the call's argument types by
    simple erased name, as a member's qualname spells its parameters (None: not a call)."""
    found = _field(d, "symbol")
    if not found or not found.startswith("method ") or "(" not in found:
        return None
    inside = erase(found[found.index("(") + 1: found.rindex(")")] if ")" in found else "")
    return [part.strip().rpartition(".")[2] for part in inside.split(",") if part.strip()]


# JLS 5.1.2 widening primitive conversions, and 5.1.7 boxing: what an argument of a type is
# accepted as by a parameter (by simple name; Object takes everything)
_WIDENS = {"byte": ("short", "int", "long", "float", "double"), "short": ("int", "long", "float", "double"),
           "char": ("int", "long", "float", "double"), "int": ("long", "float", "double"),
           "long": ("float", "double"), "float": ("double",)}
_BOXES = {"boolean": "Boolean", "byte": "Byte", "short": "Short", "char": "Character", "int": "Integer",
          "long": "Long", "float": "Float", "double": "Double"}
_UNBOXES = {boxed: primitive for primitive, boxed in _BOXES.items()}


def accepts(argument: str) -> list[str]:
    """The parameter types (simple names) an argument of this type converts to in a call."""
    out = {argument, "Object"}
    primitive = _UNBOXES.get(argument, argument)
    if primitive in _BOXES:
        out |= {primitive, _BOXES[primitive], *_WIDENS.get(primitive, ())}
        out |= {"Number", "Comparable"} if primitive not in ("boolean", "char") else {"Comparable"}
    if argument == "String":
        out |= {"CharSequence", "Comparable"}
    return sorted(out)


def member_params(ctx: RuleContext, owner: str, name: str, args: list[str] | None = None,
                  local: list[str] | None = None) -> dict:
    """java_members_like's parameters: the owner's JDK members, and the classes the candidate
    imports statically (their static members are its names too)."""
    also = sorted({q for r in ctx.candidate.rows("imports") if r.level == 1
                   for q in [type_qualname(ctx, r.imported_module) or r.imported_module]})
    return {"owner": owner, "name": name, "args": args, "accepts": [accepts(a) for a in args or ()], "also": also,
            "external": jdk_members(owner), "local": local or [], "expected": None, "near": None}


def _symbol(d: Diagnostic) -> tuple[str, str] | None:
    """`symbol: method ad(com.ex.Item)` -> ("method", "ad")."""
    found = _field(d, "symbol")
    if not found:
        return None
    kind, _, rest = found.partition(" ")
    name = rest.split("(")[0].strip()
    return (kind, name) if name else None


def _enclosing(ctx: RuleContext, d: Diagnostic) -> str:
    return ctx.candidate.enclosing_class(d.line) or ""


def _members(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """cant.resolve.location(.args) on a type: the type's members, the JDK's too; for a field read
    through a type (`Sizes.MAX`), the type the code expects there ranks a static field of that name
    elsewhere (`Writer out = ClosedWriter.INSTANCE`, not `ClosedInputStream.INSTANCE`)."""
    symbol = _symbol(d)
    if symbol is None or symbol[0] not in ("method", "variable"):
        return None
    location = _field(d, "location")
    owner_text = _location_type(location)
    if owner_text is None:
        return None
    owner = type_qualname(ctx, owner_text) or erase(owner_text)
    simple = owner.rpartition(".")[2]
    text = ctx.candidate.line_at(d.line)
    read = re.search(rf"\b{re.escape(simple)}\s*\.\s*{re.escape(symbol[1])}\b", text) if symbol[0] == "variable" else None
    if location and not location.startswith("variable") and owner == _enclosing(ctx, d) and symbol[0] == "variable" \
            and read is None:
        return None  # a bare name in the class's own code: the names rule reads it
    params = member_params(ctx, owner, symbol[1], _arguments(d),
                           sorted(ctx.candidate.own_members(owner)) if owner == _enclosing(ctx, d) else [])
    params["expected"], params["near"] = _expected(ctx, d.line, text[:read.start()]) if read is not None else (None, None)
    return params


# `=` that assigns (not `==`, `!=`, `<=`, `>=`), and `return`
_ASSIGNS = re.compile(r"(?<![=!<>+\-*/%&|^])=(?!=)|\breturn\b")
_DECLARED = re.compile(r"([\w$.]+)\s*(?:<.*>)?\s*(?:\[\s*\])*\s+[\w$]+\s*$")
_DECLARATION_AT_MOST = 300  # characters of a declaration read before its `=` (_DECLARED backtracks)


def _expected(ctx: RuleContext, line: int, before: str) -> tuple[str | None, str | None]:
    """(the simple name of the type the code expects of an expression that starts after `before`
    on its line, the name it is given to): the declared type of what it is assigned to (a local,
    a parameter, a field, `this.f`) and that name, or after `return` the enclosing method's
    return type and the method's name; (None, None) inside a call's arguments or anywhere else
    (JLS 5.2's assignment contexts, the ones a line tells)."""
    found = list(_ASSIGNS.finditer(before))
    if not found:
        return None, None
    last = found[-1]
    rest = before[last.end():]
    if rest.count("(") > rest.count(")"):  # an argument of a call: the overloads say what it takes
        return None, None
    if last.group() == "return":
        function = ctx.candidate.enclosing_function(line)
        signature = next((r.signature for r in ctx.candidate.rows("members") if r.qualname == function), None)
        written = signature.rpartition("->")[2].strip() if signature and "->" in signature else None
        name = (function or "").split("(")[0].rpartition(".")[2]
    else:
        target = before[:last.start()].strip()[-_DECLARATION_AT_MOST:]  # a model's line may be a megabyte
        name = re.sub(r"^this\s*\.\s*", "", target.split()[-1] if target else "")
        declared = _DECLARED.search(target)
        if declared is not None and not re.search(r"[.)\]]\s*[\w$]+\s*$", target):
            written = declared.group(1)
        else:
            written = _declared_type(ctx, name, line)
    if not written or written in ("var", "void"):
        return None, name or None
    return erase(written).rpartition(".")[2] or None, name or None


def _super_member(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """`super.load()` javac cannot find (no location is given): the superclass's members."""
    symbol = _symbol(d)
    line = ctx.candidate.line_at(d.line)
    if symbol is None or not re.search(rf"\bsuper\s*\.\s*{re.escape(symbol[1])}\b", line):
        return None
    klass = _enclosing(ctx, d)
    bases = ctx.candidate.bases_of(klass) if klass else []
    owner = type_qualname(ctx, bases[0]) if bases else None
    return member_params(ctx, owner or "java.lang.Object", symbol[1], _arguments(d)) if owner or not bases else None


def _names(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """A bare name javac cannot find in the class's code: the class's fields and methods near it,
    the names the method binds, a class of that name to import (the name used as a qualifier)."""
    symbol = _symbol(d)
    if symbol is None or symbol[0] not in ("variable", "method"):
        return None
    owner = _enclosing(ctx, d)
    function = ctx.candidate.enclosing_function(d.line) or ""
    return {"owner": owner, "name": symbol[1], "package": ctx.candidate.module.rpartition(".")[0],
            "local": ctx.candidate.names_bound_in(function), "external": jdk_classes_named(symbol[1])}


def _nested_member(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """`Outer.Wrong.FIELD`, where Outer has no member class Wrong (`symbol: class Wrong` or
    `variable Wrong`, `location: class Outer`): FIELD in Outer's member classes (a static of that name in a class
    nearest Outer comes first), or near it in Outer."""
    symbol, owner_text = _symbol(d), _location_type(_field(d, "location"))
    line = ctx.candidate.line_at(d.line)
    if symbol is None or symbol[0] not in ("class", "variable") or owner_text is None:
        return None
    used = re.search(rf"\b{re.escape(owner_text.rpartition('.')[2])}\.{re.escape(symbol[1])}\.([\w$]+)", line)
    owner = type_qualname(ctx, owner_text)
    return member_params(ctx, owner, used.group(1)) if used and owner and owner != _enclosing(ctx, d) else None


def _types(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """A class javac cannot find: classes of that name or near it, with the import to write."""
    symbol = _symbol(d)
    if symbol is None or symbol[0] not in ("class", "interface", "enum", "record"):
        return None
    return {"name": symbol[1], "package": ctx.candidate.module.rpartition(".")[0],
            "external": jdk_classes_named(symbol[1])}


def _package(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """`package com.ex.utils does not exist`: the packages near it, and the class the import
    line names wherever it really is."""
    m = re.search(r"package (\S+) does not exist", d.message)
    if not m:
        return None
    line = ctx.candidate.line_at(d.line)
    imported = re.search(r"\bimport\s+(?:static\s+)?([\w.]+)\s*;", line)
    if not imported:
        return None  # `Foo.BAR` with no class Foo in scope: javac took Foo for a package (the next rule)
    name = imported.group(1).rpartition(".")[2]
    if imported and imported.group(1).rpartition(".")[0] != m.group(1):  # `a.b.C.d` static: the class is C
        name = m.group(1).rpartition(".")[2] if name[:1].islower() else name
    return {"package": m.group(1), "name": name, "external": jdk_classes_named(name) if name else []}


def _qualifier_class(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """`package Foo does not exist` on code (`Foo.BAR` with no class Foo in scope, an import
    forgotten): the classes named Foo, with the import to write."""
    m = re.search(r"package ([\w$]+) does not exist", d.message)
    line = ctx.candidate.line_at(d.line)
    if not m or re.search(r"\bimport\s", line) or not m.group(1)[:1].isupper():
        return None
    return {"name": m.group(1), "package": ctx.candidate.module.rpartition(".")[0],
            "external": jdk_classes_named(m.group(1))}


def _qualifier(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """`package Foo does not exist` on code, not on an import: `Foo.BAR` where no class Foo is in
    scope. The member it reads, in the class of that name or wherever a static one of that name is."""
    m = re.search(r"package (\S+) does not exist", d.message)
    line = ctx.candidate.line_at(d.line)
    used = re.search(rf"(?<![\w.$]){re.escape(m.group(1))}\.([\w$]+)", line) if m else None
    if not used:
        return None
    qualifier = m.group(1)
    return member_params(ctx, type_qualname(ctx, qualifier) or qualifier, used.group(1))


def _applied(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """cant.apply.symbol(s): every overload of the method or constructor, with its parameters."""
    text = _one_line(d)
    m = re.match(r"(method|constructor) (\S+) in (?:class|interface|enum|record) (\S+) cannot be applied", text)
    if m:
        kind, name, owner_text = m.groups()
    else:
        m = re.match(r"no suitable (method|constructor) found for ([\w$]+)\(", text)
        if not m:
            return None
        kind, name = m.groups()
        candidate = re.search(r"(?:method|constructor) ([\w.$<>]+)\.([\w$<>]+)\([^)]*\) is not applicable", text)
        owner_text = candidate.group(1) if candidate else (name if kind == "constructor" else _enclosing(ctx, d))
    owner = type_qualname(ctx, owner_text) or owner_text
    member = "<init>" if kind == "constructor" else name
    return {"owner": owner, "name": member, "external": jdk_members(owner)}


def _call_around(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """An argument javac cannot convert, or a call it finds ambiguous (`incompatible types`,
    `reference to append is ambiguous`): the overloads of the call whose parentheses hold the
    message's position. Its receiver typed as the candidate declares it (a local, a parameter,
    a field), a bare name as the enclosing class's, a capitalised one as a class."""
    cand = ctx.candidate
    line = cand.line_at(d.line)
    calls = [r for r in cand.rows("calls") if r.kind == "call" and r.end_line == d.line
             and r.end_col <= d.column < _closing(line, r.end_col)]
    if not calls:
        return None
    call = max(calls, key=lambda r: r.end_col)  # the innermost
    receiver, _, name = (call.callee_text or "").rpartition(".")
    if not name.isidentifier():
        return None
    if not receiver or receiver == "this":
        owner = _enclosing(ctx, d)
    elif receiver[:1].isupper():
        owner = type_qualname(ctx, receiver)
    else:
        declared = _declared_type(ctx, receiver.split(".")[-1], d.line)
        owner = type_qualname(ctx, declared) if declared else None
    return {"owner": owner, "name": name, "external": jdk_members(owner)} if owner else None


def _closing(line: str, at: int) -> int:
    """Where the parenthesis opening at `at` (after spaces) closes on the line (-1: not there)."""
    while at < len(line) and line[at] == " ":
        at += 1
    depth = 0
    for i in range(at, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            return i if i > at else -1
    return -1


def _declared_type(ctx: RuleContext, name: str, line: int) -> str | None:
    """The type the candidate declares `name` with where `line` reads it: a local or a parameter
    of the enclosing method, else a field of the enclosing class."""
    cand = ctx.candidate
    function = cand.enclosing_function(line)
    for row in cand.rows("bindings"):
        if row.name == name and function and row.scope_qualname == function and row.annotation:
            return row.annotation
    for row in cand.rows("parameters"):
        if row.name == name and function and row.owner_qualname == function and row.annotation:
            return row.annotation
    klass = cand.enclosing_class(line)
    for row in cand.rows("members"):
        if row.name == name and row.class_qualname == klass and row.annotation:
            return row.annotation
    return None


def _abstract_methods(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """`X is not abstract and does not override abstract method run() in Runnable`: the type's methods."""
    m = re.search(r"does not override abstract method ([\w$]+)\(.*\) in (\S+)", _one_line(d))
    if not m:
        return None
    return member_params(ctx, type_qualname(ctx, m.group(2)) or m.group(2), m.group(1))


def _access(d: Diagnostic, ctx: RuleContext) -> dict | None:
    """`secret has private access in com.ex.Cart`, `non-static method total() cannot be referenced
    from a static context`: the members the code can use instead."""
    text = _one_line(d)
    m = re.match(r"([\w$]+)(?:\(.*\))? has (?:private|protected) access in (\S+)", text)
    if m:
        name, owner_text = m.groups()
    else:
        m = re.match(r"non-static (?:method|variable) ([\w$]+)", text)
        if not m:
            return None
        name, owner_text = m.group(1), _enclosing(ctx, d)
    return member_params(ctx, type_qualname(ctx, owner_text) or owner_text, name)


def _abstract_class(d: Diagnostic, ctx: RuleContext) -> dict | None:
    m = re.match(r"(\S+) is abstract; cannot be instantiated", _one_line(d))
    if not m:
        return None
    return {"name": type_qualname(ctx, m.group(1)) or m.group(1)}


def _local(d: Diagnostic, ctx: RuleContext) -> dict | None:
    return {"line": d.line}


# -- offline repairs (refine/offline.py): near-miss renames and exact imports only ---------------

def _add_import(site: Site) -> str | None:
    line = site.top.get("import_line")
    if site.top.get("match") != "exact" or not line or line in site.imports or \
            any(existing.strip() == line for existing in site.lines):
        return None
    site.imports.append(line)
    return line


def _import_type(site: Site) -> str | None:
    """A class used without its import: the import, when a class of exactly that name exists;
    else a near-miss class name."""
    symbol = _symbol(site.diagnostic)
    if symbol is None:
        return None
    added = _add_import(site)
    if added:
        return added
    good = site.top.get("name")
    if not near_miss(symbol[1], good) or site.top.get("import_line"):
        return None  # a near miss in another package would need its import too: a guess
    site.lines[site.index] = replace_word(site.line, symbol[1], good)
    return f"{symbol[1]} -> {good}"


def _rename_member(site: Site) -> str | None:
    """`x.nmae(...)` where x's type has a near-miss member: that member."""
    symbol, good = _symbol(site.diagnostic), site.top.get("name")
    if symbol is None or not near_miss(symbol[1], good):
        return None
    new = re.sub(rf"\.(\s*){re.escape(symbol[1])}\b", rf".\g<1>{good}", site.line)
    if new == site.line:
        return None
    site.lines[site.index] = new
    return f".{symbol[1]} -> .{good}"


def _rename_name(site: Site) -> str | None:
    """A bare name javac cannot find: a near-miss field, method or local; or the import of a class
    of exactly that name (the name used as a qualifier)."""
    symbol = _symbol(site.diagnostic)
    if symbol is None:
        return None
    if site.top.get("kind") in ("class", "interface", "enum", "record"):
        return _add_import(site)
    good = site.top.get("name")
    if not near_miss(symbol[1], good):
        return None
    new = replace_word(site.line, symbol[1], good)
    if new == site.line:
        return None
    site.lines[site.index] = new
    return f"{symbol[1]} -> {good}"


def _fix_import(site: Site) -> str | None:
    """`import a.wrong.C;`: the import of the class C where it really is."""
    good = site.top.get("import_line")
    m = re.fullmatch(r"(\s*)import\s+([\w.]+)\s*;\s*", site.line)
    if not m or site.top.get("match") != "exact" or not good or \
            m.group(2).rpartition(".")[2] != good[len("import "):-1].rpartition(".")[2]:
        return None
    site.lines[site.index] = m.group(1) + good
    return f"{m.group(2)} -> {good[len('import '):-1]}"


_RESOLVE = ("cant.resolve", "cant.resolve.location", "cant.resolve.args", "cant.resolve.location.args",
            "cant.resolve.location.args.params")

RULES: tuple[Rule, ...] = (
    Rule("doesnt.exist", "java_packages", _package,
         "the class the import names wherever it really is (with its `import` line); packages near the missing one",
         _fix_import),
    Rule("doesnt.exist", "java_types", _qualifier_class,
         "(`Foo.BAR` in code, no class Foo in scope) the classes named Foo, with the `import` line to write",
         _add_import),
    Rule("doesnt.exist", "java_members_like", _qualifier,
         "(`Foo.BAR` in code, no class Foo in scope) the member in the class of that name, or a static one of "
         "that name elsewhere"),
    *(rule for symbol in _RESOLVE for rule in (
        Rule(symbol, "java_members_like", _super_member,
             "(`super.m()`) the superclass's members, nearest first"),
        Rule(symbol, "java_members_like", _nested_member,
             "(`Outer.Wrong.FIELD`) FIELD in Outer's member classes, or near it in Outer"),
        Rule(symbol, "java_types", _types,
             "(symbol: class) classes of that name or near it, the JDK's too, with the `import` line to write",
             _import_type),
        Rule(symbol, "java_members_like", _members,
             "(location: a type) the type's members, inherited and the JDK's included, nearest first", _rename_member),
        Rule(symbol, "java_names", _names,
             "(a bare name) the class's fields and methods near it, names the method binds, a class of that name",
             _rename_name),
    )),
    *(Rule(symbol, "java_overloads", _applied,
           "every overload of the method or constructor with its parameters (the JDK's too)")
      for symbol in ("cant.apply.symbol", "cant.apply.symbols")),
    *(Rule(symbol, "java_overloads", _call_around,
           "(inside a call's arguments) every overload of the called method, with its parameters")
      for symbol in ("prob.found.req", "ref.ambiguous")),
    Rule("does.not.override.abstract", "java_members_like", _abstract_methods,
         "the abstract type's methods, the one to implement first"),
    *(Rule(symbol, "java_members_like", _access, "the type's members, the one named first")
      for symbol in ("report.access", "non-static.cant.be.ref")),
    Rule("abstract.cant.be.instantiated", "subclasses", _abstract_class,
         "the concrete subclasses to instantiate instead"),
    *(Rule(symbol, None, _local, "the candidate's lines around the message (no SQL)") for symbol in LOCAL_ONLY),
)

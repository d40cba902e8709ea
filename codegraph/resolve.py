"""Name resolution across the whole repository: imports, base classes and callees.

Works on plain rows so the indexer can feed it fresh extraction results for a full build, or
the database's rows of unchanged files plus fresh rows of changed files for an update.
Static and best effort: a name is resolved when the import graph and the class hierarchy say
what it is; anything that needs types (`x.method()` on a local variable) stays unresolved.
"""

from __future__ import annotations

import builtins
import functools
import re
from collections import defaultdict
from typing import Iterable

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*\Z")
_SUPER = re.compile(r"super\(\)\.([A-Za-z_][A-Za-z_0-9]*)\Z")
BUILTINS = frozenset(dir(builtins))
_SELF_KINDS = {"method", "property", "classmethod"}
_LOCALS = ".<locals>."
_MAX_DOTS = 24  # longer dotted names come only from following bindings in circles


@functools.lru_cache(maxsize=65536)
def _function_scopes(qualname: str) -> tuple[str, ...]:
    """`m.f.<locals>.g` -> ('m.f.<locals>.g', 'm.f'): the function scopes a name is looked up in."""
    if _LOCALS not in qualname:
        return (qualname,)
    parts = qualname.split(_LOCALS)
    return tuple(_LOCALS.join(parts[: i + 1]) for i in range(len(parts) - 1, -1, -1))


class Resolver:
    def __init__(
        self,
        defs: dict[str, str],
        imports: Iterable[tuple],
        bases: Iterable[tuple],
        libraries: set[str] | frozenset = frozenset(),
        evidence: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        """defs: qualname -> kind for every definition (modules, classes, members, globals,
        nested functions). imports: (module, scope_qualname, bound_name, target, is_star,
        imported_module). bases: (class_qualname, module, position, base_text). libraries: the
        definitions of the library layer: a call that ends there resolves as 'library'. evidence:
        qualname -> (module, text) saying what a definition holds or returns: an attribute's or
        variable's annotation or assigned value, a function's signature (its return annotation)."""
        self.defs = defs
        self.evidence = evidence or {}
        # function qualname -> name -> (kind, value, annotation, position) for the callers being resolved
        self.scope_facts: dict[str, dict[str, tuple]] = defaultdict(dict)
        self._types: dict[str, str | None] = {}
        self._via_type: set[str] = set()
        self._busy: set[str] = set()  # dotted names whose meaning came from a value's class
        self.libraries = libraries
        self.module_bindings: dict[str, str] = {}
        self.scope_bindings: dict[str, dict[str, str]] = defaultdict(dict)
        self.star_sources: dict[str, list[str]] = defaultdict(list)
        for module, scope, bound, target, is_star, imported_module in imports:
            if is_star:
                if scope == module:
                    self.star_sources[module].append(imported_module)
                continue
            if bound is None or target is None:
                continue
            if scope == module:
                self.module_bindings.setdefault(f"{module}.{bound}", target)
            else:
                self.scope_bindings[scope].setdefault(bound, target)
        self.base_texts: dict[str, list[str]] = defaultdict(list)
        self.class_module: dict[str, str] = {}
        for class_qualname, module, _position, base_text in sorted(bases, key=lambda r: (r[0], r[2])):
            self.base_texts[class_qualname].append(base_text)
            self.class_module[class_qualname] = module
        self._canon: dict[str, str | None] = {}
        self._bases: dict[str, list[tuple[str | None, str | None]]] = {}
        self._mro: dict[str, list[str]] = {}
        self._calls: dict[tuple[str, str], tuple[str | None, str | None]] = {}

    # -- canonical names --------------------------------------------------------------------
    def canonical(self, dotted: str, _depth: int = 0) -> str | None:
        """Follow re-exports until `dotted` names a definition of this repository."""
        if dotted in self.defs:
            return dotted
        cached = self._canon.get(dotted, "")
        if cached != "":
            return cached
        self._canon[dotted] = None  # a cycle of re-exports resolves to nothing
        result = None if _depth > 16 or dotted.count(".") > _MAX_DOTS else self._canonical(dotted, _depth)
        self._canon[dotted] = result
        return result

    def _canonical(self, dotted: str, depth: int) -> str | None:
        target = self.module_bindings.get(dotted)  # a name a module imports: follow it
        if target is not None:
            return self._follow(dotted, target, depth)
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:i])
            rest = parts[i:]
            target = self.module_bindings.get(prefix)
            if target is not None:
                return self._follow(dotted, ".".join([target, *rest]), depth)
            kind = self.defs.get(prefix)
            if kind is None:
                continue
            if kind == "module":
                for source in self.star_sources.get(prefix, ()):
                    if self.defs.get(source) != "module":
                        continue  # not indexed (e.g. past the library layer's file limit): nothing to follow
                    found = self._follow(dotted, ".".join([source, *rest]), depth)
                    if found:
                        return found
                return None
            if kind == "class":
                member = self.member(prefix, rest[0])
                if member is None:
                    return None
                return member if len(rest) == 1 else self._follow(dotted, ".".join([member, *rest[1:]]), depth)
            holder = self.type_of(prefix)  # a variable or attribute whose value has a known class
            found = None if holder is None else self._member_chain(holder, rest)
            if found is not None:
                self._via_type.add(dotted)
            return found
        return None

    def _follow(self, dotted: str, onward: str, depth: int) -> str | None:
        found = self.canonical(onward, depth + 1)
        if found is not None and onward in self._via_type:
            self._via_type.add(dotted)
        return found

    # -- classes ----------------------------------------------------------------------------
    def resolved_bases(self, class_qualname: str) -> list[tuple[str | None, str | None]]:
        """(resolved qualname, how) for each base as written."""
        if class_qualname in self._bases:
            return self._bases[class_qualname]
        self._bases[class_qualname] = []  # guards against a class deriving from itself
        module = self.class_module.get(class_qualname, class_qualname.rpartition(".")[0])
        scope = class_qualname.rsplit(_LOCALS, 1)[0] if _LOCALS in class_qualname else module
        out = []
        for text in self.base_texts.get(class_qualname, ()):
            out.append(self.resolve_expression(text, module, scope))
        self._bases[class_qualname] = out
        return out

    def mro(self, class_qualname: str) -> list[str]:
        """Depth-first, left to right, keeping the last visit of a class reached twice: C3's
        answer on the usual diamonds, and the same order as the ancestors_of() macro."""
        if class_qualname in self._mro:
            return self._mro[class_qualname]
        visits: list[str] = []
        stack: list[tuple[str, tuple[str, ...]]] = [(class_qualname, ())]
        while stack and len(visits) < 4096:
            current, trail = stack.pop()
            visits.append(current)
            trail = (*trail, current)
            bases = [b for b, _ in self.resolved_bases(current)
                     if b and self.defs.get(b) == "class" and b not in trail]
            stack.extend((b, trail) for b in reversed(bases))
        last = {name: i for i, name in enumerate(visits)}
        order = sorted(last, key=last.__getitem__)
        self._mro[class_qualname] = order
        return order

    def member(self, class_qualname: str, name: str, skip_self: bool = False) -> str | None:
        for klass in self.mro(class_qualname)[1 if skip_self else 0 :]:
            candidate = f"{klass}.{name}"
            if candidate in self.defs:
                return candidate
        return None

    # -- names in code ----------------------------------------------------------------------
    def learn_scopes(self, bindings: Iterable[tuple], parameters: Iterable[tuple]) -> None:
        """The local names of the functions whose calls are resolved next: bindings rows
        (scope, name, kind, value, annotation) and parameters rows (owner, position, name, annotation)."""
        for owner, position, name, annotation in parameters:
            self.scope_facts[owner][name] = ("parameter", None, annotation, position)
        for scope, name, kind, value, annotation in bindings:
            known = self.scope_facts[scope].get(name)
            if known is None or (known[0] == "assignment" and kind == "assignment" and known[1] != value):
                # a name assigned twice with different values has no single meaning
                self.scope_facts[scope][name] = (kind, value, annotation, None) if known is None else \
                    ("assignment", None, annotation or known[2], None)
            elif kind in ("global", "nonlocal"):
                self.scope_facts[scope][name] = (kind, None, None, None)

    def lookup(self, name: str, module: str, scope: str) -> tuple[str | None, str | None]:
        """What a bare name means at `scope`: (dotted target, how). A name bound in an enclosing
        function (a parameter, an assignment, a loop variable...) is ("scope\x00name", "bound"):
        it never means a module-level definition of the same name."""
        if scope != module:
            for function_scope in _function_scopes(scope):
                nested = f"{function_scope}{_LOCALS}{name}"
                if nested in self.defs:
                    return nested, "local"
                bound = self.scope_bindings.get(function_scope, {}).get(name)
                if bound is not None:
                    return bound, "import"
                facts = self.scope_facts.get(function_scope, {}).get(name)
                if facts is not None:
                    if facts[0] == "global":
                        break
                    if facts[0] != "nonlocal":
                        return f"{function_scope}\x00{name}", "bound"
            if self.defs.get(scope) == "class" and f"{scope}.{name}" in self.defs:
                return f"{scope}.{name}", "local"
        local = f"{module}.{name}"
        if local in self.defs:
            return local, "local"
        bound = self.module_bindings.get(local)
        if bound is not None:
            return bound, "import"
        for source in self.star_sources.get(module, ()):
            found = self.canonical(f"{source}.{name}")
            if found:
                return found, "import"
        if name in BUILTINS:
            return f"builtins.{name}", "builtin"
        return None, None

    def resolve_expression(self, text: str, module: str, scope: str) -> tuple[str | None, str | None]:
        if not _DOTTED.match(text):
            return None, None
        head, _, rest = text.partition(".")
        target, how = self.lookup(head, module, scope)
        if target is None:
            return None, None
        if how == "bound":
            return self._through_binding(target, rest, module)
        if how == "builtin":
            return (target, how) if not rest else (None, None)
        full = f"{target}.{rest}" if rest else target
        found = self.canonical(full)
        if found is None and how == "import" and not self._inside(full):
            return full, "external"  # e.g. os.path.join: named through the imports, defined elsewhere
        return found, ("type" if found is not None and full in self._via_type else how)

    def _inside(self, dotted: str) -> bool:
        """Does a dotted name start with a module of this repository?"""
        head = dotted
        while head:
            if self.defs.get(head) == "module":
                return True
            head = head.rpartition(".")[0]
        return False

    def resolve_call(self, text: str, module: str, caller: str) -> tuple[str | None, str | None]:
        key = (text, caller)
        found = self._calls.get(key)
        if found is None:
            found = self._resolve_call(text, module, caller)
            if found[0] is not None and found[0] in self.libraries and found[1] != "builtin":
                found = (found[0], "library")
            self._calls[key] = found
        return found

    def _resolve_call(self, text: str, module: str, caller: str) -> tuple[str | None, str | None]:
        head, _, rest = text.partition(".")
        if rest and head in ("self", "cls") and "." not in rest:
            kind = self.defs.get(caller)
            if kind in _SELF_KINDS:
                found = self.member(caller.rpartition(".")[0], rest)
                return (found, "self") if found else (None, None)
        if head.startswith("super()"):
            match = _SUPER.match(text)
            if match and self.defs.get(caller) in _SELF_KINDS | {"staticmethod"}:
                found = self.member(caller.rpartition(".")[0], match.group(1), skip_self=True)
                return (found, "super") if found else (None, None)
            return None, None
        if not _DOTTED.match(text):
            return self.resolve_on_result(text, module, caller)
        target, how = self.resolve_expression(text, module, caller)
        if target is None:
            return None, None
        if self.defs.get(target) in ("variable", "class_attribute") and how != "builtin":
            aliased = self._alias_of(target)  # h = helper at module level; h()
            if aliased is not None:
                return aliased, "alias"
        return target, how

    def _alias_of(self, qualname: str) -> str | None:
        """The function or class a module-level or class-level name was assigned (`h = helper`)."""
        module, said = self.evidence.get(qualname, (None, None))
        if not said or not _DOTTED.match(said) or qualname in self._busy:
            return None
        self._busy.add(qualname)
        try:
            scope = qualname.rpartition(".")[0]
            target, _ = self.resolve_expression(said, module, scope if self.defs.get(scope) == "class" else module)
        finally:
            self._busy.discard(qualname)
        if target is not None and self.defs.get(target) in _CALLABLE_KINDS | {"class"}:
            return target
        return None

    def resolve_import(self, row: tuple) -> tuple[str | None, str | None, str | None]:
        """(resolved_module, resolved_qualname, resolution) for an imports row."""
        module, scope, bound, target, is_star, imported_module = row
        resolved_module = imported_module if self.defs.get(imported_module) == "module" else None
        if is_star:
            return resolved_module, None, "module" if resolved_module else None
        dotted = target if bound is not None and target is not None else imported_module
        if bound is not None and target == bound.split(".")[0] and imported_module:
            dotted = imported_module  # `import a.b.c` binds a, but names the module a.b.c
        found = self.canonical(dotted) if dotted else None
        if found is None:
            return resolved_module, None, None
        return resolved_module, found, "module" if self.defs.get(found) == "module" else "definition"

    # -- types: what a name holds, from annotations and assigned values --------------------------
    def type_of(self, qualname: str, _depth: int = 0) -> str | None:
        """The class a definition's value is an instance of (attributes, variables), or that a
        function returns; None when the code does not say."""
        if qualname in self._types:
            return self._types[qualname]
        self._types[qualname] = None  # a cycle says nothing
        found = None
        if _depth < 8 and qualname in self.evidence:
            module, text = self.evidence[qualname]
            kind = self.defs.get(qualname)
            scope = qualname.rpartition(".")[0] or module
            if kind in _CALLABLE_KINDS:
                returns = text.rpartition("->")[2] if "->" in text else None
                found = self._type_of_annotation(returns, module, scope) if returns else None
            else:
                found = self._type_of_annotation(text, module, scope) or self._type_of_value(text, module, scope, _depth)
        self._types[qualname] = found
        return found

    def _type_of_annotation(self, text: str | None, module: str, scope: str) -> str | None:
        if not text:
            return None
        text = text.strip().strip("'\"")
        optional = _OPTIONAL.match(text)
        if optional:
            text = optional.group(1)
        text = _NONE_UNION.sub("", text).strip()
        if not _DOTTED.match(text):
            return None
        target, _ = self.resolve_expression(text, module, module if scope not in self.defs else scope)
        return target if target and self.defs.get(target) == "class" else None

    def _type_of_value(self, text: str, module: str, scope: str, depth: int = 0) -> str | None:
        """`C(...)` is a C; `make(...)` is what make returns; `other` is what other holds."""
        callee = _callee_of(text)
        lookup_scope = scope if scope in self.defs else module
        if callee is not None:
            target, _ = self.resolve_call(callee, module, lookup_scope) if depth < 4 else (None, None)
            if target is None or target not in self.defs:
                return None
            if self.defs[target] == "class":
                return target
            return self.type_of(target, depth + 1) if self.defs[target] in _CALLABLE_KINDS else None
        if _DOTTED.match(text):
            target, how = self.resolve_expression(text, module, lookup_scope)
            if target and target in self.defs and self.defs[target] not in _CALLABLE_KINDS | {"class", "module"}:
                return self.type_of(target, depth + 1)
        return None

    def _member_chain(self, holder: str, parts: list[str]) -> str | None:
        """`holder.a.b`: the member b of the class a's value is an instance of, and so on."""
        for i, part in enumerate(parts):
            member = self.member(holder, part)
            if member is None:
                return None
            if i == len(parts) - 1:
                return member
            holder = self.type_of(member)
            if holder is None:
                return None
        return None

    def _through_binding(self, bound: str, rest: str, module: str) -> tuple[str | None, str | None]:
        """A call through a name bound in a function: by its annotation or assigned value
        ('type': `x = C(); x.f()`, `def g(x: C): x.f()`), as an alias of what it was assigned
        ('alias': `h = helper; h()`), or `self`/`cls`; anything else resolves to nothing."""
        if bound in self._busy or len(self._busy) > 16:  # `x = x.parent()`: no answer from itself
            return None, None
        self._busy.add(bound)
        try:
            return self._binding_target(bound, rest, module)
        finally:
            self._busy.discard(bound)

    def _binding_target(self, bound: str, rest: str, module: str) -> tuple[str | None, str | None]:
        scope, _, name = bound.partition("\x00")
        kind, value, annotation, position = self.scope_facts[scope][name]
        holder = None
        if kind == "parameter" and position == 0 and self.defs.get(scope) in _SELF_KINDS | {"classmethod"}:
            holder = scope.rpartition(".")[0]
        elif annotation:
            holder = self._type_of_annotation(annotation, module, scope)
        if holder is None and value and kind == "assignment":
            if not rest and _DOTTED.match(value):  # h = helper; h()
                target, how = self.resolve_expression(value, module, scope)
                if target and self.defs.get(target) in _CALLABLE_KINDS | {"class"}:
                    return target, "alias"
                return None, None
            holder = self._type_of_value(value, module, scope)
        if holder is None or not rest:
            return None, None
        found = self._member_chain(holder, rest.split("."))
        return (found, "type") if found else (None, None)

    def resolve_on_result(self, text: str, module: str, caller: str) -> tuple[str | None, str | None]:
        """`C().f`, `make().f`, `self.get().f`: a method on what a call returns."""
        receiver, name = _split_receiver(text)
        if receiver is None:
            return None, None
        holder = self._type_of_value(receiver, module, caller)
        if holder is None:
            return None, None
        found = self._member_chain(holder, name.split("."))
        return (found, "type") if found else (None, None)


_CALLABLE_KINDS = frozenset({"function", "method", "classmethod", "staticmethod", "property", "nested_function"})
_OPTIONAL = re.compile(r"(?:typing\.)?Optional\[(.+)\]\Z")
_NONE_UNION = re.compile(r"\s*\|\s*None\b|\bNone\s*\|\s*")
_NAME_TAIL = re.compile(r"\.([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)\Z")


def _callee_of(text: str) -> str | None:
    """`pkg.C(a, (b))` -> `pkg.C`: the dotted callee of a call expression whose parentheses are
    its own (not `f(a).g(b)`)."""
    head = _DOTTED_PREFIX.match(text)
    if head is None or not text.endswith(")") or text[head.end():head.end() + 1] != "(":
        return None
    depth = 0
    for i in range(head.end(), len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0 and i != len(text) - 1:
            return None
    return head.group(0)


def _split_receiver(text: str) -> tuple[str | None, str]:
    """`C(x).f` -> ("C(x)", "f"); `a(b).c.d` -> ("a(b)", "c.d")."""
    tail = _NAME_TAIL.search(text)
    if tail is None:
        return None, ""
    receiver = text[: tail.start()]
    return (receiver, tail.group(1)) if receiver.endswith(")") else (None, "")


_DOTTED_PREFIX = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*")

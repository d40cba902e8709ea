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
    ) -> None:
        """defs: qualname -> kind for every definition (modules, classes, members, globals,
        nested functions). imports: (module, scope_qualname, bound_name, target, is_star,
        imported_module). bases: (class_qualname, module, position, base_text). libraries: the
        definitions of the library layer: a call that ends there resolves as 'library'."""
        self.defs = defs
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
            return self.canonical(target, depth + 1)
        parts = dotted.split(".")
        for i in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:i])
            rest = parts[i:]
            target = self.module_bindings.get(prefix)
            if target is not None:
                return self.canonical(".".join([target, *rest]), depth + 1)
            kind = self.defs.get(prefix)
            if kind is None:
                continue
            if kind == "module":
                for source in self.star_sources.get(prefix, ()):
                    if self.defs.get(source) != "module":
                        continue  # not indexed (e.g. past the library layer's file limit): nothing to follow
                    found = self.canonical(".".join([source, *rest]), depth + 1)
                    if found:
                        return found
                return None
            if kind == "class":
                member = self.member(prefix, rest[0])
                if member is None:
                    return None
                return member if len(rest) == 1 else self.canonical(".".join([member, *rest[1:]]), depth + 1)
            return None
        return None

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
    def lookup(self, name: str, module: str, scope: str) -> tuple[str | None, str | None]:
        """What a bare name means at `scope`: (dotted target, how)."""
        if scope != module:
            for function_scope in _function_scopes(scope):
                nested = f"{function_scope}{_LOCALS}{name}"
                if nested in self.defs:
                    return nested, "local"
                bound = self.scope_bindings.get(function_scope, {}).get(name)
                if bound is not None:
                    return bound, "import"
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
        if how == "builtin":
            return (target, how) if not rest else (None, None)
        full = f"{target}.{rest}" if rest else target
        found = self.canonical(full)
        if found is None and how == "import" and not self._inside(full):
            return full, "external"  # e.g. os.path.join: named through the imports, defined elsewhere
        return found, how

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
        target, how = self.resolve_expression(text, module, caller)
        if target is None:
            return None, None
        return target, how

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

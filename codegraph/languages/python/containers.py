"""What a container or a returned tuple holds: `HANDLERS["a"]()`, `for f in (a, b)`,
`a, fn = make()`. A mixin of Resolver (resolve.py), whose names, types and returns these read."""

from __future__ import annotations

import re

from .expressions import (
    KEEPING, _CALLABLE_KINDS, _DOTTED, _ELEMENT_OF, _GOT, _MAX_FLOWS, _SELF_KINDS, _SUBSCRIPTED, _UNPACKED, _call_arguments,
    _callee_of, _first_type_argument, _function_scopes, _item_type_argument, _literal_elements, _pair_values,
    _tuple_element, _unique)


_ATTRIBUTES = frozenset({"class_attribute", "instance_attribute"})
_MAPPINGS = frozenset({"builtins.dict", "collections.OrderedDict"})  # made from pairs, they map to the second
_MAX_ELEMENTS = 32  # a registry's processors, a stack's filters: a few dozen at most
_KEYWORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*=(?!=)")
# What _literal_elements keeps of a literal, for a value as written: a name (_DOTTED), or also a call
_CALLED_OR_NAMED = re.compile(r"[A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*(?:\Z|\()")
_COPIED = re.compile(r"(?:tuple|list)\(([A-Za-z_][A-Za-z_0-9]*)\)\Z")


class Containers:
    """Mixed into Resolver."""

    def _unpacked(self, value: str, rest: str, module: str, scope: str) -> list[tuple[str, str]] | None:
        """`a, b = f(x)` binds b to `f(x)[1]`: what the elements at that place of the tuples f
        returns name (`return strings, padfn`: each value padfn is assigned in f); None when the
        value is not of that form."""
        match = _UNPACKED.match(value)
        callee = _callee_of(match.group(1)) if match else None
        if callee is None:
            return None
        called = self._project_function(self.resolve_call(callee, module, scope)[0])
        if called is None:
            return []
        function, where = called
        index = int(match.group(2))
        out: list[tuple[str, str]] = []
        self._busy.add(function)
        try:
            for text in self.returns.get(function, ()):
                element = _tuple_element(text, index)
                if element is None or not _DOTTED.match(element):
                    out += self._value_targets(element, rest, where, function) if element else []
                    continue
                head, _, tail = element.partition(".")
                bound, how = self.lookup(head, where, function)
                if how == "bound":  # each value the name is given in f
                    out += self._through_bindings(bound, ".".join(p for p in (tail, rest) if p), where)
                else:
                    out += self._value_targets(element, rest, where, function)
        finally:
            self._busy.discard(function)
        return _unique(out)

    def _project_function(self, function: str | None) -> tuple[str, str] | None:
        """(function, its module) for a function of the graph whose returns may be read now (not
        one being read), its local names learned; None otherwise."""
        if function is None or function in self._busy or self.defs.get(function) not in _CALLABLE_KINDS:
            return None
        where = self.evidence.get(function, (None,))[0]
        if where is None:
            return None
        self._need_scopes(_function_scopes(function))
        return function, where

    def _is_mapping(self, klass: str) -> bool:
        """dict, OrderedDict, or a class of the graph deriving from one."""
        return klass in _MAPPINGS or self.defs.get(klass) == "class" and any(
            base in _MAPPINGS for k in self.mro(klass) for base, _ in self.resolved_bases(k))

    def _elements(self, text: str, module: str, scope: str, depth: int = 0, calls: bool = False
                  ) -> list[tuple[str, str, str]]:
        """(element, module and scope to read it in) of a container: a literal list, tuple, set or dict
        (its values), or a name whose value is one. The elements that name something, and with
        calls those that call something (`[Arg(), Arg()]`)."""
        if text.endswith((".values()", ".copy()")):  # for v in HANDLERS.values(); self.filters = FILTERS.copy()
            text = text.rpartition(".")[0]
        literal = _literal_elements(text, calls)
        if literal is not None:
            return [(e, module, scope) for e in literal]
        if depth > 3:
            return []
        if not _DOTTED.match(text):
            return self._returned_elements(text, module, scope, depth, calls)
        head, _, rest = text.partition(".")
        target, how = self.lookup(head, module, scope)
        if how == "bound" and not rest:
            where, _, name = target.partition("\x00")
            if (where, name) in self.star_parameters:  # def run(*checks): for check in checks
                return self._star_arguments(where, self.scope_facts[where][name][3]) if self._flowing else []
            return [e for value, at in self._bound_values(target) if not value.startswith(_ELEMENT_OF)
                    for e in self._elements(value, module, at, depth + 1, calls)] + \
                self._kept_in(name, where, depth, calls)
        if head in ("self", "cls") and rest and "." not in rest and self.defs.get(scope) in _SELF_KINDS:
            klass = scope.rpartition(".")[0]
            # self.FUNCS: the class's, or a subclass's own when self is one (Date.FUNCS under DateTime,
            # self._methods set by a subclass's __init__)
            targets = [self.member(klass, rest), *(f"{sub}.{rest}" for sub in self.subclasses(klass)
                                                   if self.defs.get(f"{sub}.{rest}") in _ATTRIBUTES)]
        elif how in ("local", "import"):
            targets = [self.canonical(f"{target}.{rest}" if rest else target)]
        elif how == "bound":  # ctx.environment.filters: an attribute of what a typed name holds
            targets = [self.resolve_expression(text, module, scope)[0]]
        else:
            return []
        out = []
        for target in dict.fromkeys(targets):
            star = self.stored_star(target) if self._flowing else None
            if star is not None:  # self.checks = checks, a *checks of __init__
                out += self._star_arguments(*star)
            kind = self.defs.get(target) if target is not None else None
            if kind not in ("variable", "class_attribute", "instance_attribute"):
                continue
            where, said = self.evidence.get(target, (None, None))
            if said:
                holder = target.rpartition(".")[0]
                at = holder if self.defs.get(holder) == "class" else where
                if kind == "instance_attribute":  # self.ops = {...}: read in __init__, where self is the instance
                    at = self._init_scope(holder) or at
                out += self._elements(said, where, at, depth + 1, calls)
            out += self._kept_in(target, None, depth, calls)
        return out

    def _returned_elements(self, text: str, module: str, scope: str, depth: int,
                           calls: bool) -> list[tuple[str, str, str]]:
        """The elements of what a project function returns (`self.procs = build_procs(self)`, where
        build_procs fills a local and returns it); of a mapping made from a literal of pairs, its
        values (`dict([("html", start_html)])`, and a project subclass of dict: a dispatch table)."""
        callee = _callee_of(text)
        function = self.resolve_call(callee, module, scope)[0] if callee is not None else None
        if function is not None and self._is_mapping(function):
            pairs = _pair_values(next(iter(_call_arguments(text)), ""), calls)
            return [(e, module, scope) for e in pairs or ()]
        called = self._project_function(function)
        if called is None:
            return []
        function, where = called
        self._busy.add(function)
        try:
            return [e for returned in self.returns.get(function, ()) if _DOTTED.match(returned)
                    for e in self._elements(returned, where, function, depth + 1, calls)]
        finally:
            self._busy.discard(function)

    def _kept_in(self, container: str, scope: str | None, depth: int, calls: bool) -> list[tuple[str, str, str]]:
        """What calls keep in a container (resolution.keeping_sites): a local of scope, called
        by its own name there, or an attribute (qualname): where the call's container is that
        attribute as resolve_call reads it (not through what callers pass), or, when nothing says
        what it is, the one class family having an attribute of that name holds it. Each element
        with where it is written."""
        key = (container, scope, calls)
        found = self._kept.get(key)
        if found is not None:
            return list(found)
        name = container if scope is not None else container.rpartition(".")[2]
        out: list[tuple[str, str, str]] = []
        mark = self._busy.enter()
        flowing, self._flowing = self._flowing, False
        try:
            for said, method, arguments, module, caller in (self.kept or {}).get(name, ()):
                if (caller == scope and said == name) if scope is not None else \
                        said != name and self._is_attribute(said, container, module, caller):
                    out += self._kept_values(method, arguments, module, caller, depth, calls)
        finally:
            self._flowing = flowing
            whole = self._busy.leave(mark)
        out = list(dict.fromkeys(out))
        if whole:
            self._kept[key] = out
        return out

    def _is_attribute(self, said: str, attribute: str, module: str, caller: str) -> bool:
        """Is `said` (`stack.stmtprocess`, read in caller) that attribute, or one of that name in
        its class's family?"""
        found, _ = self.resolve_expression(said, module, caller)
        owner = attribute.rpartition(".")[0]
        if found is not None:
            other = found.rpartition(".")[0]
            return found == attribute or found.rpartition(".")[2] == said.rpartition(".")[2] and \
                (other in self.mro(owner) or owner in self.mro(other))
        head = said.partition(".")[0]
        if head in ("self", "cls") or self.lookup(head, module, caller)[1] != "bound":
            return False  # a name that is not a local: what it is, is known or nothing
        owners = self._owners()[0].get(said.rpartition(".")[2], ())
        top = [k for k in owners if set(owners).isdisjoint(self.mro(k)[1:])]
        return len(top) == 1 and top[0] in self.mro(owner)

    def _kept_values(self, method: str, arguments: tuple[str, ...], module: str, caller: str, depth: int,
                     calls: bool) -> list[tuple[str, str, str]]:
        """The values a keeping call keeps, as _elements gives them."""
        position = KEEPING.get(method)
        if position is None:  # a project container's method: every positional argument
            given = [a for a in arguments if not _KEYWORD.match(a) and not a.startswith("*")]
        else:
            given = list(arguments[position:position + 1])
        if method == "extend":
            return [e for a in given for e in self._elements(a, module, caller, depth + 1, calls)]
        allowed = _CALLED_OR_NAMED if calls else _DOTTED
        return [(a, module, caller) for a in given if allowed.match(a)]

    def stored_star(self, attribute: str | None) -> tuple[str, int] | None:
        """(__init__, position) of the *args parameter an instance attribute keeps whole
        (`def __init__(self, *checks): self.checks = checks`, or `tuple(checks)`); None otherwise."""
        if self.defs.get(attribute) != "instance_attribute":
            return None
        said = self.evidence.get(attribute, (None, ""))[1]
        copied = _COPIED.match(said)
        said = copied.group(1) if copied else said
        init = attribute.rpartition(".")[0] + ".__init__"
        if (init, said) not in self.star_parameters:
            return None
        self._need_scopes([init])
        return init, self.scope_facts[init][said][3]

    def _star_arguments(self, function: str, position: int) -> list[tuple[str, str, str]]:
        """What the callers of function pass positionally to its *args at `position` (elements,
        each with where it is written)."""
        slots = self.flows.get(function, {})
        return sorted({site for key in slots if isinstance(key, int) and key >= position for site in slots[key]}
                      )[:_MAX_FLOWS]

    def _item_type(self, text: str, module: str, scope: str, depth: int = 0) -> str | None:
        """The class of `text[k]` and `text.get(k)`: what the container's annotation says its
        values are (`Dict[str, Option]`), else the class of the first of its literal values that
        says one."""
        return self._element_type(text, module, scope, item=True) or self._literal_type(text, module, scope, depth)

    def _literal_type(self, text: str, module: str, scope: str, depth: int = 0) -> str | None:
        """The class of the first of a container's elements that says one (`[Arg(), Arg()]`)."""
        for element, in_module, where in self._elements(text, module, scope, calls=True)[:8]:
            found = self._type_of_value(element, in_module, where, depth + 1)
            if found is not None:
                return found
        return None

    def _literal_types(self, text: str, module: str, scope: str) -> list[str]:
        """The classes of a container's elements (of the first _MAX_ELEMENTS; `stack.filters.append(Strip())`
        in one place, `.append(Indent())` in another: either)."""
        found = (self._type_of_value(e, in_module, where, 1)
                 for e, in_module, where in self._elements(text, module, scope, calls=True)[:_MAX_ELEMENTS])
        return list(dict.fromkeys(k for k in found if k is not None))

    def _element_type(self, text: str, module: str, scope: str, item: bool = False) -> str | None:
        """The class of the elements of a collection whose annotation says (`-> List[Param]`,
        `params: Sequence[Param]`): of a call's return annotation, a name's or an attribute's.
        item: of `x[k]` rather than of `for e in x` (a mapping's values, not its keys)."""
        if text.endswith(".values()"):
            text, item = text[: -len(".values()")], True
        callee = _callee_of(text)
        annotation, where = None, None
        if callee is not None:
            target, _ = self.resolve_call(callee, module, scope)
            if target is not None and self.defs.get(target) in _CALLABLE_KINDS:
                where, said = self.evidence.get(target, (None, ""))
                annotation = said.rpartition("->")[2] if "->" in said else None
                scope = target
        elif _DOTTED.match(text):
            head, _, rest = text.partition(".")
            target, how = self.lookup(head, module, scope)
            if how == "bound" and not rest:
                facts_scope, _, name = target.partition("\x00")
                annotation, where = self.scope_facts[facts_scope][name][2], module
            else:
                target, _ = self.resolve_expression(text, module, scope)
                if target is not None and self.defs.get(target) in ("variable", "class_attribute",
                                                                   "instance_attribute"):
                    where, annotation = self.evidence.get(target, (None, None))
                    scope = target.rpartition(".")[0]
        inner = (_item_type_argument if item else _first_type_argument)(annotation) if annotation and where else None
        return self._type_of_annotation(inner, where, scope) if inner else None

    def _container_targets(self, text: str, module: str, caller: str) -> list[tuple[str, str]]:
        """`HANDLERS["a"]()`, `self.ops[i]()`, `FUNCS.get(k)`: the functions and classes the
        container holds."""
        match = _SUBSCRIPTED.match(text) or _GOT.match(text)
        if match is None:
            return []
        return _unique((target, "container") for element, in_module, where in
                       self._elements(match.group(1), module, caller)
                       for target, _ in self._value_targets(element, "", in_module, where))

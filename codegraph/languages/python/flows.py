"""What arguments a call passes on to the parameters of the functions it runs, and what a call
through a parameter (or a name assigned one, or an attribute a constructor keeps) runs by what
callers pass: `def run(cb): cb()` called as `run(handler)`, one to MAX_HOPS calls deep, through
*args and **kwargs handed on. A mixin of Resolver (resolve.py), whose names and values these read."""

from __future__ import annotations

from typing import Iterable

from .expressions import (
    _CALLABLE_KINDS, _DOTTED, _FORWARDED, _IDENTIFIER, _MAX_FLOWS, _NAMEISH, _STAR_ELEMENT, _call_arguments,
    _callee_of, _either, _is_lambda, _unique)
from .values import _kept

MAX_HOPS = 3
_NOTHING: dict = {}


class Flows:
    """Mixed into Resolver."""

    def learn_flows(self, sites: Iterable[tuple]) -> None:
        """What each parameter may be bound to: sites are (target, how, kind, arguments, module,
        caller) of calls already resolved (resolve_call's answer; a decorator passes the function
        it decorates). An argument is kept as written, with where it was written, and is read only
        when a call through the parameter needs it (`def run(cb): cb()` called as `run(handler)`)."""
        self._all.clear()
        self._bound.clear()  # answers that read what callers pass
        for target, how, kind, arguments, module, caller in sites:
            if not arguments or target is None or target in self.libraries or how in ("partial", "lambda"):
                continue  # partial(f, x)(y): where y lands in f depends on what partial binds; a lambda's
                # parameters are not those of the function it is written in
            target_kind = self.defs.get(target)
            if target_kind == "class":  # C(x) hands x to C.__new__ and C.__init__
                for made in (self.member(target, method) for method in ("__new__", "__init__")):
                    if made is not None and made not in self.libraries:
                        self._bind(made, 1, arguments, module, caller)
                continue
            if kind == "init":
                offset = 1
            elif target_kind in ("method", "property"):
                offset = 1 if how in ("self", "super", "type") else 0
            elif target_kind == "classmethod":
                offset = 1
            elif target_kind in _CALLABLE_KINDS:
                offset = 0
            else:
                continue
            self._bind(target, offset, arguments, module, caller)

    def _bind(self, target: str, offset: int, arguments: list[str], module: str, caller: str) -> None:
        """Each argument of a call to the parameter of target it lands on (offset: the parameters
        the call fills before its first argument, `self`)."""
        slots = self.flows[target]
        spread = False
        for position, argument in enumerate(arguments):
            if not argument:
                break
            if argument[0] == "*":  # where later positional arguments land is unknown; keywords still bind
                spread = True
                self._forward(slots, target, argument, position + offset, module, caller)
                continue
            keyword, equals, value = argument.partition("=")
            if equals and _IDENTIFIER.match(keyword) and not value.startswith("="):
                key: str | int = keyword
                argument = value.strip()
            elif spread:
                continue
            else:
                key = position + offset
            if _NAMEISH.match(argument):
                slots[key].append((argument, module, caller))

    def _forward(self, slots: dict, target: str, argument: str, start: int, module: str, caller: str) -> None:
        """`def wrap(*args, **kwargs): run(*args, **kwargs)`: each parameter of run from `start` on
        holds an element of what wrap's callers pass to *args, and each named one what they pass
        by that keyword to **kwargs (read when a call needs it: _forwarded_targets)."""
        name = argument.lstrip("*")
        keywords = argument.startswith("**")
        if (caller, name) not in (self.keyword_parameters if keywords else self.star_parameters):
            return
        self._need_scopes([target])
        for parameter, facts in self.scope_facts.get(target, _NOTHING).items():
            position = facts[3]
            if facts[0] != "parameter" or (target, parameter) in self.keyword_parameters:
                continue
            if keywords and (target, parameter) not in self.star_parameters and parameter not in ("self", "cls"):
                slots[parameter].append((f"{_FORWARDED}{name}\x00{parameter}", module, caller))
            elif not keywords and position >= start:
                slots[position].append((f"{_FORWARDED}{name}\x00{position - start}", module, caller))

    def _forwarded_targets(self, said: str, rest: str, scope: str) -> list[tuple[str, str]]:
        """What the callers of scope pass to its *args at an index, or to its **kwargs by a keyword."""
        if not self._flowing or self._hops >= MAX_HOPS:
            return []
        name, _, at = said.partition("\x00")
        if (scope, name) in self.star_parameters:
            return self._flow_targets(scope, None, self.scope_facts[scope][name][3] + int(at), rest)
        return self._flow_targets(scope, at, None, rest)

    def _flow_targets(self, scope: str, name: str | None, position: int | None, rest: str) -> list[tuple[str, str]]:
        """A call through a parameter: what the arguments bound to it name, followed back through
        the callers' own parameters up to MAX_HOPS calls (`def outer(f): inner(f)`)."""
        slots = self.flows.get(scope)
        if not slots:
            return []
        # in a stable order, whoever learned them first (a full build or an update)
        arguments = sorted({*slots.get(position, ()), *slots.get(name, ())})
        self._hops += 1
        try:
            out = [(target, _kept(how, "flow")) for text, module, caller in arguments[:_MAX_FLOWS]
                   for target, how in self._argument_targets(text, rest, module, caller)]
        finally:
            self._hops -= 1
        return _unique(out)

    def _argument_targets(self, text: str, rest: str, module: str, caller: str) -> list[tuple[str, str]]:
        """What an argument as written runs when called: what its value runs, or, for a
        module-level name or class attribute bound to a function, that function, as calling the
        name would (`run(SAVE)`, `SAVE = on_save`). The name itself only, not one a function
        returns: an update follows a name's new value to the calls that pass the name, no further."""
        found = self._value_targets(text, rest, module, caller)
        if found or rest or not _DOTTED.match(text) or self.lookup(text.partition(".")[0], module, caller)[1] == "bound":
            return found
        target, _ = self.resolve_expression(text, module, caller)
        aliased = self._alias_of(target) if target and self.defs.get(target) in ("variable", "class_attribute") else None
        return [(aliased, "alias")] if aliased is not None else []

    def _given_targets(self, text: str, module: str, caller: str) -> list[tuple[str, str]] | None:
        """What a dotted name bound in the caller may run, the arguments given to a parameter
        included; None when the text is not such a name."""
        head, _, rest = text.partition(".")
        target, how = self.lookup(head, module, caller) if _DOTTED.match(text) else (None, None)
        if how != "bound":
            return None
        scope, _, name = target.partition("\x00")
        # flows reach a parameter itself, or a name assigned one; other names answer as resolve_call does (cached)
        facts = self.scope_facts[scope][name]
        self._flowing = facts[0] == "parameter" or any(self._names_a_parameter(v, scope) for v in facts[1])
        try:
            return self._through_bindings(target, rest, module)
        finally:
            self._flowing = False

    def _stored_targets(self, attribute: str) -> list[tuple[str, str]]:
        """`self.fn = fn` in __init__, then `self.fn()`: what the constructor's callers pass for fn
        (also through `fn = args[0]`, and wrapped: `self.fn = partial(fn, *args)`);
        `self.fn = fn or (lambda x: True)`: the lambda too, which is __init__'s code."""
        module, said = self.evidence.get(attribute, (None, None))
        init = attribute.rpartition(".")[0] + ".__init__"
        if not said or self.defs.get(init) not in _CALLABLE_KINDS:
            return []
        out = []
        for side in _either(said):
            if _is_lambda(side):
                out.append((init, "lambda"))
                continue
            callee = _callee_of(side)
            if callee is not None and self.resolve_call(callee, module, init)[0] == "functools.partial":
                side = next(iter(_call_arguments(side)), "")
            if _IDENTIFIER.match(side):
                out += self._given_to(init, side)
        return out

    def _getters(self, klass: str) -> list[tuple[str, str]]:
        """The functions a subclass of property was made with (`fget`): what its __get__ runs when
        it hands over to property.__get__."""
        if "builtins.property" not in (base for base, _ in self.resolved_bases(klass)):
            return []
        return [(t, _kept(how, "flow")) for t, how in self._given_to(f"{klass}.__init__", "fget")]

    def _given_to(self, function: str, name: str) -> list[tuple[str, str]]:
        """What the callers of `function` pass for its local `name`: a parameter, or a name
        assigned one or an element of its *args (`func = args[0]`)."""
        self._need_scopes([function])
        facts = self.scope_facts.get(function, {}).get(name)
        if facts is None:
            return []
        slots = [(name, facts[3])] if facts[0] == "parameter" else []
        module = self.evidence.get(function, (None,))[0]
        defaults = [t for value in facts[1] if slots and module is not None  # def __init__(self, handler=quiet)
                    for t in self._value_targets(value, "", module, function)]
        for value in facts[1] if not slots else ():
            element = _STAR_ELEMENT.match(value)
            star = self.scope_facts[function].get(element.group(1)) if element else None
            if star is not None and star[0] == "parameter" and (function, element.group(1)) in self.star_parameters:
                slots.append(("*", star[3] + int(element.group(2))))
        flowing, self._flowing = self._flowing, True  # and on through the callers' own parameters
        try:
            return _unique([*defaults, *(t for keyword, position in slots
                                         for t in self._flow_targets(function, keyword, position, ""))])
        finally:
            self._flowing = flowing

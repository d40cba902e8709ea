"""What a value is: the class an annotation, an assigned value or a call's result says it is an
instance of, what a function's return statements give back, and the expressions a name or a
call may evaluate to. A mixin of Resolver (resolve.py), whose names, bindings and calls these read."""

from __future__ import annotations

import re

from .expressions import (
    _BUILTIN_MEMBERS, _CALLABLE_CLASS_OR_MODULE, _CALLABLE_KINDS, _CALLABLE_OR_CLASS, _DOTTED, _GOT, _IDENTIFIER,
    _SELF_KINDS, _SUBSCRIPTED, _TYPE_OF_CLASS, _bare_annotation, _call_arguments, _call_parts, _callee_of, _either,
    _evaluated, _getattr_named, _string_start, _function_scopes, _is_lambda, _own_class_call, _split_receiver,
    _union_members, _unique, _type_arguments, ByName, IN_CAPITALS)


def _kept(how: str, label: str) -> str:
    """An answer relabelled by how it was reached, except a lambda's: a lambda has no node, so
    arguments given to it must never be bound to the parameters of the function it is written in."""
    return how if how == "lambda" else label


# `x.lower()`, `node.__name__.upper()`: a string expression and the case it is given
_CASED_ANY = re.compile(r"(.+)\.(lower|upper)\(\)\Z")
_IN_CAPITALS = re.compile(IN_CAPITALS)
_NAME_OR_OWN = re.compile(r"(?:self\.)?[A-Za-z_][A-Za-z_0-9]*\Z")  # `handler`, `self.tag_state`


class Values:
    """Mixed into Resolver."""

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
                if found is None:  # def make(): return C()
                    found = next((t for t, what in self._returned(qualname) if what == "instance"), None)
            else:
                found = self._type_of_annotation(text, module, scope) or \
                    self._type_of_value(text, module, scope, _depth)
                if found == "builtins.property" and kind == "class_attribute":  # what its getter returns
                    getter = (self._property_object(module, text, scope) or (None,))[0]
                    found = self.type_of(getter, _depth + 1) if getter is not None else None
                if found is None and kind == "instance_attribute" and _IDENTIFIER.match(text):
                    found = self._type_of_stored_parameter(scope, text, module)
                elif found is None and kind == "instance_attribute" and _callee_of(text) is not None:
                    self._need_scopes([f"{scope}.__init__"])  # self.inner = ensure(param): read in __init__
                    found = self._type_of_value(text, module, f"{scope}.__init__", _depth)
                if found is None and kind == "instance_attribute":  # self.x = None here, self.x = X() there
                    found = next((k for value, in_module, where in self._written(qualname)
                                  if (callee := _callee_of(value)) is not None and _DOTTED.match(callee)
                                  and self.defs.get(k := self.resolve_call(callee, in_module, where)[0]) == "class"),
                                 None)  # a class made there: no other attribute's type is read, so no cycle
        self._types[qualname] = found
        return found

    def _written(self, attribute: str) -> list[tuple[str, str, str]]:
        """(value, module, scope) of each `self.<name> = value` in a method of the attribute's
        class family (resolution.written_values): what the attribute may hold besides its first value."""
        klass, _, name = attribute.rpartition(".")
        if self.defs.get(klass) != "class":
            return []
        out = []
        for value, module, scope in (self.written or {}).get(name, ()):
            owner = scope.rpartition(".")[0]
            if self.defs.get(scope) in _SELF_KINDS and self.defs.get(owner) == "class" and \
                    (owner == klass or owner in self.mro(klass) or klass in self.mro(owner)):
                out.append((value, module, scope))
        return out

    def _written_targets(self, attribute: str) -> list[tuple[str, str]]:
        """`self.state = self.tag_state` in one method, `self.state()` in another: what each value
        written to the attribute runs, when it is a name or a member of self (`self.state =
        self._current.parent` would read another attribute's type, which may read this one's:
        an answer that depended on which was asked first)."""
        return [t for value, module, scope in self._written(attribute) if _NAME_OR_OWN.match(value)
                for t in self._value_targets(value, "", module, scope)]

    def _type_of_stored_parameter(self, klass: str, name: str, module: str) -> str | None:
        """`def __init__(self, param: Parameter): self.param = param`: the parameter's annotation."""
        init = f"{klass}.__init__"
        self._need_scopes([init])
        facts = self.scope_facts.get(init, {}).get(name)
        if facts is None or facts[0] != "parameter" or not facts[2]:
            return None
        return self._type_of_annotation(facts[2], module, init)

    def _type_of_annotation(self, text: str | None, module: str, scope: str) -> str | None:
        """The class an annotation names (a generic one of the project's: `Registry[Proc]`); of a
        union (`Field | type`), its one project class."""
        if not text:
            return None
        text = _bare_annotation(text)
        lookup_scope = module if scope not in self.defs else scope
        if _type_arguments(text)[0]:  # `Registry[Proc]`: a project class made generic is that class
            base, _ = self.resolve_expression(text.partition("[")[0].strip(), module, lookup_scope)
            if base is not None and self.defs.get(base) == "class" and base not in self.libraries:
                return base
        if not _DOTTED.match(text):
            members = _union_members(text)
            classes = {t for t in (self.resolve_expression(m, module, lookup_scope)[0] for m in members)
                       if t is not None and self.defs.get(t) == "class" and t not in self.libraries}
            return classes.pop() if len(classes) == 1 else None
        target, _ = self.resolve_expression(text, module, lookup_scope)
        return target if target and self.defs.get(target) == "class" else None

    def _bound_values(self, bound: str) -> list[tuple[str, str]]:
        """The values of a local name (`scope\x00name`), each with the scope it is read in: a
        parameter's default in the one around the def."""
        where, _, name = bound.partition("\x00")
        return [_evaluated(value, where) for value in self.scope_facts[where][name][1]]

    def _type_of_name(self, name: str, module: str, scope: str) -> str | None:
        """The class a local name's annotation says, else the first of its values that says one."""
        bound, how = self.lookup(name, module, scope)
        if how != "bound":
            return None
        where, _, local = bound.partition("\x00")
        found = self._type_of_annotation(self.scope_facts[where][local][2], module, where)
        for value, at in self._bound_values(bound) if found is None and bound not in self._busy else ():
            self._busy.add(bound)
            try:
                found = self._type_of_value(value, module, at, 1)
            finally:
                self._busy.discard(bound)
            if found is not None:
                break
        return found

    def _held_values(self, text: str, module: str, scope: str, depth: int) -> list[tuple[str, str, str]]:
        """The expressions `text` may evaluate to, each with the module and scope it is written
        in: a name's assigned values, a called function's return statements, each side of an
        `or` or a conditional expression, followed up to `depth` steps."""
        if depth == 0:
            return [(text, module, scope)]
        if len(either := _either(text)) > 1:
            return [v for side in either for v in self._held_values(side, module, scope, depth - 1)]
        if _IDENTIFIER.match(text):
            bound, how = self.lookup(text, module, scope)
            if how == "bound":
                return [v for value, at in self._bound_values(bound)
                        for v in self._held_values(value, module, at, depth - 1)]
            if how == "local" and self.defs.get(bound) == "variable":
                held_in, value = self.evidence.get(bound, (None, None))
                return self._held_values(value, held_in, held_in, depth - 1) if value else []
            return []
        callee = _callee_of(text)
        function = self.resolve_call(callee, module, scope)[0] if callee is not None else None
        if function is not None and function not in self.libraries and self.defs.get(function) in _CALLABLE_KINDS:
            self._need_scopes(_function_scopes(function))
            in_module = self.evidence.get(function, (module,))[0]
            return [(text, module, scope)] + [v for said in self.returns.get(function, ())
                                              for v in self._held_values(said, in_module, function, depth - 1)]
        return [(text, module, scope)]


    def _passed_through(self, function: str, call_text: str, module: str, scope: str, depth: int) -> str | None:
        """`ensure(x)` where ensure returns its parameter as given (`return cls_or_instance`): the
        class of the argument."""
        self._need_scopes([function])
        facts = self.scope_facts.get(function, {})
        positional, keywords = _call_parts(call_text)
        offset = 1 if self.defs.get(function) in _SELF_KINDS else 0
        for said in self.returns.get(function, ()):
            param = facts.get(said) if _IDENTIFIER.match(said) else None
            if param is None or param[0] != "parameter" or param[3] is None:
                continue
            given = dict(keywords).get(said)
            if given is None and 0 <= param[3] - offset < len(positional):
                given = positional[param[3] - offset]
            if given is None:
                continue
            found = self._type_of_name(given, module, scope) if _IDENTIFIER.match(given) else \
                self._type_of_value(given, module, scope, depth + 1)
            if found is not None:
                return found
        return None

    def _type_of_value(self, text: str, module: str, scope: str, depth: int = 0) -> str | None:
        """`C(...)` is a C; `make(...)` is what make returns; `other` is what other holds;
        `cast(C, x)` and `type(self)(...)` say it; `table[k]` and `table.get(k)` hold what the
        table's annotation or literal says its values are."""
        sides = _either(text)
        if len(sides) > 1 and depth < 4:  # self.context = make(node) or _Context(node): the first side that says
            return next((t for side in sides if (t := self._type_of_value(side, module, scope, depth + 1))), None)
        callee = _callee_of(text)
        lookup_scope = scope if scope in self.defs else module
        own = _own_class_call(text)
        if own is not None:
            return self._own_class(own, lookup_scope)
        item = _SUBSCRIPTED.match(text) or _GOT.match(text)
        if item is not None and depth < 4:
            found = self._item_type(item.group(1), module, lookup_scope, depth)
            if found is not None:
                return found
        if callee is not None:
            target, _ = self.resolve_call(callee, module, lookup_scope) if depth < 4 else (None, None)
            if target == "typing.cast":
                said = _call_arguments(text)
                return self._type_of_annotation(said[0], module, lookup_scope) if said else None
            if target is None or target not in self.defs:
                return None
            if self.defs[target] == "class":
                return target
            if self.defs[target] not in _CALLABLE_KINDS:
                return None
            return self.type_of(target, depth + 1) or self._passed_through(target, text, module, lookup_scope, depth)
        if _DOTTED.match(text):
            target, how = self.resolve_expression(text, module, lookup_scope)
            if target and target in self.defs and self.defs[target] not in _CALLABLE_CLASS_OR_MODULE:
                return self.type_of(target, depth + 1)
        return None

    def _member_chain(self, holder: str, parts: list[str]) -> str | None:
        """`holder.a.b`: the member b of the class a's value is an instance of, and so on. A
        member the class lacks is a subclass's (`node: Node; node.as_const()` where Expr(Node)
        defines it): the value is an instance of one."""
        if len(parts) == 1:
            return self.member(holder, parts[0]) or self._member_below(holder, parts[0])
        for i, part in enumerate(parts):
            member = self.member(holder, part) or self._member_below(holder, part)
            if member is None:
                return None
            if i == len(parts) - 1:
                return member
            holder = self.type_of(member)
            if holder is None:
                return None
        return None

    def _member_below(self, holder: str, name: str) -> str | None:
        """The definition of `name` highest in the project's subclasses of holder (the others
        are its overrides, or its siblings'), when the class is the project's and lacks it."""
        if self.defs.get(holder) != "class" or holder in self.libraries or name in _BUILTIN_MEMBERS \
                or name.startswith("__"):
            return None  # object's __str__ and the like are every class's
        found = [m for sub in self.subclasses(holder) if (m := self.member(sub, name)) is not None
                 and m not in self.libraries]
        if not found:
            return None
        return min(found, key=lambda m: (len(self.mro(m.rpartition(".")[0])), m))

    def _returned_callables(self, call_text: str, module: str, scope: str) -> list[str]:
        """`make(...)`: the functions and classes the return statements of make give back."""
        return [t for t, what in self._returned_by(call_text, module, scope) if what == "callable"]

    def _returned_answers(self, call_text: str, module: str, scope: str) -> list[tuple[str, str]]:
        """What calling what `make(...)` gives back runs: its functions and classes ('return') and its
        lambdas, each the function that wrote it ('lambda')."""
        return [(t, "return" if what == "callable" else what) for t, what in self._returned_by(call_text, module, scope)
                if what in ("callable", "lambda")]

    def _returned_by(self, call_text: str, module: str, scope: str) -> list[tuple[str, str]]:
        callee = _callee_of(call_text)
        target = self.resolve_call(callee, module, scope)[0] if callee is not None else None
        return self._returned(target) if target is not None else []

    def _partial_of(self, call_text: str, module: str, scope: str) -> str | None:
        """`functools.partial(f, x)`: f, which runs when the partial object is called."""
        callee = _callee_of(call_text)
        if callee is None or self.resolve_call(callee, module, scope)[0] != "functools.partial":
            return None
        said = _call_arguments(call_text)
        if not said or not _DOTTED.match(said[0]):
            return None
        target, _ = self.resolve_expression(said[0], module, scope)
        return target if target is not None and self.defs.get(target) in _CALLABLE_OR_CLASS else None

    def _returned(self, function: str) -> list[tuple[str, str]]:
        """(definition, 'callable' | 'instance' | 'lambda') for the return statements of a function
        that name a function or class, build an instance of a class (`return C(...)`, `return
        self`) or give a lambda (the function it is written in).
        Names bound inside the function are followed through their assigned values (not through
        what callers pass to its parameters)."""
        texts = self.returns.get(function)
        if function in self._busy or self.defs.get(function) not in _CALLABLE_KINDS:
            return []
        module, said = self.evidence.get(function, (None, ""))
        if module is None:
            return []
        self._busy.add(function)
        try:
            named = _TYPE_OF_CLASS.match(_bare_annotation(said.rpartition("->")[2])) if "->" in said else None
            klass = self._type_of_annotation(named.group(1), module, function) if named else None
            out = [(klass, "callable")] if klass else []  # -> Type[Shell]: calling what it returns makes one
            if not texts:
                return out
            self._need_scopes(_function_scopes(function))
            for text in (side for said in texts for side in _either(said)):  # return a if k else b: each
                callee = _callee_of(text)
                if (text == "self" and self.defs.get(function) in _SELF_KINDS) or \
                        (callee == "cls" and self.defs.get(function) == "classmethod") or \
                        ((own := _own_class_call(text)) is not None and self._own_class(own, function)):
                    out.append((function.rpartition(".")[0], "instance"))  # return self; return cls(...)
                    continue
                if _is_lambda(text):  # return lambda x: ...: called elsewhere, it is this function's code
                    out.append((function, "lambda"))
                    continue
                if not _DOTTED.match(callee or text):  # return HANDLERS[k]
                    out += [(t, "callable") for t, _ in self._container_targets(text, module, function)]
                    continue
                if callee is not None:
                    target, _ = self.resolve_call(callee, module, function)
                    # return partial(deco, opt=opt): called, it is deco, given the same positions
                    wrapped = self._partial_of(text, module, function) if target == "functools.partial" and \
                        len(_call_arguments(text)) == 1 else None
                    if wrapped is not None:
                        out.append((wrapped, "callable"))
                    elif target == "builtins.getattr":  # return getattr(self, f"visit_{kind}", None)
                        out += [(t, "callable") for t in self._getattr_targets(text, module, function)]
                    elif target is not None and self.defs.get(target) == "class":
                        out.append((target, "instance"))
                    elif target is None:  # return SHELLS.get(name)
                        out += [(t, "callable") for t, _ in self._container_targets(text, module, function)]
                    continue
                if _IDENTIFIER.match(text) and (held := self._type_of_name(text, module, function)) is not None:
                    out.append((held, "instance"))  # procs = Registry(); ...; return procs
                # fn = a / fn = b; return fn: each value (_value_targets reads every value of a bound name)
                out += [(t, _kept(how, "callable")) for t, how in self._value_targets(text, "", module, function)]
            return _unique(out)
        finally:
            self._busy.discard(function)

    def _getattr_targets(self, call_text: str, module: str, scope: str) -> list[str]:
        """`getattr(self, "visit_" + kind)`: the methods the call may give, every one whose name
        starts so (or has the name, when it is a plain string) in the class of the object and its
        bases, and, for `self` and `cls`, in its subclasses too; of a module, its functions and
        classes. The name may be a local assigned such a string (`method = "visit_" + kind`). Nothing
        for a name the text does not start (`getattr(self, name)`). And the default it is given
        (`getattr(self, method, self.generic_visit)`)."""
        said = _getattr_named(call_text)
        if said is None or self.resolve_call("getattr", module, scope)[0] != "builtins.getattr":
            return []
        receiver, name_text, default = said
        found = []
        if default is not None and _DOTTED.match(default):
            found += [t for t, _ in self._value_targets(default, "", module, scope)
                      if self.defs.get(t) in _CALLABLE_OR_CLASS]
        names = self._attribute_names(name_text, module, scope)
        klass, own = self._receiver_class(receiver, module, scope) if names else (None, False)
        if klass is not None:
            owners = [klass] if self.defs.get(klass) == "module" else \
                self.mro(klass) + (self.subclasses(klass) if own else [])
            for owner in owners:
                for name, exact, capitals in names:
                    if exact:
                        candidate = f"{owner}.{name}"
                        found += [candidate] if self.defs.get(candidate) in _CALLABLE_OR_CLASS else []
                    else:
                        found += [f"{owner}.{n}" for n in self._named_in(owner)
                                  if n.startswith(name) and (not capitals or _IN_CAPITALS.fullmatch(n))]
        return [t for t in dict.fromkeys(found) if t not in self.libraries]

    def _attribute_names(self, text: str, module: str, scope: str, depth: int = 2) -> list[tuple[str, bool, bool]]:
        """The names (name, True, _) or starts of names (start, False, _) a string expression may
        give: a string as written (_string_start), what a local is assigned (`method = "visit_" +
        kind`), either cased (`func_name.lower()`); with True last, only names written in capitals
        (`node_class.__name__.upper()`: whatever it upper-cases, a handler named `NAME` or `CALL`).
        A lower-cased name nothing else is known of says nothing: most names are in lower case."""
        said = _string_start(text)
        if said is not None:
            return [(*said, False)]
        cased = _CASED_ANY.match(text)
        if cased is not None and depth:
            change = str.lower if cased.group(2) == "lower" else str.upper
            inner = self._attribute_names(cased.group(1), module, scope, depth - 1)
            if inner or change is str.lower:
                return [(change(name), exact, capitals or change is str.upper) for name, exact, capitals in inner]
            return [("", False, True)]
        if not _IDENTIFIER.match(text) or not depth:
            return []
        bound, how = self.lookup(text, module, scope)
        if how != "bound":
            return []
        where, _, local = bound.partition("\x00")
        if self.scope_facts[where][local][0] == "parameter":
            return []
        return [n for value, _ in self._bound_values(bound)
                for n in self._attribute_names(value, module, scope, depth - 1)]

    def _receiver_class(self, text: str, module: str, scope: str) -> tuple[str | None, bool]:
        """The class (or module) an object is: (klass, True) for the first parameter of a method
        (`self`, `cls`: any subclass's instance too), (klass, False) for a class, a module or an
        instance of a known class."""
        if _IDENTIFIER.match(text):
            bound, how = self.lookup(text, module, scope)
            instance = self._instance_of(bound) if how == "bound" else None
            if instance is not None:
                return instance, True
        if _DOTTED.match(text):
            target, _ = self.resolve_expression(text, module, scope)
            if target is not None and self.defs.get(target) in ("class", "module"):
                return target, False
        return self._type_of_value(text, module, scope), False

    def _instance_of(self, bound: str) -> str | None:
        """The class a method's first parameter (`self`, `cls`) is an instance of, for a bound
        name (`scope\x00name`); None for any other name."""
        where, _, name = bound.partition("\x00")
        kind, _, _, position = self.scope_facts[where][name]
        if kind == "parameter" and position == 0 and self.defs.get(where) in _SELF_KINDS:
            return where.rpartition(".")[0]
        return None

    def _init_scope(self, klass: str) -> str | None:
        """Where an instance attribute's value is read: the class's __init__, when it has one (self
        is the instance there, and a name is the module's, not a member the class body holds)."""
        init = f"{klass}.__init__"
        if self.defs.get(init) not in _SELF_KINDS:
            return None
        self._need_scopes([init])
        return init

    def _named_in(self, owner: str) -> tuple[str, ...]:
        """The names of the functions, methods and classes defined directly in a class or module."""
        if self._owned is None and self.defined_in is not None:
            self._owned = ByName(lambda owner: tuple(q.rpartition(".")[2] for q in self.defined_in(owner)
                                                     if self.defs.get(q) in _CALLABLE_OR_CLASS))
        if self._owned is None:
            owned: dict[str, list[str]] = {}
            for qualname, kind in self.defs.items():
                if kind in _CALLABLE_OR_CLASS:
                    parent, _, name = qualname.rpartition(".")
                    owned.setdefault(parent, []).append(name)
            self._owned = {parent: tuple(names) for parent, names in owned.items()}
        return self._owned.get(owner, ())

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

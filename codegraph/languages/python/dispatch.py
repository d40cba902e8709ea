"""What runs without being named at the call: a descriptor's __get__ or __set__ when an attribute
is read or assigned, the method a builtin runs on its argument (`len(x)`: x's __len__), and the
overrides in subclasses that a call on a base class's method may reach. A part of Resolver."""

from __future__ import annotations

import builtins
import functools
import re
from collections import defaultdict
from typing import Iterable

from .expressions import (_BUILTIN_MEMBERS, _BUILTIN_TYPE_MEMBERS, _CALLABLE_CLASS_OR_MODULE, _CALLABLE_KINDS,
                          _CALLABLE_OR_CLASS, _DOTTED, _LOCALS, _METHOD_KINDS, _SELF_KINDS, IMPLICIT_PROTOCOLS,
                          ONLY_MAKES_AN_ITERATOR, ByName, _call_arguments, _call_parts, _callee_of, _function_scopes)
from ...schema import PROJECT_RESOLUTIONS


_UNKNOWN = object()
_METACLASS_OF = re.compile(r"type\(([A-Za-z_][A-Za-z_0-9]*)\)\Z")
_LITERAL = re.compile(r"""[-+]?[0-9.]|[rbfuRBFU]{0,2}["']|[\[{(]""")  # a number, a string, a display
_FOREIGN = ("builtin", "library", "external")
# What a class body defines that a value of the class has (_duck)
_MEMBER_KINDS = frozenset({"method", "property", "classmethod", "staticmethod", "class_attribute",
                           "instance_attribute"})
_CALLED_KINDS = frozenset({"method", "classmethod", "staticmethod", "class_attribute"})  # what `x.m()` may call
_PASSES_THROUGH = frozenset({"copy.copy", "copy.deepcopy", "typing.cast"})
_LEADING_ARGUMENTS = re.compile(r"\s*\(\s*((?:[A-Za-z_][A-Za-z_0-9.]*\s*,\s*)*)")  # `(a, b, ` of a call stored cut
_CALL_HEAD = re.compile(r"([A-Za-z_][A-Za-z_0-9]*(?:\.[A-Za-z_][A-Za-z_0-9]*)*)\s*\(")


class Dispatch:
    """Mixed into Resolver, whose names, types and classes these read."""

    def accessor(self, target: str, access: str) -> str | None:
        """What reading (access 'read') or assigning ('write') the attribute `target` runs: a
        property (its getter or setter), or the __get__ / __set__ of the project's class whose
        instance the class body holds there (`value = Typed(int)`, a method decorated by such a
        class or by a function returning one of its instances)."""
        key = (target, access)
        if key not in self._accessors:
            self._accessors[key] = self._find_accessor(target, access)
        return self._accessors[key]

    def _find_accessor(self, target: str, access: str) -> str | None:
        if self.defs.get(target) == "property":
            return target
        if self.defs.get(target) == "class_attribute" and target in self.evidence:
            made = self._property_object(*self.evidence[target], target.rpartition(".")[0])
            if made is not None:
                return made[0 if access == "read" else 1]
        for holder in self._held_instances(target):
            if holder is not None and holder not in self.libraries:
                found = self.member(holder, "__get__" if access == "read" else "__set__")
                if found is not None and found not in self.libraries:
                    return found
        return None

    def property_overrides(self, run: str, how: str, text: str, scope: str) -> list[str]:
        """The subclasses' properties replacing the property `run` that a read or write of text may
        run instead: on a value of a class ('type', `self.width` included: below the caller's own class)
        or one guessed by name; none for a descriptor's __get__ or __set__."""
        if how not in ("type", "name") or self.defs.get(run) != "property":
            return []
        receiver, _, _ = text.rpartition(".")
        own = receiver in ("self", "cls") and self.defs.get(scope) in _SELF_KINDS
        return self.overrides(run, scope.rpartition(".")[0] if own else None)

    def _property_object(self, module: str, value: str, scope: str, depth: int = 3
                         ) -> tuple[str | None, str | None] | None:
        """(getter, setter) of the property object `value` makes: `property(_get, _set)`, or a call
        of the project's function that returns one (`status = header_getter("Status")`, whose
        `return property(fget, fset)` names its own nested functions), a few calls deep; None
        when the value is not one."""
        callee = _callee_of(value) or (value.endswith("...") and (head := _CALL_HEAD.match(value)) and head.group(1))
        if not callee or not _DOTTED.match(callee):
            return None
        maker = self.resolve_call(callee, module, scope)[0]
        if maker == "builtins.property":
            positional, keywords = _call_parts(value)
            leading = _LEADING_ARGUMENTS.match(value, len(callee)) if not positional and not keywords else None
            if leading is not None:  # stored cut: the names it starts with
                positional = tuple(name for name in leading.group(1).replace(" ", "").split(",") if name)
            said = dict(keywords)
            names = [said.get(k, positional[i].strip() if i < len(positional) else None)
                     for i, k in enumerate(("fget", "fset"))]
            found = [self.resolve_expression(n, module, scope)[0] if n and _DOTTED.match(n) else None for n in names]
            return tuple(f if f is not None and f not in self.libraries and self.defs.get(f) in _CALLABLE_KINDS
                         else None for f in found)
        if depth <= 0 or maker is None or maker in self.libraries or self.defs.get(maker) not in _CALLABLE_KINDS \
                or maker in self._busy:
            return None
        in_module = self.evidence.get(maker, (module,))[0]
        self._busy.add(maker)
        try:
            return next((made for said in self.returns.get(maker, ())
                         if (made := self._property_object(in_module, said, maker, depth - 1)) is not None), None)
        finally:
            self._busy.discard(maker)

    def _held_instances(self, target: str) -> list[str | None]:
        """The classes whose instance a class body holds at `target`: a class attribute's value's,
        or a decorated method's decorator's (Values.type_of, _decorated_instances)."""
        what = self.defs.get(target)
        if what == "class_attribute":
            return [self.type_of(target)]
        if what in _METHOD_KINDS and target in self.decorators:
            return self._decorated_instances(target)
        return []

    def _decorated_instances(self, function: str) -> list[str]:
        """The classes whose instance a method's outermost decorator may make of it (`@Cached`,
        or `@lazy` where lazy returns `Cached(func)`, or a `partial(...)` when called otherwise)."""
        module = self.evidence.get(function, (None,))[0]
        text = self.decorators[function][0]
        if module is None or not text or not _DOTTED.match(text):
            return []
        decorator = self.resolve_expression(text, module, function.rpartition(".")[0])[0]
        if decorator is None or decorator in self.libraries:
            return []
        if self.defs.get(decorator) == "class":
            return [decorator]
        return [t for t, what in self._returned(decorator) if what == "instance"]

    def _protocol_targets(self, argument: str, names: tuple[str, ...], module: str, caller: str,
                          consumed: bool = False, every_value: bool = False) -> list[tuple[str, str]]:
        """`len(deck)` runs Deck.__len__, `bool(x)` x's __bool__ or else its __len__: the first of
        `names` the argument's class has, when the project defines it, for every value the
        argument may hold. consumed: the argument is iterated to its end (`list(x)`, a for loop),
        which runs the __next__ of what its __iter__ returns as well. every_value: ask for every
        value it may hold, what callers pass to a parameter included (a for loop, a local name
        given to a builtin); else the one answer a call would start from, and its overrides."""
        if _DOTTED.match(argument):  # len(Deck) asks the class's class, not Deck.__len__
            if "." not in argument and self.lookup(argument, module, caller)[1] == "bound":
                named = None  # a local: what it holds is an instance's class's, as the call says
            else:
                named = self.resolve_expression(argument, module, caller)[0]
            if named is not None and self.defs.get(named) in _CALLABLE_CLASS_OR_MODULE:
                return []
        elif _callee_of(argument) is None:  # a literal, an operation, `key=...`, `*args`: nothing said
            return []
        for name in names:
            found = self._protocol_methods(f"{argument}.{name}", module, caller, every_value)
            if not found:
                continue
            found = [t for t in found if t not in self.libraries and self.defs.get(t) in _METHOD_KINDS]
            if consumed and name == "__iter__":
                found += self._next_after(found)
            return [(t, "implicit") for t in dict.fromkeys(found)]
        return self._sentinel_calls(argument, module, caller) if consumed and names[0] == "__iter__" else []

    def _protocol_methods(self, text: str, module: str, caller: str, every_value: bool) -> list[str]:
        """The methods `x.__len__` may run: resolve_call's answer and its overrides, or with
        every_value what resolve_call_all gives (a tenth of the stdlib's index time when asked for
        every truth test)."""
        name = text.rpartition(".")[2]
        if every_value:
            return [t for t, _ in self.resolve_call_all(text, module, caller) if t is not None and
                    t.rpartition(".")[2] == name]
        target, how = self.resolve_call(text, module, caller)
        if target is None or target.rpartition(".")[2] != name:
            return []
        return [target, *self.overrides(target, caller.rpartition(".")[0] if how == "self" else None)]

    def _sentinel_calls(self, argument: str, module: str, caller: str) -> list[tuple[str, str]]:
        """`iter(f, sentinel)` calls f each time it is iterated: what iterating the argument calls
        that way, when a value it may hold (through names and return statements) is one."""
        out = []
        for value, in_module, scope in self._held_values(argument, module, caller, 3):
            callee = _callee_of(value)
            said = _call_arguments(value) if callee is not None else ()
            if len(said) == 2 and self.resolve_call(callee, in_module, scope)[0] == ONLY_MAKES_AN_ITERATOR:
                out += [(t, "implicit") for t, _ in self._value_targets(said[0], "", in_module, scope)
                        if self.defs.get(t) in _CALLABLE_OR_CLASS]
        return list(dict.fromkeys(out))

    def _next_after(self, iterators: list[str]) -> list[str]:
        """The __next__ methods of what these __iter__ methods return (`return self`)."""
        out = []
        for holder in filter(None, map(self.type_of, iterators)):
            step = self.member(holder, "__next__")
            if step is not None and step not in self.libraries:
                out += [step, *self.overrides(step, holder)]
        return out

    def resolve_implicit(self, text: str, module: str, caller: str) -> list[tuple[str, str]]:
        """What an implicit calls row (`x.__iter__` of a for loop, `x.__bool__` of a truth test,
        `Ctx().__enter__`) runs in the project's own code."""
        receiver, _, method = text.rpartition(".")
        made = _METACLASS_OF.match(receiver) if method in ("__new__", "__init__") else None
        if made is not None:  # class C(Base): type(C).__new__, the metaclass's
            klass = self.resolve_expression(made.group(1), module, caller)[0]
            runs = self._metaclass_runs(klass, method)
            return runs + self._made_runs(klass) if method == "__new__" else runs
        names = IMPLICIT_PROTOCOLS.get(method)
        if names is not None and receiver:
            iterated = names[0] == "__iter__"
            return self._protocol_targets(receiver, names, module, caller, consumed=iterated, every_value=iterated)
        return list(dict.fromkeys((t, "implicit") for t, how in self.resolve_call_all(text, module, caller)
                                  if how in PROJECT_RESOLUTIONS and t not in self.libraries))

    def metaclass_of(self, klass: str) -> str | None:
        """The project's class that makes klass: the metaclass keyword of its class statement
        when it is the project's, else the first of its bases' (`class Child(Base)` is made by
        Base's, and so is `class Child(Base, metaclass=type)`, the most derived one winning)."""
        if klass in self._metaclasses:
            return self._metaclasses[klass]
        return self._from_bases(klass, self._metaclasses, lambda current, bases: next(
            (self._metaclasses[b] for b in bases if self._metaclasses[b]), None), self._own_metaclass)

    def _own_metaclass(self, klass: str) -> str | None:
        said = self.metaclasses.get(klass)
        if said is None:
            return None
        module, text = said
        scope = klass.rsplit(_LOCALS, 1)[0] if _LOCALS in klass else module
        found = self.resolve_expression(text, module, scope)[0] if _DOTTED.match(text) else None
        return found if found not in self.libraries and self.defs.get(found) == "class" else None

    def _metaclass_runs(self, klass: str | None, method: str) -> list[tuple[str, str]]:
        """What making klass runs of its metaclass: `__new__` or `__init__`, the project's own."""
        meta = self.metaclass_of(klass) if klass is not None and self.defs.get(klass) == "class" else None
        return self._project_methods([self.member(meta, method) if meta is not None else None])

    def _made_runs(self, klass: str | None) -> list[tuple[str, str]]:
        """What type.__new__ runs as a class statement makes klass: the __init_subclass__ of its
        nearest ancestor that has one, and the __set_name__ of each project descriptor its body
        holds (`title = Field()`)."""
        if klass is None or self.defs.get(klass) != "class":
            return []
        found = [self.member(klass, "__init_subclass__", skip_self=True)]
        if self._set_name_defined:  # else no value a body holds can have one of the project's
            found += [self.member(holder, "__set_name__") for attribute in self._bodies.get(klass, ())
                      for holder in self._held_instances(attribute)
                      if holder is not None and holder not in self.libraries]
        return self._project_methods(found)

    def _subclassed_runs(self, base: str | None) -> list[tuple[str, str]]:
        """`type(name, (Base,), ns)` makes a subclass of Base: Base's __init_subclass__ runs."""
        if base is None or self.defs.get(base) != "class":
            return []
        return self._project_methods([self.member(base, "__init_subclass__")])

    def _project_methods(self, found: list[str | None]) -> list[tuple[str, str]]:
        return [(t, "implicit") for t in dict.fromkeys(found)
                if t is not None and t not in self.libraries and self.defs.get(t) in _METHOD_KINDS]

    @functools.cached_property
    def _bodies(self) -> dict[str, list[str]]:
        """class -> the definitions its own body holds (not its bases')."""
        if self.defined_in is not None:
            return ByName(lambda klass: self.defined_in(klass) if self.defs.get(klass) == "class" else [])
        bodies = defaultdict(list)
        for qualname in self.defs:
            owner = qualname.rpartition(".")[0]
            if self.defs.get(owner) == "class":
                bodies[owner].append(qualname)
        return bodies

    @functools.cached_property
    def _set_name_defined(self) -> bool:
        """Does any class of the project define __set_name__?"""
        if self.defined_named is not None:
            return any(q in self.defs and q not in self.libraries for q in self.defined_named("__set_name__"))
        return any(q.endswith(".__set_name__") and q not in self.libraries for q in self.defs)

    def need_local_class_scopes(self) -> None:
        """The local names of the functions around classes made inside functions (with bases),
        all at once the first time one's bases are read: an update loads the names of the
        functions of files it does not resolve as it reads them, one query each otherwise (150 in
        an update of the stdlib reaching 80 files, 1.5 s)."""
        if self._local_class_scopes:
            return
        self._local_class_scopes = True
        local = self.local_classes() if self.local_classes is not None else \
            (sub for sub in self.base_texts if _LOCALS in sub)
        self._need_scopes({function for sub in local for function in _function_scopes(sub.rsplit(_LOCALS, 1)[0])})

    def class_tree(self) -> None:
        """Make the class tree now, before any answer: a base read through the tree (`class
        Made(self.kind)` in a mixin, `kind` a subclass's attribute) then meets the same part of it
        whichever answer first needs the tree, in a full build and in an update alike."""
        self.subclasses("")

    def subclasses(self, klass: str) -> list[str]:
        """The project's classes deriving from klass, at any depth."""
        if self._children is None:
            self._children = defaultdict(list)
            for sub, bases in (self.bases_known() if self.bases_known is not None else self._all_bases()):
                for base in bases:
                    if base and base != sub:
                        self._children[base].append(sub)
            self.forget_answers()  # but the bases: the others read the tree as it was made
        return self._descendants(klass)

    def _all_bases(self) -> Iterable[tuple[str, list[str | None]]]:
        """Each project class with bases, by qualname, and its bases resolved."""
        self.need_local_class_scopes()
        return ((sub, [base for base, _ in self.resolved_bases(sub)]) for sub in self.base_texts
                if sub not in self.libraries)

    def overrides(self, target: str, receiver: str | None = None) -> list[str]:
        """The methods of subclasses of the receiver's class (by default the class defining
        `target`) that replace `target`: a call on such a value may run them."""
        klass, _, name = target.rpartition(".")
        self.subclasses(klass)  # the class tree, built once
        receiver = receiver or klass
        key = (target, receiver)
        cached = self._overrides.get(key)
        if cached is None:
            cached = self._overrides[key] = self._find_overrides(target, receiver, name)
        return cached

    def _find_overrides(self, target: str, receiver: str, name: str) -> list[str]:
        out: list[str] = []
        for sub in self._descendants(receiver):
            found = self.member(sub, name)
            if found and found != target and found not in self.libraries and found not in out:
                out.append(found)
        return sorted(out)

    def by_name(self, text: str, module: str, caller: str) -> list[tuple[str, str]]:
        """`x.m()` where nothing says what x holds: the project's definition of m and its
        overrides, when one class family alone defines m (its highest definition has every other
        one below it), no builtin type or class of the library layer has an m, and m is not a
        dunder (the graph's guess, labelled 'name'); else the class of the one project family
        having every member the caller uses of x (`p.test(); p.run()`; _duck), or of the name x
        starts with (`md.parser; md.treeprocessors.register()`: register of what the family's
        treeprocessors holds); else nothing."""
        receiver, _, name = text.rpartition(".")
        if not receiver or not _DOTTED.match(receiver) or name.startswith("__"):
            return []
        top = self._family_of(name) or self._by_use(receiver, name, caller)
        if top is None or self._not_ours(receiver, module, caller):
            return []
        return [(top, "name"), *((t, "override") for t in self.overrides(top))]

    def _by_use(self, receiver: str, name: str, caller: str) -> str | None:
        """`name` of the class _duck finds from what the caller uses of the receiver, or of the
        name the receiver starts with, then along the chain (`md.treeprocessors.register`)."""
        head, _, middle = receiver.partition(".")
        for value, parts in ((receiver, [name]), *(((head, [*middle.split("."), name]),) if middle else ())):
            used = self.receivers.get((caller, value))
            klass = self._duck(*used) if used is not None else None
            found = self._member_chain(klass, parts) if klass is not None else None
            if found is not None and found not in self.libraries and self.defs.get(found) in _METHOD_KINDS:
                return found
        return None

    def _duck(self, called: frozenset[str], read: frozenset[str]) -> str | None:
        """The highest class of the one project class family whose classes have every member the
        code calls (as methods) and reads of a value, as the value's class must; None when no
        family or several do, or a builtin type or a class of the library layer has them all
        (the value may be one)."""
        key = (called, read)
        if key in self._ducks:
            return self._ducks[key]
        found = None
        used = called | read
        if not any(used <= members for members in _BUILTIN_TYPE_MEMBERS):
            owners, library_owners = self._owners()

            def every(klass: str) -> bool:
                return all(self.defs.get(self.member(klass, n)) in _CALLED_KINDS for n in called) and \
                    all(self.member(klass, n) is not None for n in read)
            rarest = min(used, key=lambda n: len(owners.get(n, ())))
            if owners.get(rarest) and not any(every(k) for n in used for k in library_owners.get(n, ())):
                classes = {c for k in owners[rarest] for c in (k, *self.subclasses(k))}
                having = {k for k in classes if every(k)}
                tops = [k for k in having if having.isdisjoint(self.mro(k)[1:])]
                found = tops[0] if len(tops) == 1 else None
        self._ducks[key] = found
        return found

    def _not_ours(self, receiver: str, module: str, caller: str) -> bool:
        """Does the code say the receiver is anything but an instance of a project class: a module
        or a class itself, a library's or builtin's name, or a value a literal or a call of a
        library or builtin gives (`self.pattern = re.compile(...)`, `self.dict = dict(...)`)?"""
        if receiver in ("self", "cls"):
            return False
        target, how = self.resolve_expression(receiver, module, caller)
        if how in _FOREIGN or (target is not None and self.defs.get(target) in ("module", "class")):
            return True
        head, _, attribute = receiver.partition(".")
        if target is None and head in ("self", "cls") and attribute and "." not in attribute:
            target = self.member(caller.rpartition(".")[0], attribute)  # a method defined twice (py2/py3 branches)
        said: list[tuple[str, str, str]] = []  # (module, scope, value)
        kind = self.defs.get(target) if target is not None else None
        if kind in ("variable", "class_attribute", "instance_attribute") and target in self.evidence:
            where, value = self.evidence[target]
            holder = target.rpartition(".")[0]
            if kind == "instance_attribute":  # `self.dict = dict(...)` reads dict where __init__ does, not the class's
                holder = self._init_scope(holder) or where
            said.append((where, holder or where, value))
        elif "." not in receiver:
            bound, how = self.lookup(receiver, module, caller)
            if how == "bound":
                said += [(module, at, value) for value, at in self._bound_values(bound)]
        for where, scope, value in said:
            if _LITERAL.match(value):
                return True
            callee = _callee_of(value)
            if callee is None and value.endswith("..."):  # stored cut: its start says what is called
                called = _CALL_HEAD.match(value)
                callee = called.group(1) if called else None
            if callee is not None and _DOTTED.match(callee):
                found, how = self.resolve_call(callee, where, scope if scope in self.defs else where)
                if found is not None and self._makes_foreign(found, how):
                    return True
        return False

    def _makes_foreign(self, found: str, how: str | None) -> bool:
        """Does calling `found` give a builtin's or a library's value: a builtin type (`dict(...)`,
        not `next(it)`, which gives what it is handed), a library class, or a library function
        that does not hand back what it is given (`re.compile`, not `copy.copy`)?"""
        if how == "builtin":
            return isinstance(getattr(builtins, found.rpartition(".")[2], None), type)
        if how in _FOREIGN or found in self.libraries:
            return found not in _PASSES_THROUGH
        return False

    def _owners(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """name -> the project's classes defining a method, property or attribute of that name in
        their own body; the same for the library layer's classes. An update's resolver answers a
        name at a time, from the definitions of that name (defined_named)."""
        if self._owned_by is None:
            if self.defined_named is not None:
                pairs: dict[str, tuple[dict, dict]] = {}

                def of(name: str) -> tuple[dict, dict]:
                    found = pairs.get(name)
                    if found is None:
                        found = pairs[name] = self._owners_of(self.defined_named(name))
                    return found
                self._owned_by = (ByName(lambda name: of(name)[0].get(name, [])),
                                  ByName(lambda name: of(name)[1].get(name, [])))
            else:
                self._owned_by = self._owners_of(self.defs)
        return self._owned_by

    def _owners_of(self, qualnames: Iterable[str]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """_owners' two maps, of the definitions named (each once)."""
        owners: dict[str, list[str]] = defaultdict(list)
        library: dict[str, list[str]] = defaultdict(list)
        for qualname in qualnames:
            if self.defs.get(qualname) in _MEMBER_KINDS:
                klass, _, name = qualname.rpartition(".")
                if self.defs.get(klass) == "class":
                    (library if qualname in self.libraries else owners)[name].append(klass)
        return owners, library

    def _family_of(self, name: str) -> str | None:
        """The highest definition of the one project class family defining that method or
        property (by_name): none when an attribute of another family defines the name too, or a
        builtin type or a class of the library layer has it as a method."""
        found = self._family.get(name, _UNKNOWN)
        if found is _UNKNOWN:
            found = None
            owners, library = self._owners()
            if name not in _BUILTIN_MEMBERS and not name.startswith("__") and \
                    not any(self.defs.get(f"{k}.{name}") in _METHOD_KINDS for k in library.get(name, ())):
                classes = owners.get(name, ())
                defining = set(classes)
                top = [k for k in classes if defining.isdisjoint(self.mro(k)[1:])]
                if len(top) == 1 and self.defs.get(f"{top[0]}.{name}") in _METHOD_KINDS:
                    found = f"{top[0]}.{name}"
            self._family[name] = found
        return found

    def _descendants(self, klass: str) -> list[str]:
        found = self._below.get(klass)
        if found is None:
            seen = {klass}
            stack = list(self._children.get(klass, ()))
            found = []
            while stack and len(seen) < 4096:
                sub = stack.pop()
                if sub not in seen:
                    seen.add(sub)
                    found.append(sub)
                    stack.extend(self._children.get(sub, ()))
            self._below[klass] = found
        return found

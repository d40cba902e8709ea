"""Name resolution across the whole repository: imports, base classes and callees.

Works on plain rows so the indexer can feed it fresh extraction results for a full build, or
the database's rows of unchanged files plus fresh rows of changed files for an update.
Static, flow-insensitive and best effort: a bare name means its innermost binding; a value's
class comes from annotations, assigned values and what functions return; arguments are bound to
parameters one call deep; a call may answer several definitions (resolve_call_all). What runs
without being named (descriptors, builtins' protocol methods, overrides) is in dispatch.py, what
containers and returned tuples hold in containers.py, a value's class and what functions
return in values.py, what callers pass to parameters in flows.py, what an expression's text says
in expressions.py.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable

from .containers import Containers
from .dispatch import Dispatch
from .flows import MAX_HOPS, Flows
from .expressions import (
    _DOTTED, _SUPER, _SUPER_OF, BUILTINS, _SELF_KINDS, _SELF_OR_STATIC, _LOCALS, _MAX_DOTS, _CALLABLE_OR_CLASS,
    _function_scopes, _CALLABLE_KINDS, _METHOD_KINDS, _IDENTIFIER, _NAMEISH, _TYPE_OF_CLASS, _CALLS_ITS_ARGUMENTS,
    PROTOCOL_CALLS, ONLY_MAKES_AN_ITERATOR, _ELEMENT_OF, _ENTERED, _CAUGHT, _DEFAULT, _FORWARDED, _evaluated,
    _GENERIC, _literal_elements, _unique, _bare_annotation, _OWN_CLASS, _GOT, _SUBSCRIPTED, _callee_of,
    _call_keywords, _split_receiver, _either, _is_lambda)
from .values import Values, _kept


_MEMO_LIMIT = 1 << 16
# The answers besides the first that come from what the code assigns (Resolver.assigned_callees).
ASSIGNED_RESOLUTIONS = ("alias", "container")
# Answers resolve_call never gives, only resolve_call_all (from what callers pass, a guess by name):
# a call's first row of these passes nothing on to learn_flows, as its resolve_call answer is None.
ALL_ONLY_RESOLUTIONS = ("flow", "name")
_CONSTANTS = frozenset({"None", "True", "False", "Ellipsis", "NotImplemented"})
_PROPERTY_GET = frozenset({"property.__get__", "super().__get__"})  # a property subclass handing over
_NOTHING: dict = {}
_MAKES_A_CLASS = "builtins.type"  # with three arguments: type(name, bases, namespace)
_DEEPEST = 1 << 30
_ASSIGNED_KINDS = frozenset({"class_attribute", "variable"})  # names whose assigned value _alias_of reads
_NAMES_A_DEFINITION = ("local", "import")  # a callee that is the definition itself, not a variable holding one


def _remember(cache: dict, key: object, value: object) -> object:
    """Store an answer in a cache that is emptied when full: most answers are asked again from
    the same function soon after, and a full build asks hundreds of thousands of them."""
    if len(cache) >= _MEMO_LIMIT:
        cache.clear()
    cache[key] = value
    return value


class _Busy:
    """The names and functions being resolved, outermost first. Finding one again cuts a cycle;
    `low` keeps the outermost place a cut reached, so an answer whose cuts all fell inside it
    is the same wherever it is asked, and can be kept."""

    def __init__(self) -> None:
        self.depth: dict[str, int] = {}
        self.low = _DEEPEST

    def __contains__(self, name: str) -> bool:
        depth = self.depth.get(name)
        if depth is not None and depth < self.low:
            self.low = depth
        return depth is not None

    def __len__(self) -> int:
        return len(self.depth)

    def add(self, name: str) -> None:
        self.depth[name] = len(self.depth)

    def discard(self, name: str) -> None:
        self.depth.pop(name, None)

    def enter(self) -> tuple[int, int]:
        """An answer starts here: the mark `leave` takes."""
        mark = (len(self.depth), self.low)
        self.low = _DEEPEST
        return mark

    def leave(self, mark: tuple[int, int]) -> bool:
        """The answer started at mark is done: may it be kept (no cut reached outside it)?"""
        depth, outer_low = mark
        low, self.low = self.low, min(outer_low, self.low)
        return low >= depth


class Resolver(Dispatch, Containers, Values, Flows):
    def __init__(
        self,
        defs: dict[str, str],
        imports: Iterable[tuple],
        bases: Iterable[tuple],
        libraries: set[str] | frozenset = frozenset(),
        evidence: dict[str, tuple[str, str]] | None = None,
        returns: dict[str, tuple[str, ...]] | None = None,
        decorators: dict[str, tuple[str, ...]] | None = None,
        metaclasses: dict[str, tuple[str, str]] | None = None,
    ) -> None:
        """defs: qualname -> kind for every definition (modules, classes, members, globals,
        nested functions). imports: (module, scope_qualname, bound_name, target, is_star,
        imported_module). bases: (class_qualname, module, position, base_text). libraries: the
        definitions of the library layer: a call that ends there resolves as 'library'. evidence:
        qualname -> (module, text) saying what a definition holds or returns: an attribute's or
        variable's annotation or assigned value, a function's signature (its return annotation).
        returns: function qualname -> the expressions its return statements give. decorators:
        function qualname -> its decorators as written, outermost first."""
        self._memos: list[dict | set] = []  # the answers worked out and kept (_memo)
        self.defs = defs
        self.evidence = evidence or {}
        # function qualname -> name -> (kind, value, annotation, position) for the callers being resolved
        self.scope_facts: dict[str, dict[str, tuple]] = defaultdict(dict)
        self.star_parameters: set[tuple[str, str]] = set()  # (function, name) of each *args
        self.keyword_parameters: set[tuple[str, str]] = set()  # (function, name) of each **kwargs
        # function qualname -> parameter position or keyword -> arguments passed to it (learn_flows)
        self.flows: dict[str, dict[str | int, list[tuple[str, str, str]]]] = defaultdict(lambda: defaultdict(list))
        self.returns: dict[str, tuple[str, ...]] = dict(returns or {})
        self.decorators: dict[str, tuple[str, ...]] = dict(decorators or {})
        self.metaclasses: dict[str, tuple[str, str]] = dict(metaclasses or {})  # class -> (module, keyword)
        self._metaclasses: dict[str, str | None] = self._memo({})  # class -> the project's metaclass that makes it
        self._children: dict[str, list[str]] | None = None
        self._owned: dict[str, tuple[str, ...]] | None = None  # _named_in
        self._family: dict[str, str | None] = self._memo({})  # by_name
        self._owned_by: tuple[dict, dict] | None = None  # _duck
        self._ducks: dict[tuple[frozenset, frozenset], str | None] = self._memo({})
        # (caller, receiver) -> (members called, members read) of that receiver, two or more (by_name)
        self.receivers: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}
        # a container's last name -> the calls keeping values in it (resolution.keeping_sites); None: not read yet
        self.kept: dict[str, list[tuple]] | None = None
        self._kept: dict[tuple, list[tuple[str, str, str]]] = self._memo({})  # _kept_in
        # an attribute's name -> its values written by `self.<name> = v` (resolution.written_values); None: not read yet
        self.written: dict[str, list[tuple[str, str, str]]] | None = None
        self._overrides: dict[tuple[str, str], list[str]] = self._memo({})
        self._members: dict[tuple[str, str, bool], str | None] = self._memo({})
        self._below: dict[str, list[str]] = self._memo({})
        self._bound: dict[tuple, list[tuple[str, str]]] = self._memo({})  # _through_bindings
        self._lookups: dict[tuple[str, str, str], tuple[str | None, str | None]] = self._memo({})
        self._hops = 0  # arguments followed back through callers' parameters (_flow_targets)
        self._flowing = False
        # scopes -> (bindings rows, parameters rows) of those functions; None: all are learned
        self.scope_loader: Callable[[list[str]], tuple[Iterable, Iterable]] | None = None
        self._scopes_known: set[str] = set()
        self._types: dict[str, str | None] = self._memo({})
        self._via_type: set[str] = self._memo(set())
        self._busy = _Busy()
        self.libraries = libraries
        self.module_bindings: dict[str, str] = {}
        self.scope_bindings: dict[str, dict[str, str]] = {}
        self.star_sources: dict[str, list[str]] = {}
        self.learn_imports(imports)
        self.base_texts: dict[str, list[str]] = {}
        self.class_module: dict[str, str] = {}
        self.learn_bases(bases)
        # An update's resolver learns the repository a module at a time (learning.py); where a full
        # build's reads every definition, it asks these. The classes and their resolved bases, by
        # qualname: the stored answers of the files it does not resolve again (Dispatch.subclasses)
        self.bases_known: Callable[[], Iterable[tuple[str, list[str | None]]]] | None = None
        # An update's definitions of a name, learned (Dispatch._owners, _set_name_defined; learning.py)
        self.defined_named: Callable[[str], Iterable[str]] | None = None
        # An update's definitions directly in a class or module, learned (_bodies, _named_in)
        self.defined_in: Callable[[str], list[str]] | None = None
        # An update's classes made inside functions, with bases (need_local_class_scopes)
        self.local_classes: Callable[[], Iterable[str]] | None = None
        self._local_class_scopes = False
        self._canon: dict[str, str | None] = self._memo({})
        self._bases: dict[str, list[tuple[str | None, str | None]]] = {}
        self._mro: dict[str, list[str]] = {}
        self._cycles: dict[str, set[str]] = {}  # a class -> the classes it derives from and that derive from it
        self._calls: dict[tuple[str, str], tuple[str | None, str | None]] = self._memo({})
        self._all: dict[tuple, list[tuple[str | None, str | None]]] = self._memo({})  # resolve_call_all
        self._accessors: dict[tuple[str, str], str | None] = self._memo({})

    def _memo(self, cache: dict | set) -> dict | set:
        """A cache of answers, forgotten with the others (forget_answers)."""
        self._memos.append(cache)
        return cache

    def forget_answers(self) -> None:
        """Forget every answer worked out so far but the classes' bases and what follows from
        them alone (their MROs): those worked out while the class tree was being made read the
        part of it made (`self.kind` of a mixin, a subclass's attribute), which the answers asked
        later, in a full build or an update, must not."""
        for cache in self._memos:
            cache.clear()

    def learn_imports(self, imports: Iterable[tuple]) -> None:
        """imports rows (module, scope_qualname, bound_name, target, is_star, imported_module): the
        names each module and function binds, the modules each module star-imports."""
        for module, scope, bound, target, is_star, imported_module in imports:
            if is_star:
                if scope == module:
                    self.star_sources.setdefault(module, []).append(imported_module)
                continue
            if bound is None or target is None:
                continue
            if scope == module:
                self.module_bindings.setdefault(f"{module}.{bound}", target)
            else:
                self.scope_bindings.setdefault(scope, {}).setdefault(bound, target)

    def learn_bases(self, bases: Iterable[tuple]) -> None:
        """inheritance rows (class_qualname, module, position, base_text): each class's bases as written."""
        for class_qualname, module, _position, base_text in sorted(bases, key=lambda r: (r[0], r[2])):
            self.base_texts.setdefault(class_qualname, []).append(base_text)
            self.class_module[class_qualname] = module

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
        found = self._bases.get(class_qualname)
        if found is None:  # an update learns the class's module here, and may take its stored bases (settle_bases)
            module = self.class_module.get(class_qualname, class_qualname.rpartition(".")[0])
            found = self._bases.get(class_qualname)
        if found is not None:
            return found
        self._bases[class_qualname] = []  # guards against a class deriving from itself
        if _LOCALS in class_qualname:
            self.need_local_class_scopes()
        scope = class_qualname.rsplit(_LOCALS, 1)[0] if _LOCALS in class_qualname else module
        out = []
        for text in self.base_texts.get(class_qualname, ()):
            generic = _GENERIC.match(text)  # class S(Serializer[str]): the class is Serializer
            out.append(self.resolve_expression(generic.group(1) if generic else text, module, scope))
        self._bases[class_qualname] = out
        return out

    def settle_bases(self, answers: dict[str, list[tuple[str | None, str | None]]]) -> None:
        """Take these classes' bases as answered (an update: as stored), not as answered again."""
        self._bases.update(answers)

    def mro(self, class_qualname: str) -> list[str]:
        """Depth-first, left to right, keeping the last visit of a class reached twice: C3's
        answer on the usual diamonds, and the same order as the ancestors_of() macro."""
        found = self._mro.get(class_qualname)
        if found is not None:
            return found

        def ordered(current: str, bases: list[str]) -> list[str]:
            merged = [current, *(c for b in bases for c in self._mro[b] if c != current)]
            last = {name: i for i, name in enumerate(merged)}
            return sorted(last, key=last.__getitem__)

        return self._from_bases(class_qualname, self._mro, ordered)

    def _from_bases(self, klass: str, known: dict, answer: Callable[[str, list[str]], object],
                    own: Callable[[str], object] = lambda current: None) -> object:
        """Answer klass from its bases' answers (`answer(class, bases)`), unless `own` answers it
        alone, keeping each ancestor's answer in `known` on the way: each class once, without
        recursion, for hierarchies may be thousands deep. Classes that derive from each other
        (`class A(B)`, `class B(A)`: Python refuses them) leave out the bases among them, each of
        them, whichever was asked first: a base still being answered closes such a cycle, the
        classes on the way from it are one family (`_cycles`), and each answers from its bases
        outside the family."""
        pending, working = [klass], {klass}
        while pending:
            current = pending[-1]
            settled = own(current)
            if settled is None:
                bases = [b for b, _ in self.resolved_bases(current) if b and b != current and self.defs.get(b) == "class"]
                waiting = None
                for b in bases:
                    if b in working:  # pending from b up to current derive from each other
                        self._cycle(pending[pending.index(b):])
                    elif b not in known and waiting is None:
                        waiting = b
                if waiting is not None:
                    pending.append(waiting)
                    working.add(waiting)
                    continue
                family = self._cycles.get(current)
                settled = answer(current, [b for b in bases if b in known
                                           and (family is None or self._cycles.get(b) is not family)])
            known[current] = settled
            pending.pop()
            working.discard(current)
        return known[klass]

    def _cycle(self, classes: list[str]) -> None:
        """These classes derive from each other: one family with any each was in before."""
        family = set(classes)
        for klass in classes:
            family |= self._cycles.get(klass, set())
        for klass in family:
            self._cycles[klass] = family

    def member(self, class_qualname: str, name: str, skip_self: bool = False) -> str | None:
        key = (class_qualname, name, skip_self)
        found = self._members.get(key, "")
        if found != "":
            return found
        found = None
        for klass in self.mro(class_qualname)[1 if skip_self else 0 :]:
            candidate = f"{klass}.{name}"
            if candidate in self.defs:
                found = candidate
                break
        return _remember(self._members, key, found)

    # -- names in code ----------------------------------------------------------------------
    def learn_scopes(self, bindings: Iterable[tuple], parameters: Iterable[tuple]) -> None:
        """The local names of the functions whose calls are resolved next: bindings rows
        (scope, name, kind, value, annotation) and parameters rows (owner, position, name, annotation,
        kind, default).
        A name assigned several values keeps them all: a call through it may run each."""
        self._lookups.clear()  # what names mean may change with what is learned
        self._metaclasses.clear()
        self._bound.clear()
        self._all.clear()
        for owner, position, name, annotation, kind, default in parameters:
            # a default that names something is a value the parameter holds when the caller leaves it out
            held = (_DEFAULT + default,) if default and _NAMEISH.match(default) and default not in _CONSTANTS else ()
            self.scope_facts[owner][name] = ("parameter", held, annotation, position)
            self._scopes_known.add(owner)
            if kind == "var-positional":
                self.star_parameters.add((owner, name))
            elif kind == "var-keyword":
                self.keyword_parameters.add((owner, name))
        for scope, name, kind, value, annotation in bindings:
            self._scopes_known.add(scope)
            if kind == "return":
                continue
            if kind == "loop" and value:
                value = _ELEMENT_OF + value  # an element of what the loop iterates over
            elif kind == "with" and value:
                value = _ENTERED + value  # what the context manager's __enter__ returns
            elif kind == "as" and value:
                value = _CAUGHT + value  # except E as e: an instance of E
            known = self.scope_facts[scope].get(name)
            if known is None:
                self.scope_facts[scope][name] = ("assignment" if value else kind, (value,) if value else (),
                                                 annotation, None)
            elif kind in ("global", "nonlocal"):
                self.scope_facts[scope][name] = (kind, (), None, None)
            elif known[0] == "parameter":  # `if cb is None: cb = default`: the default as well as the arguments
                if value and value not in known[1]:
                    self.scope_facts[scope][name] = ("parameter", known[1] + (value,), known[2], known[3])
            elif known[0] not in ("global", "nonlocal"):
                values = known[1] + ((value,) if value and value not in known[1] else ())
                self.scope_facts[scope][name] = ("assignment" if values else known[0], values,
                                                 known[2] or annotation, None)

    def _need_scopes(self, scopes: Iterable[str]) -> None:
        """Make sure the local names of these functions are known (an update resolves some files
        only, and asks `scope_loader` for the others' names when it reads them: a return
        statement, a name looked up there)."""
        if self.scope_loader is None:
            return
        missing = [scope for scope in scopes if scope not in self._scopes_known]
        if missing:
            self._scopes_known.update(missing)
            bindings, parameters = self.scope_loader(missing)
            if bindings or parameters:  # learning clears what names were found to mean
                self.learn_scopes(bindings, parameters)

    def lookup(self, name: str, module: str, scope: str) -> tuple[str | None, str | None]:
        """What a bare name means at `scope`: (dotted target, how). A name bound in an enclosing
        function (a parameter, an assignment, a loop variable...) is ("scope\x00name", "bound"):
        it never means a module-level definition of the same name."""
        key = (name, module, scope)
        found = self._lookups.get(key)
        if found is None:
            found = _remember(self._lookups, key, self._lookup(name, module, scope))
        return found

    def _lookup(self, name: str, module: str, scope: str) -> tuple[str | None, str | None]:
        if scope != module:
            if self.scope_loader is not None and self.defs.get(scope) != "class":
                self._need_scopes(_function_scopes(scope))  # an update: a function of a file not resolved now
            for function_scope in _function_scopes(scope):
                nested = f"{function_scope}{_LOCALS}{name}"
                if nested in self.defs:
                    return nested, "local"
                bound = self.scope_bindings.get(function_scope, _NOTHING).get(name)
                if bound is not None:
                    return bound, "import"
                facts = self.scope_facts.get(function_scope, _NOTHING).get(name)
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
            # Asked while a name it reads is being resolved (`x = x.cut(); x.filter()`), the answer
            # lacks what that name holds: it is not kept, the top-level one is.
            mark = self._busy.enter()
            flowing, self._flowing = self._flowing, False  # cached: never from what callers pass
            try:
                found = self._resolve_call(text, module, caller)
                if found[0] in self.decorators and found[1] != "builtin":
                    wrapper = self._wrapper_of(found[0])  # @log def work(): work() runs log's wrapper
                    found = (wrapper, "wrapper") if wrapper is not None else found
            finally:
                self._flowing = flowing
                whole = self._busy.leave(mark)
            if found[0] is not None and found[0] in self.libraries and found[1] != "builtin":
                found = (found[0], "library")
            elif found == (caller, "lambda"):  # a lambda called where it is written: its own code
                found = (None, None)
            if whole:
                _remember(self._calls, key, found)
        return found

    def _own_class(self, text: str, scope: str) -> str | None:
        """`type(self)`, `self.__class__` in a method: its class (or a subclass's, when called on one)."""
        if text in _OWN_CLASS and self.defs.get(scope) in ("method", "property"):
            return scope.rpartition(".")[0]
        return None

    def _resolve_call(self, text: str, module: str, caller: str) -> tuple[str | None, str | None]:
        own = self._own_class(text, caller)
        if own is not None:
            return own, "self"
        head, _, rest = text.partition(".")
        if rest and head in ("self", "cls") and "." not in rest:
            kind = self.defs.get(caller)
            if kind in _SELF_KINDS:
                found = self.member(caller.rpartition(".")[0], rest)
                if found is not None and (self.defs.get(found) == "class_attribute" or (
                        self.defs.get(found) == "instance_attribute"
                        and _TYPE_OF_CLASS.match(_bare_annotation(self.evidence.get(found, ("", ""))[1] or "")))):
                    aliased = self._alias_of(found)  # signer = Signer in the class body; self.signer()
                    if aliased is not None:
                        return aliased, "alias"
                if self.defs.get(found) in ("class_attribute", "instance_attribute"):
                    runs = self._call_method(self.type_of(found))  # _regex = Memoizer(); self._regex()
                    if runs is not None:
                        return runs, "type"
                if found is None:  # a template method: the class lacks it, its subclasses define it
                    found = self._member_below(caller.rpartition(".")[0], rest)
                return (found, "self") if found else (None, None)
        if head.startswith("super()"):
            match = _SUPER.match(text)
            if match and self.defs.get(caller) in _SELF_OR_STATIC:
                found = self.member(caller.rpartition(".")[0], match.group(1), skip_self=True)
                return (found, "super") if found else (None, None)
            return None, None
        if head.startswith("super("):
            found = self._super_of(text, module, caller)
            return (found, "super") if found else (None, None)
        if not _DOTTED.match(text):
            found = self.resolve_on_result(text, module, caller)
            if found[0] is None:  # partial(f, x)()
                partial = self._partial_of(text, module, caller)
                found = (partial, "partial") if partial is not None else found
            if found[0] is None:  # make()(): what make returns
                returned = self._returned_callables(text, module, caller)
                found = (returned[0], "return") if returned else found
            if found[0] is None:  # HANDLERS["a"]()
                held = self._container_targets(text, module, caller)
                found = held[0] if held else found
            if found[0] is None:  # Guard()(error): Guard.__call__
                runs = self._called_instance(text, module, caller)
                found = runs[0] if runs else found
            if found[0] is None:  # getattr(self, "visit_" + kind)(node)
                named = self._getattr_targets(text, module, caller)
                found = (named[0], "getattr") if named else found
            return found
        target, how = self.resolve_expression(text, module, caller)
        if target is None:
            return None, None
        if self.defs.get(target) in ("variable", "class_attribute") and how != "builtin":
            aliased = self._alias_of(target)  # h = helper at module level; h()
            if aliased is not None:
                return aliased, "alias"
            runs = self._call_method(self.type_of(target))  # merged = curry(merge); merged(): curry.__call__
            if runs is not None:
                return runs, "type"
        return target, how

    def _super_of(self, text: str, module: str, caller: str) -> str | None:
        """`super(C, self).f`: the first f after C in the MRO of the class the method belongs to
        (its own class stands for type(self)); outside a method, or where C is not among that
        class's bases, the first f in C's bases."""
        match = _SUPER_OF.match(text)
        if match is None:
            return None
        start = self.resolve_expression(match.group(1), module, caller)[0]
        if start is None or self.defs.get(start) != "class":
            return None
        order = self.mro(caller.rpartition(".")[0]) if self.defs.get(caller) in _SELF_OR_STATIC else []
        after = order[order.index(start) + 1:] if start in order else self.mro(start)[1:]
        name = match.group(2)
        return next((f"{klass}.{name}" for klass in after if f"{klass}.{name}" in self.defs), None)

    def _call_method(self, holder: str | None) -> str | None:
        """What calling an instance of the class runs: its __call__, when the project defines it."""
        found = self.member(holder, "__call__") if holder is not None and self.defs.get(holder) == "class" else None
        return found if found is not None and found not in self.libraries else None

    def _wrapper_of(self, function: str) -> str | None:
        """What runs when a decorated function is called: the function its outermost decorator
        returns (a project function returning a nested one, `return wrapper`); None when the
        decorator hands back what it was given or is not the project's."""
        if function in self._busy:
            return None
        module = self.evidence.get(function, (None,))[0]
        text = self.decorators[function][0]
        if module is None or not text:
            return None
        scope = function.rsplit(_LOCALS, 1)[0] if _LOCALS in function else function.rpartition(".")[0]
        self._busy.add(function)
        try:
            factory = _callee_of(text)
            if factory is not None:  # @tag("x"): what tag("x") returns decorates
                target, _ = self.resolve_call(factory, module, scope)
                made = [t for t, what in self._returned(target) if what == "callable"] if target else []
                decorator = made[0] if made else None
            else:
                decorator = self.resolve_expression(text, module, scope)[0] if _DOTTED.match(text) else None
            if decorator is not None and decorator not in self.libraries and self.defs.get(decorator) == "class":
                return self._call_method(decorator)  # @curry def f(): f is a curry, f() runs curry.__call__
            if decorator is None or decorator in self.libraries or self.defs.get(decorator) not in _CALLABLE_KINDS:
                return None
            returned = [t for t, what in self._returned(decorator) if what == "callable" and t != decorator]
            return returned[0] if returned and returned[0] != function else None
        finally:
            self._busy.discard(function)

    def _alias_of(self, qualname: str) -> str | None:
        """The function or class a module-level or class-level name was assigned (`h = helper`)."""
        module, said = self.evidence.get(qualname, (None, None))
        named_class = _TYPE_OF_CLASS.match(_bare_annotation(said or ""))  # signer: type[Signer] = Signer
        said = _bare_annotation(named_class.group(1)) if named_class else said
        if not said or qualname in self._busy:
            return None
        if not _DOTTED.match(said):  # get_stderr = _make_cached(...): the function it returns
            if _callee_of(said) is None or self.defs.get(qualname) != "variable":
                return None
            self._busy.add(qualname)
            try:
                returned = self._returned_callables(said, module, module)
            finally:
                self._busy.discard(qualname)
            return returned[0] if returned else None
        self._busy.add(qualname)
        try:
            scope = qualname.rpartition(".")[0]
            target, _ = self.resolve_expression(said, module, scope if self.defs.get(scope) == "class" else module)
        finally:
            self._busy.discard(qualname)
        if target is not None and self.defs.get(target) in _CALLABLE_OR_CLASS:
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
    def _through_binding(self, bound: str, rest: str, module: str) -> tuple[str | None, str | None]:
        found = self._through_bindings(bound, rest, module)
        return found[0] if found else (None, None)

    def _through_bindings(self, bound: str, rest: str, module: str) -> list[tuple[str, str]]:
        """A call through a name bound in a function: by its annotation or assigned values
        ('type': `x = C(); x.f()`, `def g(x: C): x.f()`), as an alias of what it was assigned
        ('alias': `h = helper; h()`), what a call it was assigned returns ('return'), `self`/`cls`,
        or, for a parameter, the arguments its callers pass ('flow', only from resolve_call_all);
        anything else resolves to nothing."""
        if len(self._busy) > 16:
            self._busy.low = -1
            return []
        if bound in self._busy:  # `x = x.parent()`: no answer from itself
            return []
        key = (bound, rest, self._flowing, self._hops)
        found = self._bound.get(key)
        if found is not None:
            return found
        busy = self._busy
        mark = busy.enter()
        busy.add(bound)
        try:
            found = self._binding_targets(bound, rest, module)
        finally:
            busy.discard(bound)
            whole = busy.leave(mark)
        if whole:  # no cycle cut outside this answer: the same from anywhere
            _remember(self._bound, key, found)
        return found

    def _binding_targets(self, bound: str, rest: str, module: str) -> list[tuple[str, str]]:
        scope, _, name = bound.partition("\x00")
        kind, values, annotation, position = self.scope_facts[scope][name]
        holder = self._instance_of(bound)
        if holder is None and annotation:
            holder = self._type_of_annotation(annotation, module, scope)
        if holder is not None and (rest or not annotation or kind != "parameter"):
            if not rest and kind == "parameter" and self.defs.get(scope) == "classmethod":
                return [(holder, "self")]  # cls(): the class (a subclass's, when called on one)
            found = self._member_chain(holder, rest.split(".")) if rest else None
            return [(found, "type")] if found else []
        # an annotated parameter called itself (`def make(f: Field | type): f()`): what callers pass
        found: list[tuple[str, str]] = []
        if values:  # what the function assigns it (a parameter's default set in the body too)
            flowing = self._flowing  # flows reach calls on a parameter itself, or on a name it is assigned to
            try:
                for value in values:
                    self._flowing = flowing and self._names_a_parameter(value, scope)
                    found += self._value_targets(value, rest, module, scope)
                found = _unique(found)
            finally:
                self._flowing = flowing
        if kind == "parameter" and self._flowing and self._hops < MAX_HOPS:
            found = _unique([*found, *self._flow_targets(scope, name, position, rest)])
        return found

    def _names_a_parameter(self, value: str, scope: str) -> bool:
        """`accessor_func = accessor or default`: the value is (a side of it is) a parameter of scope;
        `for check in checks`, `for check in self.checks`: an element of a *checks (kept by __init__)."""
        if value.startswith(_ELEMENT_OF):
            iterated = value[1:]
            if iterated.startswith("self.") and self.defs.get(scope) in _SELF_KINDS:
                return self.stored_star(scope.rpartition(".")[0] + iterated[4:]) is not None
            return (scope, iterated) in self.star_parameters
        facts = self.scope_facts.get(scope, _NOTHING)
        return any(_IDENTIFIER.match(side) and facts.get(side, ("",))[0] == "parameter" for side in _either(value))

    def _value_targets(self, value: str, rest: str, module: str, scope: str) -> list[tuple[str, str]]:
        """What a call through a name holding `value` runs: the function or class it names
        (alias), a method of the class it is an instance of (type), or what a call returns; a
        lambda, the function it is written in (lambda); each side of an `or`."""
        if value.startswith(_FORWARDED):
            return self._forwarded_targets(value[1:], rest, scope)
        value, scope = _evaluated(value, scope)
        if not rest and _is_lambda(value):
            return [(scope, "lambda")] if self.defs.get(scope) in _CALLABLE_KINDS else []
        if not rest and len(either := _either(value)) > 1:
            return _unique(t for side in either for t in self._value_targets(side, rest, module, scope))
        if value.startswith(_CAUGHT):  # except (A, B) as e: e.f() runs A.f or B.f
            named = _literal_elements(value[1:]) if value[1:2] == "(" else [value[1:]]
            classes = [self.resolve_expression(n, module, scope)[0] for n in named or ()]
            found = [self._member_chain(k, rest.split(".")) for k in classes
                     if rest and k is not None and self.defs.get(k) == "class"]
            return [(f, "type") for f in dict.fromkeys(found) if f is not None]
        if value.startswith(_ENTERED):
            manager = self._type_of_value(value[1:], module, scope)
            enter = self.member(manager, "__enter__") if manager else None
            holder = self.type_of(enter) if enter else None
            found = self._member_chain(holder, rest.split(".")) if holder and rest else None
            return [(found, "type")] if found else []
        if value[-1:] == "]" and (unpacked := self._unpacked(value, rest, module, scope)) is not None:
            return unpacked
        if value.startswith(_ELEMENT_OF):
            holder = self._element_type(value[1:], module, scope) if rest else None
            if holder is not None:  # for p in self.get_params(): p.f(), where get_params -> List[Parameter]
                found = self._member_chain(holder, rest.split("."))
                return [(found, "type")] if found else []
            found = [t for element, in_module, where in self._elements(value[1:], module, scope)
                     for t in self._value_targets(element, rest, in_module, where)]
            if rest:  # and what the elements written as calls make (`[Arg(), Opt()]`, `.append(Arg())`)
                members = (self._member_chain(k, rest.split(".")) for k in self._literal_types(value[1:], module, scope))
                found += [(f, "type") for f in members if f is not None]
            return _unique(found)
        if not rest:
            if _DOTTED.match(value):
                head, _, tail = value.partition(".")
                bound, how = self.lookup(head, module, scope)
                if how == "bound":  # each value the name may hold: `fmt.row` of every fmt given
                    found = []
                    for t, held in self._through_bindings(bound, tail, module):
                        if self.defs.get(t) not in _CALLABLE_OR_CLASS:  # `cls = self.node_class`: the class
                            t, held = self._alias_of(t) if self.defs.get(t) in _ASSIGNED_KINDS else None, "alias"
                        if t is not None:
                            found.append((t, held if held in ("partial", "lambda") else "alias"))
                    return _unique(found)
                target, _ = self.resolve_expression(value, module, scope)
                if target and self.defs.get(target) in _CALLABLE_OR_CLASS:
                    return [(target, "alias")]
                return []
            partial = self._partial_of(value, module, scope)
            if partial is not None:
                return [(partial, "partial")]
            named = self._getattr_targets(value, module, scope)
            if named:  # f = getattr(self, "visit_" + kind); f()
                return [(t, "getattr") for t in named]
            return self._returned_answers(value, module, scope) or \
                self._container_targets(value, module, scope) or \
                self._called_instance(value, module, scope)  # f = FUNCS.get(fmt); f(). c = C(); c()
        holder = self._type_of_value(value, module, scope)
        found = self._member_chain(holder, rest.split(".")) if holder else None
        return [(found, "type")] if found else self._field_targets(value, rest, module, scope)

    def _called_instance(self, value: str, module: str, scope: str) -> list[tuple[str, str]]:
        runs = self._call_method(self._type_of_value(value, module, scope))
        return [(runs, "type")] if runs is not None else []

    def _field_targets(self, value: str, rest: str, module: str, scope: str) -> list[tuple[str, str]]:
        """`rest` of a value whose class the code does not say, read from the value itself: a
        name's assigned values, a container's elements, a keyword of the call that made it
        (`Format(row=plain_row).row`, namedtuples and the like)."""
        if _DOTTED.match(value):
            head, _, tail = value.partition(".")
            bound, how = self.lookup(head, module, scope)
            return self._through_bindings(bound, f"{tail}.{rest}" if tail else rest, module) if how == "bound" else []
        item = _SUBSCRIPTED.match(value) or _GOT.match(value)
        if item is not None:
            return _unique(t for element, in_module, where in self._elements(item.group(1), module, scope, calls=True)
                           for t in self._value_targets(element, rest, in_module, where))
        field, _, tail = rest.partition(".")
        given = _call_keywords(value).get(field) if _callee_of(value) is not None else None
        return self._value_targets(given, tail, module, scope) if given else []

    def resolve_call_all(self, text: str, module: str, caller: str, arguments: Iterable[str] = (),
                         first: tuple[str | None, str | None] | None = None) -> list[tuple[str | None, str | None]]:
        """Every definition a call may run, the first as resolve_call says: several values
        assigned to one name, the arguments bound to a parameter, the functions a call returns,
        the elements of a container, the overrides in subclasses of the receiver's class
        (`self.f()` may run a subclass's f), and what a library function is given to call
        (`map(f, xs)` runs f). first: resolve_call's answer, when the caller has it already."""
        first = first or self.resolve_call(text, module, caller)
        called = _CALLS_ITS_ARGUMENTS.get(first[0]) if first[1] in ("builtin", "library", "external") else None
        protocol = PROTOCOL_CALLS.get(first[0]) if first[1] in ("builtin", "library", "external") else None
        key = (text, caller, tuple(arguments)) if called or protocol or first[0] == _MAKES_A_CLASS else (text, caller)
        found = self._all.get(key)
        if found is None:
            mark = self._busy.enter()
            try:
                found = self._resolve_call_all(first, text, module, caller, arguments, called, protocol)
            finally:
                whole = self._busy.leave(mark)
            if whole:
                _remember(self._all, key, found)
        return list(found)

    def _resolve_call_all(self, first: tuple[str | None, str | None], text: str, module: str, caller: str,
                          arguments: Iterable[str], called: tuple | None, protocol: tuple[str, ...] | None
                          ) -> list[tuple[str | None, str | None]]:
        found = [first] if first[0] is not None else []
        if first[1] == "wrapper":  # the name the code calls, a row of its own that is not a call edge
            found.append((self._resolve_call(text, module, caller)[0], "decorated"))
        if first[1] == "self" and self.defs.get(first[0]) == "instance_attribute":
            found += self._stored_targets(first[0]) + self._written_targets(first[0])
        if text in _PROPERTY_GET and self.defs.get(caller) == "method":
            found += self._getters(caller.rpartition(".")[0])
        if self.defs.get(first[0]) == "property":  # self.validate_all(x): the getter, then what it gives's __call__
            runs = self._call_method(self.type_of(first[0]))
            found += [(runs, "type")] if runs is not None else []
        for position, argument in enumerate(arguments if called else ()):
            keyword, equals, value = argument.partition("=")
            if (keyword if equals and _IDENTIFIER.match(keyword) else position) in called:
                given = value.strip() if equals else argument
                targets = self._given_targets(given, module, caller)
                found += [(t, _kept(how, "flow")) for t, how in (self._value_targets(given, "", module, caller)
                                                                 if targets is None else targets)]
        bases = _literal_elements(arguments[1]) if first[0] == _MAKES_A_CLASS and len(arguments) == 3 else None
        if bases and _DOTTED.match(bases[0]):  # type(name, (Base,), ns) makes a class: Base's metaclass runs
            klass = self.resolve_call(bases[0], module, caller)[0]
            found += [m for method in ("__new__", "__init__") for m in self._metaclass_runs(klass, method)]
            found += self._subclassed_runs(klass)
        if protocol and arguments:
            given = next(iter(arguments))
            found += self._protocol_targets(given, protocol, module, caller, first[0] != ONLY_MAKES_AN_ITERATOR,
                                            every_value=bool(_IDENTIFIER.match(given)) and
                                            self.lookup(given, module, caller)[1] == "bound")
        if _DOTTED.match(text):
            if not self._own_answer(text, caller, first):
                found += self._given_targets(text, module, caller) or []
        elif text.endswith(")") and _callee_of(text) is not None:
            found += self._returned_answers(text, module, caller)
            found += [(t, "getattr") for t in self._getattr_targets(text, module, caller)]
        else:
            found += self._container_targets(text, module, caller) or self._on_made(text, module, caller)
        exact = first[1] == "type" and self._made_here(text, module, caller)
        for target, how in list(found):
            if how in ("self", "type", "flow", "alias") and self.defs.get(target) in _METHOD_KINDS and not (
                    exact and how == "type"):  # `p = Extractor(); p.close()`: no subclass's close
                receiver = caller.rpartition(".")[0] if how == "self" else None
                found += [(t, "override") for t in self.overrides(target, receiver)]
            elif how == "self" and self.defs.get(target) == "class":  # cls(), type(self)(): a subclass's too
                found += [(t, "override") for t in self.subclasses(target)]
        if len(found) == 1 and found[0][0] is not None and found[0] != (caller, "lambda"):  # most calls
            return found
        found = [f for i, f in enumerate(_unique(f for f in found if f != (caller, "lambda"))) if i == 0 or (
            f[0] not in self.libraries and self.defs.get(f[0]) in _CALLABLE_OR_CLASS)]
        if not found and first[0] is None and "." in text:  # nothing says what the receiver is
            found = self.by_name(text, module, caller)
        return found or [first]

    def assigned_callees(self, text: str, module: str, caller: str, first: tuple[str | None, str | None]
                         ) -> list[tuple[str, str]]:
        """The functions and classes besides `first` (resolve_call's answer) a call may run by
        what the code assigns or stores, never by what callers pass (`emit = each if x else basic;
        emit(rows)`, `HANDLERS[k](rows)`): known before the flows are, so each one's parameters
        learn the call's arguments too (learn_flows). The same answers as resolve_call_all's rows
        of these resolutions."""
        if not _DOTTED.match(text):
            if text.endswith(")") and _callee_of(text) is not None:
                return []
            found = self._container_targets(text, module, caller)
        elif self._own_answer(text, caller, first):
            return []
        else:
            head, _, rest = text.partition(".")
            bound, how = self.lookup(head, module, caller)
            found = self._through_bindings(bound, rest, module) if how == "bound" else []
        return [(target, label) for target, label in found if label in ASSIGNED_RESOLUTIONS and target != first[0]]

    def _made_here(self, text: str, module: str, caller: str) -> bool:
        """Is the receiver of `x.m` exactly one class's instance: made by calling that class, here
        (`Extractor().close`), or every value of a local name that is not a parameter
        (`p = Extractor(); p.close()`)? Then a subclass's override cannot run."""
        receiver, _, name = text.rpartition(".")
        if not receiver or not name:
            return False
        if _IDENTIFIER.match(receiver):
            bound, how = self.lookup(receiver, module, caller)
            if how != "bound":
                return False
            where, _, local = bound.partition("\x00")
            if self.scope_facts[where][local][0] == "parameter":
                return False
            values = self._bound_values(bound)
        else:
            values = [(receiver, caller)]
        made = set()
        for value, at in values:
            callee = _callee_of(value)
            target, how = self.resolve_call(callee, module, at) if callee is not None else (None, None)
            if how not in _NAMES_A_DEFINITION or self.defs.get(target) != "class":
                return False  # `cls = shell_class(name); cls()`: any subclass the variable may hold
            made.add(target)
        return len(made) == 1

    def _own_answer(self, text: str, caller: str, first: tuple[str | None, str | None]) -> bool:
        """Is resolve_call's answer for a dotted name all there is besides overrides (`self.f()`,
        `super().f()`)?"""
        return first[1] in ("self", "super") or (text.partition(".")[0] in ("self", "cls") and first[0] is not None
                                                 and self.defs.get(caller) in _SELF_KINDS)

    def _on_made(self, text: str, module: str, caller: str) -> list[tuple[str, str]]:
        """`make().f` where make is a name bound to several classes or functions (`for make in
        WRITERS: make().write()`): f of what each of them makes."""
        receiver, name = _split_receiver(text)
        callee = _callee_of(receiver) if receiver is not None and receiver.endswith(")") else None
        out = []
        for target, how in (self._given_targets(callee, module, caller) or []) if callee else []:
            kind = self.defs.get(target) if how != "lambda" else None  # what a lambda makes is unsaid
            holder = target if kind == "class" else self.type_of(target) if kind in _CALLABLE_KINDS else None
            found = self._member_chain(holder, name.split(".")) if holder else None
            if found is not None:
                out.append((found, "type"))
        return out

"""Turn one Python source file into rows for the graph tables, with tree-sitter.

Runs in worker processes, so it is pure: bytes in, plain tuples out. Name resolution across
files happens later, in `resolve.py`, once every file is in the database. Where the file uses
names (calls, implicit calls, references) is in `uses.py`.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import io
import re
import time
import tokenize

import tree_sitter_python
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from ...schema import BY_NAME, EXTRACTED
from ..base import (EXTRACT_SECONDS, ExtractionBudget, FileFacts, FileIds, UndecodableSource, count_errors,
                    stable_id)
from .uses import _VALUE_LIMIT, CallRow, Scope, Uses, _shorten

LANGUAGE = Language(tree_sitter_python.language())

_QUERY_TEXT = """
(class_definition) @def
(function_definition) @def
(call function: (_) @call)
(argument_list) @call_args
(generator_expression) @call_args
(assignment) @assign
(augmented_assignment left: (identifier) @_n (#eq? @_n "__all__")) @all_aug
(import_statement) @import
(import_from_statement) @import
(for_statement left: (_) @bind_loop)
(for_in_clause left: (_) @bind_loop)
(as_pattern alias: (_) @bind_as)
(named_expression name: (identifier) @bind_walrus)
(global_statement (identifier) @bind_global)
(nonlocal_statement (identifier) @bind_nonlocal)
(lambda parameters: (lambda_parameters) @bind_lambda)
(with_item value: (_) @implicit_with)
(for_statement right: (_) @implicit_for)
(raise_statement . (_) @implicit_raise)
(if_statement condition: [(identifier) (attribute)] @implicit_truth)
(elif_clause condition: [(identifier) (attribute)] @implicit_truth)
(while_statement condition: [(identifier) (attribute)] @implicit_truth)
(conditional_expression "if" . [(identifier) (attribute)] @implicit_truth)
(not_operator argument: [(identifier) (attribute)] @implicit_truth)
(boolean_operator left: [(identifier) (attribute)] @implicit_truth)
(boolean_operator right: [(identifier) (attribute)] @implicit_truth)
(assert_statement . [(identifier) (attribute)] @implicit_truth)
(interpolation expression: [(identifier) (attribute)] @implicit_format)
(subscript value: (attribute) @implicit_item)
(subscript value: (identifier) @implicit_item (#eq? @implicit_item "self"))
(comparison_operator [(identifier) (attribute)] @implicit_compare)
(binary_operator left: [(identifier) (attribute) (call)] @implicit_operand)
(binary_operator right: [(identifier) (attribute) (call)] @implicit_operand)
(unary_operator argument: [(identifier) (attribute) (call)] @implicit_operand)
(augmented_assignment left: [(identifier) (attribute)] @implicit_operand)
(return_statement (_) @bind_return)
(attribute) @ref_attribute
(type [(identifier) (attribute)] @ref_annotation)
(assignment left: (attribute) @ref_write)
(augmented_assignment left: (attribute) @ref_write)
(pattern_list (attribute) @ref_write)
(tuple_pattern (attribute) @ref_write)
(argument_list (identifier) @ref_value)
(keyword_argument value: (identifier) @ref_value)
(assignment right: (identifier) @ref_value)
(return_statement (identifier) @ref_value)
(pair value: (identifier) @ref_value)
(list (identifier) @ref_value)
(tuple (identifier) @ref_value)
(set (identifier) @ref_value)
(expression_list (identifier) @ref_value)
"""

_PROPERTY_DECORATORS = {"property", "cached_property", "functools.cached_property", "abc.abstractproperty"}
_LITERAL_LIMIT = 1 << 16
_CONTAINER_LITERALS = {"dictionary", "list", "tuple", "set"}
_NAMING_ELEMENTS = {"identifier", "attribute", "call"}
_NO_COMMENTS_INSIDE = frozenset({"string", "identifier", "integer", "float"})  # what a walk for comments skips


def _assigned(assignment: Node) -> Node | None:
    """The value an assignment gives its targets: `value` of `a = b = value`."""
    right = assignment.child_by_field_name("right")
    while right is not None and right.type == "assignment":
        right = right.child_by_field_name("right")
    return right


def _names_something(literal: Node) -> bool:
    """Does one of the literal's elements (a dict's values) name or call something, as a registry
    of functions or classes does? Only those elements are what the resolver reads of a literal."""
    for child in literal.named_children:
        if child.type == "pair":
            child = child.child_by_field_name("value")
        elif child.type == "tuple" and child.named_child_count == 2:  # `[("html", start_html)]`: a dict's pairs
            child = child.named_children[1]
        if child is not None and child.type in _NAMING_ELEMENTS:
            return True
    return False


def _literal_given(node: Node) -> Node | None:
    """The container literal a call is given first (`Dispatcher([("html", start_html), ...])`), if any."""
    arguments = node.child_by_field_name("arguments") if node.type == "call" else None
    first = arguments.named_children[0] if arguments is not None and arguments.named_child_count else None
    return first if first is not None and first.type in _CONTAINER_LITERALS else None

(ModuleRow, ClassRow, MemberRow, GlobalRow, NestedRow, ParameterRow, BindingRow, ImportRow, InheritanceRow) = (
    BY_NAME[t].row for t in ("modules", "classes", "members", "globals", "nested_functions", "parameters", "bindings",
                             "imports", "inheritance"))
_BINDING_CAPTURES = {"bind_loop": "loop", "bind_as": "as", "bind_walrus": "walrus", "bind_global": "global",
                     "bind_nonlocal": "nonlocal", "bind_lambda": "lambda", "bind_return": "return"}


# Tree-sitter's query cursor slows past about 30,000 levels of nesting (a chain of 40,000 calls
# took 47 s, 20,000 took 0.08 s), in C where no budget can stop it. CPython itself compiles a call
# chain of at most about 1,500 links (3,000 levels) and 200 nested brackets, so nothing Python can
# run is missed by matching only down to this depth.
MAX_QUERY_DEPTH = 10_000
def decode_source(data: bytes) -> str:
    """Decode like Python does: a PEP 263 coding cookie or BOM, else UTF-8."""
    if b"\x00" in data[:8192]:
        raise UndecodableSource("binary file (NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise UndecodableSource(f"bad coding declaration: {exc}") from None
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise UndecodableSource(f"not valid {encoding}: {exc}") from None


class _Extractor(Uses):
    def __init__(self, src: bytes, path: str, module: str, is_package: bool, file_id: int,
                 deadline: float = float("inf")):
        self.src = src
        self.deadline = deadline
        self.path = path
        self.module = module
        self.is_package = is_package
        self.file_id = file_id
        self.rows: dict[str, list[tuple]] = {name: [] for name in EXTRACTED}
        self.new_id = FileIds(path)  # new_id(*parts): an id unique within the file

    def text(self, node: Node | None) -> str | None:
        if node is None:
            return None
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def flat(self, node: Node | None) -> str | None:
        """An expression on one line: whitespace runs as one space, comments left out (on one
        line, `[a,  # note` would swallow the rest)."""
        value = self.text(node)
        if value is None:
            return None
        if "#" in value and "\n" in value:
            value = self._without_comments(node)
        return " ".join(value.split())

    def _without_comments(self, node: Node) -> str:
        pieces, start, stack = [], node.start_byte, [node]
        comments = []
        while stack:
            current = stack.pop()
            if current.type == "comment":
                comments.append(current)
            elif current.type not in _NO_COMMENTS_INSIDE:
                stack.extend(current.children)
        for comment in sorted(comments, key=lambda c: c.start_byte):
            pieces.append(self.src[start:comment.start_byte])
            start = comment.end_byte
        pieces.append(self.src[start:node.end_byte])
        return b"".join(pieces).decode("utf-8", "replace")

    def value(self, node: Node | None) -> str | None:
        """An assigned or returned expression as stored: shortened, except a container literal
        that names something, or a call given one first (a dispatch table made from pairs), which
        is kept whole (up to _LITERAL_LIMIT): the entries of a registry far down a long dict are
        what calls through it reach."""
        text = self.flat(node)
        if text is None or len(text) <= _VALUE_LIMIT:
            return text
        literal = node if node.type in _CONTAINER_LITERALS else _literal_given(node)
        if literal is not None and len(text) <= _LITERAL_LIMIT and _names_something(literal):
            return text
        return text[:_VALUE_LIMIT] + "..."

    def docstring(self, body: Node | None) -> str | None:
        if body is None:
            return None
        for child in body.named_children:
            if child.type == "comment":
                continue
            if child.type != "expression_statement" or child.named_child_count != 1:
                return None
            string = child.named_children[0]
            if string.type not in ("string", "concatenated_string"):
                return None
            raw = self.text(string)
            if "\\" not in raw:
                for quote in ('"""', "'''"):
                    if raw.startswith(quote) and raw.endswith(quote) and len(raw) >= 6:
                        return inspect_cleandoc(raw[3:-3])
            try:
                value = ast.literal_eval(raw)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                return raw.strip("'\"rRuUbBfF")
            if isinstance(value, bytes):
                return None
            return inspect_cleandoc(value)
        return None

    # -- the walk -------------------------------------------------------------------------
    def run(self, tree) -> None:
        root = tree.root_node
        module_scope = Scope("module", self.module, self.new_id("module", self.module),
                              root.start_byte, root.end_byte)
        cursor = QueryCursor(_QUERY)
        cursor.set_max_start_depth(MAX_QUERY_DEPTH)
        captures = cursor.captures(root)
        scopes: dict[int, Scope] = {root.id: module_scope}
        intervals: list[Scope] = []
        defs = sorted(captures.get("def", []), key=lambda n: n.start_byte)
        classes: dict[str, tuple] = {}  # a name defined twice: the later definition wins, as at run time
        functions: dict[str, tuple] = {}  # qualname -> (table, row, params node, owner id)
        for node in defs:
            parent = node.parent
            while parent.type not in ("function_definition", "class_definition", "module"):
                parent = parent.parent
            outer = scopes.get(parent.id)
            if outer is None:  # inside an ERROR subtree we could not place: use the module
                outer = module_scope
            scope = self.definition(node, outer, classes, functions)
            scopes[node.id] = scope
            intervals.append(scope)

        all_names = self.collect_assignments(captures, module_scope, intervals)
        self.collect_bindings(captures, module_scope, intervals)
        self.collect_imports(captures.get("import", []), module_scope, intervals)
        self.collect_calls(captures.get("call", []), captures.get("call_args", []), module_scope, intervals)
        self.collect_implicit(captures, module_scope, intervals)
        self.collect_refs(captures, module_scope, intervals)

        self.rows["classes"].extend(classes.values())
        for table, row, params, owner_id in functions.values():
            self.rows[table].append(row)
            self.parameters(params, owner_id, row.qualname)
        self.rows["modules"].append(ModuleRow(
            id=module_scope.id, file_id=self.file_id, name=self.module.rpartition(".")[2], qualname=self.module,
            path=self.path, is_package=self.is_package, docstring=self.docstring(root), all_names=all_names,
            start_line=1, end_line=line_count(self.src)))

    def definition(self, node: Node, outer: Scope, classes: dict, functions: dict) -> Scope:
        name = self.text(node.child_by_field_name("name")) or "?"
        if outer.kind == "function":
            qualname = f"{outer.qualname}.<locals>.{name}"
        else:
            qualname = f"{outer.qualname}.{name}"
        wrapper = node.parent if node.parent.type == "decorated_definition" else node
        decorators = [self.flat(c)[1:].strip() for c in wrapper.named_children if c.type == "decorator"]
        for deco in (c for c in wrapper.named_children if c.type == "decorator"):
            expression = next((c for c in deco.named_children if c.type != "comment"), None)
            if expression is not None and expression.type in ("identifier", "attribute", "call"):
                # `@dec` calls dec with the function; `@dec(x)` calls what dec(x) returns with it (the call
                # dec(x) itself is a call the query finds)
                text = self.flat(expression)
                sp, ep = expression.start_point, expression.end_point
                self.rows["calls"].append(CallRow(
                    file_id=self.file_id, caller_id=outer.id, caller_qualname=outer.qualname, line=sp[0] + 1,
                    col=sp[1], end_line=ep[0] + 1, end_col=ep[1], callee_text=text,
                    callee_name=None if expression.type == "call" else text.rpartition(".")[2], kind="decorator",
                    arguments=[name]))
        start, end = wrapper.start_point[0] + 1, wrapper.end_point[0] + 1
        body = node.child_by_field_name("body")
        doc = self.docstring(body)
        source = self.text(wrapper)

        if node.type == "class_definition":
            sid = classes[qualname].id if qualname in classes else self.new_id("class", qualname)
            scope = Scope("class", qualname, sid, node.start_byte, node.end_byte, member_names=set())
            bases, metaclass = [], None
            superclasses = node.child_by_field_name("superclasses")
            # type(C).__new__ runs the __init_subclass__ of a base and the __set_name__ of what the
            # body holds; with bases or keywords, a metaclass's __new__ and __init__ may run too
            derived = superclasses is not None and any(c.type != "comment" for c in superclasses.named_children)
            self._implicit_rows(node.child_by_field_name("name"), outer, f"type({name})",
                                ("__new__", "__init__") if derived else ("__new__",))
            if superclasses is not None:
                metaclass = next((self.flat(k.child_by_field_name("value")) for k in superclasses.named_children
                                  if k.type == "keyword_argument" and self.text(k.child_by_field_name("name"))
                                  == "metaclass"), None)
                for position, base in enumerate(
                    b for b in superclasses.named_children if b.type not in ("keyword_argument", "comment")
                ):
                    base_text = self.flat(base)
                    bases.append(base_text)
                    self.rows["inheritance"].append(InheritanceRow(
                        file_id=self.file_id, class_id=sid, class_qualname=qualname, module=self.module,
                        path=self.path, position=position, base_text=base_text))
            classes[qualname] = ClassRow(
                id=sid, file_id=self.file_id, name=name, qualname=qualname, module=self.module, path=self.path,
                scope_qualname=outer.qualname, start_line=start, end_line=end, bases=bases, metaclass=metaclass,
                decorators=decorators,
                docstring=doc, source=source)
            if outer.kind == "class":
                outer.member_names.add(name)
            return scope

        params = node.child_by_field_name("parameters")
        returns = node.child_by_field_name("return_type")
        signature = self.flat(params) or "()"
        signature = signature.replace("( ", "(").replace(", )", ")").replace(",)", ")")
        if returns is not None:
            signature += " -> " + self.flat(returns)
        is_async = node.child_count > 0 and node.children[0].type == "async"
        first_param = None
        if params is not None:
            for p in params.named_children:
                if p.type == "identifier":
                    first_param = self.text(p)
                elif p.type in ("typed_parameter", "default_parameter", "typed_default_parameter"):
                    ident = p.child_by_field_name("name") or (p.named_children[0] if p.named_child_count else None)
                    first_param = self.text(ident) if ident is not None and ident.type == "identifier" else None
                break

        if outer.kind == "class":
            kind = "method"
            for deco in decorators:
                if deco == "classmethod":
                    kind = "classmethod"
                elif deco == "staticmethod":
                    kind = "staticmethod"
                elif deco in _PROPERTY_DECORATORS or deco.endswith((".getter", "cached_property")):
                    kind = "property"
                elif deco.endswith((".setter", ".deleter")):
                    kind = "property-accessor"
            is_member = kind != "property-accessor"  # the setter of a property is the same member
            if qualname in functions:
                sid = functions[qualname][3]
            else:
                sid = self.new_id("member", qualname) if is_member else stable_id(self.path, "member", qualname)
            scope = Scope("function", qualname, sid, node.start_byte, node.end_byte, class_scope=outer,
                           self_name=first_param if kind in ("method", "property", "property-accessor") else None)
            if is_member:
                outer.member_names.add(name)
                functions[qualname] = ("members", MemberRow(
                    id=sid, file_id=self.file_id, class_id=outer.id, class_qualname=outer.qualname, name=name,
                    qualname=qualname, module=self.module, path=self.path, kind=kind, signature=signature,
                    annotation=None, value=None, decorators=decorators, is_async=is_async, start_line=start,
                    end_line=end, docstring=doc, source=source), params, sid)
            return scope

        if qualname in functions:
            sid = functions[qualname][3]
        elif outer.kind == "module":
            sid = self.new_id("global", qualname)
        else:
            sid = self.new_id("nested", qualname)
        if outer.kind == "module":
            functions[qualname] = ("globals", GlobalRow(
                id=sid, file_id=self.file_id, name=name, qualname=qualname, module=self.module, path=self.path,
                kind="function", signature=signature, annotation=None, value=None, decorators=decorators,
                is_async=is_async, start_line=start, end_line=end, docstring=doc, source=source), params, sid)
        else:
            functions[qualname] = ("nested_functions", NestedRow(
                id=sid, file_id=self.file_id, name=name, qualname=qualname, module=self.module, path=self.path,
                scope_qualname=outer.qualname, signature=signature, decorators=decorators, is_async=is_async,
                start_line=start, end_line=end, docstring=doc, source=source), params, sid)
        return Scope("function", qualname, sid, node.start_byte, node.end_byte)

    def parameters(self, params: Node | None, owner_id: int, owner_qualname: str) -> None:
        if params is None:
            return
        out: list = []
        keyword_only = False
        for p in params.named_children:
            t = p.type
            annotation = default = None
            kind = "keyword-only" if keyword_only else "positional"
            if t == "identifier":
                name = self.text(p)
            elif t in ("default_parameter", "typed_default_parameter", "typed_parameter"):
                ident = p.child_by_field_name("name")
                if ident is None and p.named_child_count:
                    ident = p.named_children[0]
                annotation = self.flat(p.child_by_field_name("type"))
                default = self.flat(p.child_by_field_name("value"))
                if ident is not None and ident.type == "list_splat_pattern":
                    kind, keyword_only = "var-positional", True
                    ident = ident.named_children[0] if ident.named_child_count else ident
                elif ident is not None and ident.type == "dictionary_splat_pattern":
                    kind = "var-keyword"
                    ident = ident.named_children[0] if ident.named_child_count else ident
                name = self.text(ident) if ident is not None else "?"
            elif t == "list_splat_pattern":
                kind, keyword_only = "var-positional", True
                name = self.text(p.named_children[0]) if p.named_child_count else "?"
            elif t == "dictionary_splat_pattern":
                kind = "var-keyword"
                name = self.text(p.named_children[0]) if p.named_child_count else "?"
            elif t == "keyword_separator":
                keyword_only = True
                continue
            elif t == "positional_separator":
                out = [row._replace(kind="positional-only") if row.kind == "positional" else row for row in out]
                continue
            else:  # comments, tuple parameters of Python 2, ERROR nodes
                continue
            out.append(ParameterRow(file_id=self.file_id, owner_id=owner_id, owner_qualname=owner_qualname,
                                    position=len(out), name=name, kind=kind, annotation=annotation,
                                    default_value=default))
        self.rows["parameters"].extend(out)

    # -- statements placed by a sweep over the definition intervals ------------------------
    def _sweep(self, nodes: list[Node], module_scope: Scope, intervals: list[Scope]):
        """Yield (node, innermost enclosing scope) for nodes in document order. Every walk over a
        file's nodes goes through here, so here the file's time budget is checked."""
        stack: list[Scope] = [module_scope]
        i = 0
        for count, node in enumerate(sorted(nodes, key=lambda n: n.start_byte)):
            if count & 255 == 0 and time.monotonic() > self.deadline:
                raise ExtractionBudget(f"extraction took longer than {EXTRACT_SECONDS:g} s")
            pos = node.start_byte
            while i < len(intervals) and intervals[i].start <= pos:
                scope = intervals[i]
                while len(stack) > 1 and stack[-1].end <= scope.start:
                    stack.pop()
                stack.append(scope)
                i += 1
            while len(stack) > 1 and stack[-1].end <= pos:
                stack.pop()
            yield node, stack[-1]

    def collect_assignments(self, captures: dict, module_scope: Scope, intervals: list[Scope]):
        all_names: list[str] | None = None
        seen_globals: set[str] = set()
        instance_attrs: dict[str, dict[str, tuple]] = {}
        for node, scope in self._sweep(captures.get("assign", []), module_scope, intervals):
            left = node.child_by_field_name("left")
            if left is None:
                continue
            if scope.kind == "function":
                self.bind(scope, left, "assignment", node)
                owner = scope.class_scope
                if owner is None or scope.self_name is None or left.type != "attribute":
                    continue
                obj = left.child_by_field_name("object")
                attr = left.child_by_field_name("attribute")
                if obj is None or attr is None or obj.type != "identifier" or self.text(obj) != scope.self_name:
                    continue
                name = self.text(attr)
                attrs = instance_attrs.setdefault(owner.qualname, {})
                if name not in attrs or self.text(attrs[name][1].child_by_field_name("right")) == "None":
                    attrs[name] = (owner, node)  # the first value that says something: not a None placeholder
                continue
            annotation = self.annotation(node)
            right = _assigned(node)
            value = self.value(right)
            targets = list(self._targets(left))
            values = [value] * len(targets)
            if len(targets) > 1 and right is not None and right.type in ("expression_list", "tuple"):
                elements = [c for c in right.named_children if c.type != "comment"]
                if len(elements) == len(targets):
                    values = [self.value(e) for e in elements]
            for target, value in zip(targets, values):
                name = self.text(target)
                if scope.kind == "module":
                    if name == "__all__" and right is not None:
                        all_names = self._string_list(right)
                    if name in seen_globals:
                        continue
                    seen_globals.add(name)
                    qualname = f"{self.module}.{name}"
                    self.rows["globals"].append(GlobalRow(
                        id=self.new_id("global", qualname), file_id=self.file_id, name=name, qualname=qualname,
                        module=self.module, path=self.path, kind="variable", signature=None, annotation=annotation,
                        value=value, decorators=[], is_async=False, start_line=node.start_point[0] + 1,
                        end_line=node.end_point[0] + 1, docstring=None, source=self.text(node.parent)))
                else:  # class body
                    if name in scope.member_names:
                        continue
                    scope.member_names.add(name)
                    qualname = f"{scope.qualname}.{name}"
                    self.rows["members"].append(MemberRow(
                        id=self.new_id("member", qualname), file_id=self.file_id, class_id=scope.id,
                        class_qualname=scope.qualname, name=name, qualname=qualname, module=self.module,
                        path=self.path, kind="class_attribute", signature=None, annotation=annotation, value=value,
                        decorators=[], is_async=False, start_line=node.start_point[0] + 1,
                        end_line=node.end_point[0] + 1, docstring=None, source=self.text(node.parent)))
        for node, scope in self._sweep(captures.get("all_aug", []), module_scope, intervals):
            right = node.child_by_field_name("right")
            if scope.kind == "module" and right is not None:
                extra = self._string_list(right)
                if extra is not None:
                    all_names = (all_names or []) + extra
        # self.x = ... lands after class bodies are complete, so class-level names win.
        for class_qualname, attrs in instance_attrs.items():
            for name, (owner, node) in attrs.items():
                if name in owner.member_names:
                    continue
                value = self.value(node.child_by_field_name("right"))
                qualname = f"{class_qualname}.{name}"
                self.rows["members"].append(MemberRow(
                    id=self.new_id("member", qualname), file_id=self.file_id, class_id=owner.id,
                    class_qualname=class_qualname, name=name, qualname=qualname, module=self.module, path=self.path,
                    kind="instance_attribute", signature=None, annotation=self.annotation(node),
                    value=value, decorators=[], is_async=False, start_line=node.start_point[0] + 1,
                    end_line=node.end_point[0] + 1, docstring=None, source=self.text(node.parent)))
        return all_names

    def annotation(self, assignment: Node) -> str | None:
        """`x: T = v`, or the PEP 484 comment `x = v  # type: T` on a one-name assignment."""
        written = self.flat(assignment.child_by_field_name("type"))
        statement = assignment.parent
        left = assignment.child_by_field_name("left")
        if written is not None or statement is None or statement.type != "expression_statement" or \
                left is None or left.type not in ("identifier", "attribute"):
            return written
        comment = statement.next_sibling
        if comment is None or comment.type != "comment" or comment.start_point[0] != statement.end_point[0]:
            return None
        said = _TYPE_COMMENT.match(self.text(comment))
        return said.group(1).strip() if said and not said.group(1).startswith("ignore") else None

    def bind(self, scope: Scope, left: Node, kind: str, statement: Node | None = None,
             value_node: Node | None = None) -> None:
        """Binding rows for the names `left` binds in a function (a name, or a tuple of them), with
        the value each one gets where the code says (`a, b = f, g`; `a = b = f`; `a, b = f(x)`
        gives `f(x)[0]`, `f(x)[1]`; a loop variable: what it iterates over; `with X as y`: X)."""
        targets = [left] if left.type == "identifier" else list(self._targets(left))
        values: list[str | None] = [self.value(value_node) if len(targets) == 1 else None] * len(targets)
        if kind == "loop" and len(targets) > 1 and len(targets) == len(left.named_children):
            values = self._paired(value_node, len(targets)) or values
        annotation = None
        if statement is not None:
            right = _assigned(statement)
            annotation = self.annotation(statement)
            if left.type == "identifier":
                values = [self.value(right)]
            elif right is not None and right.type in ("expression_list", "tuple") and \
                    left.type in ("pattern_list", "tuple_pattern"):
                elements = [c for c in right.named_children if c.type != "comment"]
                if len(elements) == len(targets) == len(left.named_children):
                    values = [self.value(e) for e in elements]
            elif right is not None and right.type == "call" and left.type in ("pattern_list", "tuple_pattern") and \
                    all(c.type == "identifier" for c in left.named_children) and len(targets) == len(left.named_children):
                call = self.flat(right)  # `a, b = f(x)`: b is `f(x)[1]`, what f's returned tuples hold there
                values = [_shorten(f"{call}[{i}]") if call else None for i in range(len(targets))]
        for target, value in zip(targets, values):
            self.rows["bindings"].append(BindingRow(
                file_id=self.file_id, scope_qualname=scope.qualname, name=self.text(target), kind=kind,
                line=target.start_point[0] + 1, value=value, annotation=annotation))

    def _paired(self, iterated: Node | None, count: int) -> list[str | None] | None:
        """What each name of `for a, b in X` iterates over, where X says: `enumerate(xs)` (b: xs),
        `zip(xs, ys)` (a: xs, b: ys), `d.items()` (b: `d.values()`)."""
        if iterated is None or iterated.type != "call":
            return None
        function = iterated.child_by_field_name("function")
        arguments = iterated.child_by_field_name("arguments")
        given = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
        if function is None or any(c.type in ("list_splat", "dictionary_splat", "keyword_argument") for c in given):
            return None
        name = self.text(function)
        if name == "enumerate" and count == 2 and given:
            return [None, self.value(given[0])]
        if name == "zip" and len(given) == count:
            return [self.value(c) for c in given]
        if function.type == "attribute" and name.endswith(".items") and count == 2 and not given:
            return [None, _shorten(f"{self.flat(function.child_by_field_name('object'))}.values()")]
        return None

    def collect_bindings(self, captures: dict, module_scope: Scope, intervals: list[Scope]) -> None:
        for capture, kind in _BINDING_CAPTURES.items():
            for node, scope in self._sweep(captures.get(capture, []), module_scope, intervals):
                if scope.kind != "function":
                    continue
                if kind == "return":  # what the function gives back, as a binding of the name `return`
                    self.rows["bindings"].append(BindingRow(
                        file_id=self.file_id, scope_qualname=scope.qualname, name="return", kind=kind,
                        line=node.start_point[0] + 1, value=self.value(node), annotation=None))
                    continue
                entered = caught = None
                if kind == "as":
                    pattern = node.parent
                    if pattern is not None and pattern.type == "as_pattern" and pattern.parent is not None \
                            and pattern.named_child_count:
                        if pattern.parent.type == "with_item":
                            entered = pattern.named_children[0]  # with X as y: y is what X.__enter__() gives
                        elif pattern.parent.type == "except_clause":
                            caught = pattern.named_children[0]  # except E as e: e is an E
                if node.type == "as_pattern_target":
                    node = next((c for c in node.named_children if c.type != "comment"), node)
                if entered is not None or caught is not None:
                    self.bind(scope, node, "with" if entered is not None else "as",
                              value_node=entered if entered is not None else caught)
                    continue
                if node.type == "lambda_parameters":  # a lambda's names, counted as its function's
                    for param in node.named_children:
                        ident = param if param.type == "identifier" else \
                            (param.child_by_field_name("name") or (param.named_children[0] if param.named_child_count else None))
                        if ident is not None and ident.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                            ident = ident.named_children[0] if ident.named_child_count else None
                        if ident is not None and ident.type == "identifier":
                            self.bind(scope, ident, kind)
                    continue
                self.bind(scope, node, kind, value_node=node.parent.child_by_field_name("right")
                          if kind == "loop" else None)

    def _targets(self, left: Node):
        if left.type == "identifier":
            yield left
        elif left.type in ("pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern"):
            for child in left.named_children:
                yield from self._targets(child)

    def _string_list(self, node: Node) -> list[str] | None:
        if node.type not in ("list", "tuple", "parenthesized_expression"):
            return None
        try:
            value = ast.literal_eval(self.text(node))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(value, str):
            value = [value]
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        return None

    def _absolute(self, dotted: str, level: int) -> str:
        if level == 0:
            return dotted
        package = self.module.split(".") if self.is_package else self.module.split(".")[:-1]
        if level - 1 > len(package):
            return "." * level + dotted  # points above the top package: leave as written
        base = package[: len(package) - (level - 1)]
        return ".".join(base + ([dotted] if dotted else []))

    def collect_imports(self, nodes: list[Node], module_scope: Scope, intervals: list[Scope]) -> None:
        out = self.rows["imports"]
        for node, scope in self._sweep(nodes, module_scope, intervals):
            line = node.start_point[0] + 1
            sq = scope.qualname
            if node.type == "import_statement":
                for item in node.children_by_field_name("name"):
                    if item.type == "aliased_import":
                        dotted = self.flat(item.child_by_field_name("name"))
                        alias = self.text(item.child_by_field_name("alias"))
                        bound, target = alias, dotted
                    else:
                        dotted, alias = self.flat(item), None
                        bound = target = dotted.split(".")[0]
                    out.append(ImportRow(
                        file_id=self.file_id, module=self.module, path=self.path, scope_qualname=sq, line=line,
                        imported_module=dotted, name=None, alias=alias, level=0, is_star=False, bound_name=bound,
                        target=target))
                continue
            mod_node = node.child_by_field_name("module_name")
            level, dotted = 0, ""
            if mod_node is not None and mod_node.type == "relative_import":
                for child in mod_node.children:
                    if child.type == "import_prefix":
                        level = len(self.text(child).strip())
                    elif child.type == "dotted_name":
                        dotted = self.flat(child)
            elif mod_node is not None:
                dotted = self.flat(mod_node)
            imported = self._absolute(dotted.replace(" ", ""), level)
            if any(c.type == "wildcard_import" for c in node.children):
                out.append(ImportRow(
                    file_id=self.file_id, module=self.module, path=self.path, scope_qualname=sq, line=line,
                    imported_module=imported, name="*", alias=None, level=level, is_star=True, bound_name=None,
                    target=None))
                continue
            for item in node.children_by_field_name("name"):
                if item.type == "aliased_import":
                    name = self.flat(item.child_by_field_name("name"))
                    alias = self.text(item.child_by_field_name("alias"))
                else:
                    name, alias = self.flat(item), None
                bound = alias or name
                target = f"{imported}.{name}" if imported else name
                out.append(ImportRow(
                    file_id=self.file_id, module=self.module, path=self.path, scope_qualname=sq, line=line,
                    imported_module=imported, name=name, alias=alias, level=level, is_star=False, bound_name=bound,
                    target=target))



_TYPE_COMMENT = re.compile(r"#\s*type:\s*([^#]+)")


def line_count(src: bytes) -> int:
    return src.count(b"\n") + (0 if not src or src.endswith(b"\n") else 1)


def inspect_cleandoc(doc: str) -> str:
    return inspect.cleandoc(doc)


_QUERY = Query(LANGUAGE, _QUERY_TEXT)
_PARSER = Parser(LANGUAGE)


def extract(data: bytes, path: str, module: str, is_package: bool, budget_s: float | None = None) -> FileFacts:
    """Parse one file's bytes. Raises UndecodableSource for binary or mis-encoded files,
    ExtractionBudget past `budget_s` (EXTRACT_SECONDS)."""
    deadline = time.monotonic() + (EXTRACT_SECONDS if budget_s is None else budget_s)
    sha = hashlib.sha256(data).hexdigest()
    text = decode_source(data)
    src = data if text.encode("utf-8") == data else text.encode("utf-8")
    tree = _PARSER.parse(src)
    file_id = stable_id(path)
    ex = _Extractor(src, path, module, is_package, file_id, deadline)
    ex.run(tree)
    facts = FileFacts(path, module, file_id, sha, lines=line_count(src),
                      parse_errors=count_errors(tree.root_node), rows=ex.rows)
    return facts


def parse_only(data: bytes) -> None:
    """What the benchmark compares indexing against: tree-sitter parsing alone."""
    _PARSER.parse(data)

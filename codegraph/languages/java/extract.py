"""Turn one Java source file into rows for the graph tables, with tree-sitter-java.

Runs in worker processes, so it is pure: bytes in, plain tuples out. What the names mean is
resolution's business, later. Java's identities, as the tables spell them:

- a class is `package.Outer.Inner` (the package as the file declares it); an anonymous class
  `package.Outer$1`, a local class `package.Outer$1Local`, numbered in the order they appear in
  their class, as javac names them;
- a method is `Class.name(T1,T2)` and a constructor `Class.<init>(T1,T2)`: the parameter types
  are part of the identity (overloads are distinct), written by their simple names with generics
  and annotations erased and varargs as arrays (`add(List,String[])`), so that a qualname's owner
  is still everything before its last dot;
- a field is `Class.name`: an `instance_attribute`, or a `class_attribute` when static (interface
  constants and enum constants too); a record's components are fields with an accessor method
  each; what Java defines without a declaration (a class's default constructor, a record's
  canonical one, an enum's `values()` and `valueOf(String)`) is a member with no source.

Calls: `a.b(x)` (kind call, callee text `a.b`), `new C(x)` (kind new, callee text `C`), `this(x)`
and `super(x)` in a constructor (kind call), method references `C::m` and `C::new` (kind
reference). Code in a lambda counts as the method's; field initializers and initializer blocks
as their class's. Locals are `bindings` rows: declarations (`assignment`), enhanced for (`loop`),
catch parameters and `instanceof` patterns (`as`), try-with-resources (`with`), typed lambda
parameters (`lambda`), each with its declared type as `annotation`.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field

import tree_sitter_java
from tree_sitter import Language, Node, Parser

from ...schema import BY_NAME, EXTRACTED
from ..base import EXTRACT_SECONDS, ExtractionBudget, FileFacts, FileIds, UndecodableSource, count_errors, stable_id

LANGUAGE = Language(tree_sitter_java.language())
_PARSER = Parser(LANGUAGE)

ModuleRow, ClassRow, MemberRow = BY_NAME["modules"].row, BY_NAME["classes"].row, BY_NAME["members"].row
ParameterRow, BindingRow, ImportRow = BY_NAME["parameters"].row, BY_NAME["bindings"].row, BY_NAME["imports"].row
CallRow, InheritanceRow = BY_NAME["calls"].row, BY_NAME["inheritance"].row

VALUE_LIMIT = 240  # an expression as stored: at most this many characters, then "..."
_CLASS_LIKE = {"class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
               "record_declaration": "record", "annotation_type_declaration": "annotation"}
_GENERIC_ARGUMENTS = re.compile(r"<[^<>]*>")
_ANNOTATIONS = re.compile(r"@[\w.]+(?:\([^()]*\))?\s*")
_DEADLINE_EVERY = 2048  # nodes between two looks at the clock


def decode_source(data: bytes) -> str:
    """Java sources are UTF-8 here (javac's default since JDK 18, and what Maven projects declare)."""
    if b"\x00" in data[:8192]:
        raise UndecodableSource("binary file (NUL bytes)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UndecodableSource(f"not valid UTF-8: {exc}") from None


def plain_type(type_text: str) -> str:
    """A type as written without its annotations, `final` and generic arguments
    (`@NonNull Map<K, List<V>>` -> `Map`)."""
    text = _ANNOTATIONS.sub("", type_text).replace("final ", "").strip()
    while (shorter := _GENERIC_ARGUMENTS.sub("", text)) != text:
        text = shorter
    return text


def erased(type_text: str) -> str:
    """A type as a method's identity writes it: no annotations, no generic arguments, the simple
    name of a qualified one, varargs as an array (`java.util.List<String>...` -> `List[]`)."""
    text = plain_type(type_text)
    dims = ""
    text = "".join(text.split())
    if text.endswith("..."):
        text, dims = text[:-3], "[]"
    while text.endswith("[]"):
        text, dims = text[:-2], dims + "[]"
    return text.rpartition(".")[2] + dims


def _shorten(text: str | None) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text[:VALUE_LIMIT] + "..." if len(text) > VALUE_LIMIT else text


@dataclass
class _Scope:
    """Where code is: a class (its body), or a method, constructor or initializer of one."""

    kind: str  # module | class | method
    qualname: str
    id: int
    klass: str | None = None  # the class whose body this is, or which holds this method
    klass_id: int | None = None
    numbers: dict[str, int] = field(default_factory=dict)  # anonymous and local classes named so far


class _Extractor:
    def __init__(self, src: bytes, path: str, module: str, file_id: int, deadline: float):
        self.src = src
        self.path = path
        self.module = module
        self.file_id = file_id
        self.deadline = deadline
        self.rows: dict[str, list[tuple]] = {name: [] for name in EXTRACTED}
        self.package = module.rpartition(".")[0]
        self.new_id = FileIds(path)  # new_id(*parts): an id unique within the file
        self._seen = 0
        self.class_scopes: dict[str, _Scope] = {}  # qualname -> the scope of its body
        self.class_kinds: dict[str, str] = {}  # qualname -> class | interface | enum | record | annotation

    # -- helpers -----------------------------------------------------------------------
    def text(self, node: Node | None) -> str | None:
        if node is None:
            return None
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def short(self, node: Node | None) -> str | None:
        """An expression as stored: on one line, at most VALUE_LIMIT characters (only a window of
        the source is read: a chain of 20,000 calls must cost linear time)."""
        if node is None:
            return None
        end = min(node.end_byte, node.start_byte + 4 * VALUE_LIMIT)
        text = _shorten(self.src[node.start_byte:end].decode("utf-8", "replace"))
        if end < node.end_byte and not text.endswith("..."):
            text = text[:VALUE_LIMIT] + "..."
        return text

    def javadoc(self, node: Node) -> str | None:
        """The `/** ... */` comment right before a declaration, cleaned of its stars."""
        before = node.prev_sibling
        if before is None or before.type != "block_comment":
            return None
        raw = self.text(before)
        if not raw.startswith("/**"):
            return None
        lines = [re.sub(r"^\s*\*? ?", "", line) for line in raw[3:-2].splitlines()]
        return "\n".join(lines).strip() or None

    @staticmethod
    def modifiers(node: Node) -> Node | None:
        return next((c for c in node.children if c.type == "modifiers"), None)

    def annotations(self, node: Node) -> list[str]:
        found = self.modifiers(node)
        return [self.text(c)[1:] for c in found.named_children if c.type in ("annotation", "marker_annotation")] \
            if found is not None else []

    def type_parameters(self, node: Node) -> list[str] | None:
        """`class Box<T extends Item, U>`: ["T extends Item", "U"]."""
        found = node.child_by_field_name("type_parameters")
        if found is None:
            return None
        return [" ".join(self.text(c).split()) for c in found.named_children if c.type == "type_parameter"] or None

    def is_static(self, node: Node) -> bool:
        found = self.modifiers(node)
        return found is not None and any(c.type == "static" for c in found.children)

    # -- the walk ----------------------------------------------------------------------
    def run(self, root: Node) -> None:
        module = _Scope("module", self.module, self.new_id("module", self.module))
        package = next((c for c in root.named_children if c.type == "package_declaration"), None)
        if package is not None:
            name = next((c for c in package.named_children if c.type in ("scoped_identifier", "identifier")), None)
            self.package = "".join((self.text(name) or "").split()) or self.package
        self.rows["modules"].append(ModuleRow(
            id=module.id, file_id=self.file_id, name=self.module.rpartition(".")[2], qualname=self.module,
            path=self.path, is_package=False, docstring=None, all_names=None, start_line=1,
            end_line=root.end_point[0] + 1))
        stack: list[tuple[Node, _Scope]] = [(c, module) for c in reversed(root.named_children)]
        handlers, pop, push = self._HANDLERS, stack.pop, stack.extend
        while stack:
            node, scope = pop()
            self._seen += 1
            if not self._seen % _DEADLINE_EVERY and time.monotonic() > self.deadline:
                raise ExtractionBudget(f"{self.path}: extraction took longer than its budget")
            handler = handlers.get(node.type)
            children = handler(self, node, scope) if handler is not None else None
            if children is None:
                push([(c, scope) for c in reversed(node.named_children)])
            else:
                push(reversed(children))

    def _import(self, node: Node, scope: _Scope) -> list:
        static = any(c.type == "static" for c in node.children)
        name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        dotted = "".join((self.text(name) or "").split())
        star = any(c.type == "asterisk" for c in node.named_children)
        if not dotted:
            return []
        if star:
            imported, leaf, bound = dotted, "*", None
        else:
            imported, _, leaf = dotted.rpartition(".")
            bound = leaf
        self.rows["imports"].append(ImportRow(
            file_id=self.file_id, module=self.module, path=self.path, scope_qualname=self.module,
            line=node.start_point[0] + 1, imported_module=imported, name=leaf, alias=None,
            level=1 if static else 0, is_star=star, bound_name=bound, target=dotted if not star else None))
        return []

    def _class(self, node: Node, scope: _Scope) -> list:
        kind = _CLASS_LIKE[node.type]
        name = self.text(node.child_by_field_name("name")) or "?"
        if scope.kind == "module":
            qualname = f"{self.package}.{name}" if self.package else name
        elif scope.kind == "class":
            qualname = f"{scope.qualname}.{name}"
        else:  # a local class: Outer$1Local
            qualname = self._numbered(scope, name)
        return self._class_body(node, node.child_by_field_name("body"), scope, qualname, name, kind,
                                self._bases(node), self.annotations(node), self.javadoc(node))

    def _numbered(self, scope: _Scope, name: str) -> str:
        """javac's binary name of an anonymous (`Outer$1`) or local (`Outer$1Local`) class."""
        owner = self.class_scopes.get(scope.klass, scope) if scope.kind == "method" else scope
        count = owner.numbers.get(name, 0) + 1
        owner.numbers[name] = count
        return f"{owner.qualname}${count}{name}"

    def _bases(self, node: Node) -> list[str]:
        out = []
        superclass = node.child_by_field_name("superclass")
        if superclass is not None:
            out += [self.text(c) for c in superclass.named_children]
        for holder in ("interfaces",):
            found = node.child_by_field_name(holder)
            if found is not None:
                out += [self.text(t) for c in found.named_children for t in
                        (c.named_children if c.type == "type_list" else [c])]
        extends = next((c for c in node.named_children if c.type == "extends_interfaces"), None)
        if extends is not None:
            out += [self.text(t) for c in extends.named_children for t in
                    (c.named_children if c.type == "type_list" else [c])]
        return [" ".join(b.split()) for b in out if b]

    def _class_body(self, node: Node, body: Node | None, scope: _Scope, qualname: str, name: str, kind: str,
                    bases: list[str], annotations: list[str], doc: str | None, anonymous: bool = False) -> list:
        sid = self.new_id("class", qualname)
        self.rows["classes"].append(ClassRow(
            id=sid, file_id=self.file_id, name=name, qualname=qualname, module=self.module, path=self.path,
            scope_qualname=scope.qualname, start_line=node.start_point[0] + 1, end_line=node.end_point[0] + 1,
            bases=bases, metaclass=None, decorators=annotations, docstring=doc, source=self.text(node), kind=kind,
            type_parameters=self.type_parameters(node)))
        for position, base in enumerate(bases):
            self.rows["inheritance"].append(InheritanceRow(
                file_id=self.file_id, class_id=sid, class_qualname=qualname, module=self.module, path=self.path,
                position=position, base_text=base))
        inner = _Scope("class", qualname, sid, qualname, sid)
        self.class_scopes[qualname] = inner
        self.class_kinds[qualname] = kind
        members = list(body.named_children) if body is not None else []
        if kind == "enum":
            members = [m for c in members for m in (c.named_children if c.type == "enum_body_declarations" else [c])]
        if not anonymous:  # an anonymous class's constructor is javac's business, never called by name
            self._implicit_members(node, inner, kind, members)
        return [(c, inner) for c in members]

    def _implicit_members(self, node: Node, klass: _Scope, kind: str, members: list[Node]) -> None:
        """What Java declares for a class without code: a record's fields, accessors and canonical
        constructor, an enum's values() and valueOf(String), a default constructor."""
        line = node.start_point[0] + 1
        if kind == "record":  # what it declares itself of what Java would (the others' identities are asked once)
            declared = {self._method_identity(m, klass.qualname) for m in members
                        if m.type in ("method_declaration", "constructor_declaration")}
            compact = any(m.type == "compact_constructor_declaration" for m in members)
            components = node.child_by_field_name("parameters")
            params = [c for c in components.named_children if c.type == "formal_parameter"] if components else []
            for param in params:
                pname = self.text(param.child_by_field_name("name")) or "?"
                ptype = self.text(param.child_by_field_name("type")) or "?"
                self._member(klass, pname, f"{klass.qualname}.{pname}", "instance_attribute", None, ptype, None, [],
                             param, None)
                accessor = f"{klass.qualname}.{pname}()"
                if accessor not in declared:
                    self._member(klass, pname, accessor, "method", f"() -> {ptype}", None, None, [], None, None,
                                 line=line)
            canonical = f"{klass.qualname}.<init>({','.join(erased(self.text(p.child_by_field_name('type')) or '?') for p in params)})"
            if canonical not in declared and not compact:
                sid = self._member(klass, "<init>", canonical, "constructor",
                                   f"({', '.join(self.text(p) for p in params)})", None, None, [], None, None, line=line)
                self._parameters(sid, canonical, params)
        elif kind == "enum":
            self._member(klass, "values", f"{klass.qualname}.values()", "staticmethod",
                         f"() -> {klass.qualname.rpartition('.')[2]}[]", None, None, [], None, None, line=line)
            sid = self._member(klass, "valueOf", f"{klass.qualname}.valueOf(String)", "staticmethod",
                               f"(String name) -> {klass.qualname.rpartition('.')[2]}", None, None, [], None, None,
                               line=line)
            self.rows["parameters"].append(ParameterRow(
                file_id=self.file_id, owner_id=sid, owner_qualname=f"{klass.qualname}.valueOf(String)", position=0,
                name="name", kind="positional", annotation="String", default_value=None))
        if kind in ("class", "enum") and not any(m.type == "constructor_declaration" for m in members):
            self._member(klass, "<init>", f"{klass.qualname}.<init>()", "constructor", "()", None, None, [], None,
                         None, line=line)

    def _member(self, klass: _Scope, name: str, qualname: str, kind: str, signature: str | None,
                annotation: str | None, value: str | None, decorators: list[str], node: Node | None,
                doc: str | None, line: int | None = None, type_parameters: list[str] | None = None) -> int:
        sid = self.new_id("member", qualname)
        self.rows["members"].append(MemberRow(
            id=sid, file_id=self.file_id, class_id=klass.id, class_qualname=klass.qualname, name=name,
            qualname=qualname, module=self.module, path=self.path, kind=kind, signature=signature,
            annotation=annotation, value=value, decorators=decorators, is_async=False,
            start_line=node.start_point[0] + 1 if node is not None else line,
            end_line=node.end_point[0] + 1 if node is not None else line, docstring=doc,
            source=self.text(node) if node is not None else None, type_parameters=type_parameters))
        return sid

    def _formal_parameters(self, node: Node) -> list[Node]:
        params = node.child_by_field_name("parameters")
        return [c for c in params.named_children if c.type in ("formal_parameter", "spread_parameter")] \
            if params is not None else []

    def _parameter_type(self, param: Node) -> str:
        if param.type == "spread_parameter":  # `String... names`: the type, then a declarator
            kind = next((c for c in param.named_children if c.type not in ("modifiers", "variable_declarator")), None)
            return (self.text(kind) or "?") + "..."
        return self.text(param.child_by_field_name("type")) or "?"

    def _parameter_name(self, param: Node) -> str:
        if param.type == "spread_parameter":
            declarator = next((c for c in param.named_children if c.type == "variable_declarator"), None)
            return self.text(declarator.child_by_field_name("name")) if declarator is not None else "?"
        return self.text(param.child_by_field_name("name")) or "?"

    def _method_identity(self, node: Node, klass: str, types: list[str] | None = None) -> str:
        """`types`: its parameters' types as written, when read already."""
        name = "<init>" if node.type != "method_declaration" else self.text(node.child_by_field_name("name")) or "?"
        if types is None:
            types = [self._parameter_type(p) for p in self._formal_parameters(node)]
        return f"{klass}.{name}({','.join(erased(t) for t in types)})"

    def _parameters(self, owner_id: int, owner: str, params: list[Node],
                    written: list[tuple[str, str]] | None = None) -> None:
        """A parameters row each; `written`: each one's (type, name) as read already."""
        for position, param in enumerate(params):
            ptype, pname = written[position] if written is not None else \
                (self._parameter_type(param), self._parameter_name(param))
            self.rows["parameters"].append(ParameterRow(
                file_id=self.file_id, owner_id=owner_id, owner_qualname=owner, position=position, name=pname,
                kind="var-positional" if param.type == "spread_parameter" else "positional",
                annotation=" ".join(ptype.split()), default_value=None))

    def _method(self, node: Node, scope: _Scope) -> list:
        if scope.kind != "class":  # a method outside a class body: broken code
            return [(c, scope) for c in node.named_children]
        params = self._formal_parameters(node)
        written = [(self._parameter_type(p), self._parameter_name(p)) for p in params]
        listed = ", ".join(" ".join(ptype.split()) + " " + pname for ptype, pname in written)
        qualname = self._method_identity(node, scope.qualname, [ptype for ptype, _ in written])
        if node.type == "method_declaration":
            name = self.text(node.child_by_field_name("name")) or "?"
            returns = " ".join((self.text(node.child_by_field_name("type")) or "void").split())
            kind = "staticmethod" if self.is_static(node) else "method"
            signature = f"({listed}) -> {returns}"
        else:
            name, kind, signature = "<init>", "constructor", f"({listed})"
        sid = self._member(scope, name, qualname, kind, signature, None, None, self.annotations(node), node,
                           self.javadoc(node), type_parameters=self.type_parameters(node))
        self._parameters(sid, qualname, params, written)
        inner = _Scope("method", qualname, sid, scope.qualname, scope.id)
        body = node.child_by_field_name("body")
        if kind == "constructor" and body is not None and self.class_kinds.get(scope.qualname) == "class" and \
                not any(c.type == "explicit_constructor_invocation" for c in body.named_children):
            # a constructor that calls neither this(...) nor super(...) begins with super() (JLS 8.8.7)
            self._call_row(body, inner, "super", "super", "implicit", None, end=body.children[0])
        return [(body, inner)] if body is not None else []

    def _compact_constructor(self, node: Node, scope: _Scope) -> list:
        """`record Point(int x, int y) { Point { ... } }`: the canonical constructor, its parameters
        the record's components."""
        record = node.parent.parent if node.parent is not None else None
        components = record.child_by_field_name("parameters") if record is not None else None
        params = [c for c in components.named_children if c.type == "formal_parameter"] if components else []
        types = ",".join(erased(self.text(p.child_by_field_name("type")) or "?") for p in params)
        qualname = f"{scope.qualname}.<init>({types})"
        sid = self._member(scope, "<init>", qualname, "constructor", f"({', '.join(self.text(p) for p in params)})",
                           None, None, self.annotations(node), node, self.javadoc(node))
        self._parameters(sid, qualname, params)
        body = node.child_by_field_name("body")
        return [(body, _Scope("method", qualname, sid, scope.qualname, scope.id))] if body is not None else []

    def _annotation_element(self, node: Node, scope: _Scope) -> list:
        name = self.text(node.child_by_field_name("name")) or "?"
        returns = " ".join((self.text(node.child_by_field_name("type")) or "?").split())
        self._member(scope, name, f"{scope.qualname}.{name}()", "method", f"() -> {returns}", None,
                     self.short(node.child_by_field_name("value")), [], node, self.javadoc(node))
        return []

    def _field(self, node: Node, scope: _Scope) -> list:
        if scope.kind != "class":
            return None
        static = self.is_static(node) or node.type == "constant_declaration" or \
            self.class_kinds.get(scope.qualname) in ("interface", "annotation")
        declared = " ".join((self.text(node.child_by_field_name("type")) or "?").split())
        out = []
        for declarator in (c for c in node.named_children if c.type == "variable_declarator"):
            name = self.text(declarator.child_by_field_name("name")) or "?"
            dims = self.text(declarator.child_by_field_name("dimensions")) or ""
            value = declarator.child_by_field_name("value")
            self._member(scope, name, f"{scope.qualname}.{name}", "class_attribute" if static else "instance_attribute",
                         None, declared + dims, self.short(value), self.annotations(node), declarator,
                         self.javadoc(node))
            if value is not None:
                out.append((value, scope))
        return out

    def _enum_constant(self, node: Node, scope: _Scope) -> list:
        name = self.text(node.child_by_field_name("name")) or "?"
        self._member(scope, name, f"{scope.qualname}.{name}", "class_attribute", None,
                     scope.qualname.rpartition(".")[2], None, self.annotations(node), node, self.javadoc(node))
        out = []
        arguments = node.child_by_field_name("arguments")
        # every constant is made by a constructor of the enum, `RED` by its no-argument one (JLS 8.9.1)
        self._call_row(node, scope, scope.qualname.rpartition(".")[2], scope.qualname.rpartition(".")[2], "new",
                       arguments, end=node.child_by_field_name("name"))
        if arguments is not None:
            out.append((arguments, scope))
        body = node.child_by_field_name("body")
        if body is not None:  # RED { ... }: an anonymous subclass of the enum
            qualname = self._numbered(scope, "")
            out += self._class_body(node, body, scope, qualname, qualname.rpartition(".")[2], "class",
                                    [scope.qualname.rpartition(".")[2]], [], None, anonymous=True)
        return out

    def _initializer(self, node: Node, scope: _Scope) -> list:
        """A static or instance initializer block: its code is the class's."""
        return [(c, scope) for c in node.named_children]

    # -- code in bodies ------------------------------------------------------------------
    def _call_row(self, node: Node, scope: _Scope, text: str, name: str, kind: str, arguments: Node | None,
                  end: Node | None = None) -> None:
        caller = scope.qualname if scope.kind != "module" else self.module
        caller_id = scope.id
        last = end if end is not None else node
        self.rows["calls"].append(CallRow(
            file_id=self.file_id, caller_id=caller_id, caller_qualname=caller, line=node.start_point[0] + 1,
            col=node.start_point[1], end_line=last.end_point[0] + 1, end_col=last.end_point[1], callee_text=text,
            callee_name=name, kind=kind,
            arguments=[self.short(a) for a in arguments.named_children if a.type not in ("line_comment",
                                                                                          "block_comment")]
            if arguments is not None else []))

    def _invocation(self, node: Node, scope: _Scope) -> list:
        name_node = node.child_by_field_name("name")
        name = self.text(name_node) or "?"
        receiver = node.child_by_field_name("object")
        if receiver is not None:
            said = self.short(receiver)
            text = said + "." + name if not said.endswith("...") else said
        else:
            text = name
        self._call_row(node, scope, text, name, "call", node.child_by_field_name("arguments"), end=name_node)
        return [(c, scope) for c in node.named_children if c is not name_node]

    def _creation(self, node: Node, scope: _Scope) -> list:
        type_node = node.child_by_field_name("type")
        written = erased(self.text(type_node) or "?")
        typed = plain_type(" ".join((self.text(type_node) or "?").split()))
        self._call_row(node, scope, typed, written, "new", node.child_by_field_name("arguments"), end=type_node)
        out = [(c, scope) for c in node.named_children if c.type not in ("class_body",) and c is not type_node]
        body = next((c for c in node.named_children if c.type == "class_body"), None)
        if body is not None:  # new Runnable() { ... }: an anonymous class, Outer$1
            qualname = self._numbered(scope, "")
            out += self._class_body(node, body, scope, qualname, qualname.rpartition(".")[2], "class", [typed], [], None,
                                    anonymous=True)
        return out

    def _explicit_constructor(self, node: Node, scope: _Scope) -> list:
        which = node.child_by_field_name("constructor")
        outer = node.child_by_field_name("object")
        said = self.text(which) or "this"
        text = f"{self.short(outer)}.{said}" if outer is not None else said
        self._call_row(node, scope, text, said, "call", node.child_by_field_name("arguments"), end=which)
        return [(c, scope) for c in node.named_children if c is not which]

    def _reference(self, node: Node, scope: _Scope) -> list:
        parts = [c for c in node.children if c.type != "::"]
        name = self.text(parts[-1]) if parts else "?"
        holder = self.short(node.named_children[0]) if node.named_child_count else ""
        self._call_row(node, scope, f"{holder}::{name}", name, "reference", None)
        return [(node.named_children[0], scope)] if node.named_child_count > 1 else []

    def _binding(self, scope: _Scope, name: str, kind: str, node: Node, value: str | None,
                 annotation: str | None) -> None:
        if scope.kind != "method":
            return
        self.rows["bindings"].append(BindingRow(
            file_id=self.file_id, scope_qualname=scope.qualname, name=name, kind=kind, line=node.start_point[0] + 1,
            value=value, annotation=" ".join(annotation.split()) if annotation else None))

    def _local(self, node: Node, scope: _Scope) -> list:
        declared = self.text(node.child_by_field_name("type"))
        out = []
        for declarator in (c for c in node.named_children if c.type == "variable_declarator"):
            value = declarator.child_by_field_name("value")
            dims = self.text(declarator.child_by_field_name("dimensions")) or ""
            self._binding(scope, self.text(declarator.child_by_field_name("name")) or "?", "assignment", declarator,
                          self.short(value), (declared or "") + dims)
            if value is not None:
                out.append((value, scope))
        return out

    def _enhanced_for(self, node: Node, scope: _Scope) -> None:
        value = node.child_by_field_name("value")
        self._binding(scope, self.text(node.child_by_field_name("name")) or "?", "loop", node, self.short(value),
                      self.text(node.child_by_field_name("type")))
        return None  # its children (the iterated expression, the body) are walked as usual

    def _catch(self, node: Node, scope: _Scope) -> None:
        types = next((c for c in node.named_children if c.type == "catch_type"), None)
        caught = " | ".join(self.text(t) for t in types.named_children) if types is not None else None
        self._binding(scope, self.text(node.child_by_field_name("name")) or "?", "as", node, caught, caught)
        return None

    def _resource(self, node: Node, scope: _Scope) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            self._binding(scope, self.text(name), "with", node, self.short(node.child_by_field_name("value")),
                          self.text(node.child_by_field_name("type")))
        return None

    def _instanceof(self, node: Node, scope: _Scope) -> None:
        name = node.child_by_field_name("name")
        if name is not None:  # `x instanceof Foo f`
            declared = self.text(node.child_by_field_name("right"))
            self._binding(scope, self.text(name), "as", node, declared, declared)
        return None

    def _lambda(self, node: Node, scope: _Scope) -> None:
        params = node.child_by_field_name("parameters")
        if params is None:
            return None
        if params.type == "identifier":  # x -> ...
            self._binding(scope, self.text(params), "lambda", params, None, None)
        for param in params.named_children:
            if param.type == "formal_parameter":  # (String x) -> ...
                self._binding(scope, self.text(param.child_by_field_name("name")) or "?", "lambda", param, None,
                              self.text(param.child_by_field_name("type")))
            elif param.type == "identifier":  # (x, y) -> ...
                self._binding(scope, self.text(param), "lambda", param, None, None)
        return None

    def _skip(self, node: Node, scope: _Scope) -> list:
        return []

    _HANDLERS = {
        "package_declaration": _skip, "import_declaration": _import, "line_comment": _skip, "block_comment": _skip,
        **dict.fromkeys(_CLASS_LIKE, _class),
        "method_declaration": _method, "constructor_declaration": _method,
        "compact_constructor_declaration": _compact_constructor,
        "annotation_type_element_declaration": _annotation_element,
        "field_declaration": _field, "constant_declaration": _field, "enum_constant": _enum_constant,
        "static_initializer": _initializer,
        "method_invocation": _invocation, "object_creation_expression": _creation,
        "explicit_constructor_invocation": _explicit_constructor, "method_reference": _reference,
        "local_variable_declaration": _local, "enhanced_for_statement": _enhanced_for,
        "catch_formal_parameter": _catch, "resource": _resource, "instanceof_expression": _instanceof,
        "lambda_expression": _lambda,
    }



def extract(data: bytes, path: str, module: str, budget_s: float | None = None) -> FileFacts:
    """Parse one file's bytes. Raises UndecodableSource for binary or mis-encoded files,
    ExtractionBudget past `budget_s` (EXTRACT_SECONDS)."""
    deadline = time.monotonic() + (EXTRACT_SECONDS if budget_s is None else budget_s)
    sha = hashlib.sha256(data).hexdigest()
    src = decode_source(data).encode("utf-8")
    tree = _PARSER.parse(src)
    file_id = stable_id(path)
    ex = _Extractor(src, path, module, file_id, deadline)
    ex.run(tree.root_node)
    lines = src.count(b"\n") + (0 if not src or src.endswith(b"\n") else 1)
    return FileFacts(path, module, file_id, sha, lines=lines, parse_errors=count_errors(tree.root_node), rows=ex.rows)

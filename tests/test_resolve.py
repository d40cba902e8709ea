"""The resolver on shapes real packages have, without indexing anything."""

import textwrap
import time

import duckdb

from codegraph.indexer import index_repository
from codegraph.languages.python.resolve import Resolver


def _star_package(sources: int, present: int) -> Resolver:
    """`pkg/__init__.py` star-imports `sources` submodules; only `present` of them were indexed
    (as when the library layer stops at its file limit, seen with asyncio)."""
    defs = {"pkg": "module", "app": "module", "app.main": "function"}
    imports = [("pkg", "pkg", None, None, True, f"pkg.sub{i}") for i in range(sources)]
    for i in range(present):
        defs[f"pkg.sub{i}"] = "module"
    defs["pkg.sub0.Runner"] = "class"
    imports.append(("app", "app", "pkg", "pkg", False, "pkg"))
    return Resolver(defs, imports, [])


def test_star_imports_of_modules_that_are_not_indexed_do_not_explode():
    resolver = _star_package(sources=20, present=1)
    started = time.perf_counter()
    assert resolver.resolve_call("pkg.Runner", "app", "app.main") == ("pkg.sub0.Runner", "import")
    assert resolver.resolve_call("pkg.Missing", "app", "app.main")[0] in (None, "pkg.Missing")
    assert time.perf_counter() - started < 5  # was exponential: 20 sources ** 16 levels
    assert len(resolver._canon) < 1000


def test_star_imports_through_two_levels_still_resolve():
    defs = {"pkg": "module", "pkg.a": "module", "pkg.b": "module", "pkg.b.Thing": "class",
            "pkg.b.Thing.go": "method", "app": "module", "app.main": "function"}
    imports = [("pkg", "pkg", None, None, True, "pkg.a"), ("pkg.a", "pkg.a", None, None, True, "pkg.b"),
               ("app", "app", "pkg", "pkg", False, "pkg")]
    resolver = Resolver(defs, imports, [])
    assert resolver.resolve_call("pkg.Thing.go", "app", "app.main") == ("pkg.b.Thing.go", "import")


def test_a_name_both_defined_and_assigned_is_the_later_of_the_two_except_an_accelerator(tmp_path):
    """`def f` then `f = g`: f is g; `f = g` in an except branch, then
    `def f` in the else: the def; `class Future` then `Future = _accel.Future`: the class, whose
    source the accelerator replaces. Chained assignments give the innermost value."""
    import textwrap

    import duckdb


    (tmp_path / "m.py").write_text(textwrap.dedent("""\
        def _fallback(xs):
            return xs

        try:
            from itertools import pairwise as _pairwise
        except ImportError:
            pairs = _fallback
        else:
            def pairs(xs):
                return list(_pairwise(xs))

        def handler():
            return 1

        def loud():
            return 2

        handler = loud

        class Future:
            def done(self):
                return True

        try:
            import _asyncio
        except ImportError:
            pass
        else:
            Future = _CFuture = _asyncio.Future

        def main():
            pairs([1, 2])
            handler()
            Future().done()
        """))
    report = index_repository(tmp_path, tmp_path / "g.duckdb", jobs=1, embed=False, libraries=False)
    con = duckdb.connect(str(report.db_path), read_only=True)
    rows = {text: (callee, how) for text, callee, how in con.execute(
        "SELECT callee_text, resolved_callee, resolution FROM calls WHERE caller_qualname = 'm.main' "
        "AND NOT alternative AND kind = 'call'").fetchall()}
    functions = {q for q, in con.execute("SELECT qualname FROM globals WHERE kind = 'function'").fetchall()}
    values = dict(con.execute("SELECT name, value FROM globals WHERE kind = 'variable'").fetchall())
    con.close()
    assert rows["pairs"] == ("m.pairs", "local") and rows["Future().done"] == ("m.Future.done", "type")
    assert rows["handler"] == ("m.loud", "alias")
    assert values["Future"] == "_asyncio.Future"
    assert {"m.pairs", "m.handler"} <= functions  # both definitions stay in the tables


def test_a_called_lambda_is_what_it_returns_not_a_lambda(tmp_path):
    """`return (lambda: helper)()` gives helper's value, not a lambda: calling what make returns
    is no edge to make."""
    import duckdb


    (tmp_path / "m.py").write_text("def helper():\n    return 1\n\n\ndef make():\n    return (lambda: helper)()\n\n\n"
                                   "def pick():\n    return lambda: helper()\n\n\n"
                                   "def run():\n    f = make()\n    g = pick()\n    return f(), g()\n")
    report = index_repository(tmp_path, tmp_path / "g.duckdb", jobs=1, embed=False, libraries=False)
    con = duckdb.connect(str(report.db_path), read_only=True)
    rows = set(con.execute("SELECT callee_text, resolved_callee, resolution FROM calls "
                           "WHERE caller_qualname = 'm.run'").fetchall())
    con.close()
    assert ("g", "m.pick", "lambda") in rows
    assert not any(text == "f" and callee is not None for text, callee, _ in rows)


def test_a_decorator_with_optional_arguments_wraps_in_both_spellings(tmp_path):
    """`def deco(func=None, *, opt=1): if func is None: return partial(deco, opt=opt) ... return
    wrapper`: `@deco` and `@deco(opt=2)` both make f's calls run wrapper; the partial deco returns
    for itself is never taken for the wrapper."""
    import textwrap

    import duckdb


    (tmp_path / "m.py").write_text(textwrap.dedent("""\
        from functools import partial

        def deco(func=None, *, opt=1):
            if func is None:
                return partial(deco, opt=opt)
            def wrapper(*args):
                return func(*args)
            return wrapper

        @deco
        def plain():
            return 1

        @deco(opt=2)
        def tuned():
            return 2

        def run():
            return plain(), tuned()
        """))
    report = index_repository(tmp_path, tmp_path / "g.duckdb", jobs=1, embed=False, libraries=False)
    con = duckdb.connect(str(report.db_path), read_only=True)
    rows = set(con.execute("SELECT caller_qualname, callee_text, resolved_callee, resolution FROM calls "
                           "WHERE resolved_callee IS NOT NULL").fetchall())
    con.close()
    assert {("m.run", "plain", "m.deco.<locals>.wrapper", "wrapper"),
            ("m.run", "tuned", "m.deco.<locals>.wrapper", "wrapper")} <= rows
    assert not any(caller == "m.run" and callee == "m.deco" for caller, _, callee, _ in rows)
    # the decorated functions are what wrapper calls: both spellings hand them to deco's func
    assert {("m.deco.<locals>.wrapper", "func", "m.plain", "flow"),
            ("m.deco.<locals>.wrapper", "func", "m.tuned", "flow")} <= rows


def _hierarchy(classes: dict[str, tuple[str, ...]]) -> Resolver:
    """Classes of module m by name -> their bases' names, as a resolver sees them."""
    defs = {"m": "module", **{f"m.{name}": "class" for name in classes}}
    bases = [(f"m.{name}", "m", i, base) for name, written in classes.items() for i, base in enumerate(written)]
    return Resolver(defs, [], bases)


def test_the_mro_is_pythons_on_diamonds_and_mixins():
    """Ground truth: the __mro__ Python itself computes for the same class statements."""
    shapes = {
        "diamond": {"A": (), "B": ("A",), "C": ("A",), "D": ("B", "C")},
        "mixins": {"Base": (), "Log": (), "Cache": ("Base",), "Store": ("Base",), "App": ("Log", "Cache", "Store")},
        "deep diamond": {"A": (), "B": ("A",), "C": ("B",), "D": ("A",), "E": ("C", "D"), "F": ("E", "D")},
    }
    for shape, classes in shapes.items():
        made: dict[str, type] = {}
        for name, written in classes.items():
            made[name] = type(name, tuple(made[b] for b in written), {})
        resolver = _hierarchy(classes)
        for name, klass in made.items():
            expected = [f"m.{k.__name__}" for k in klass.__mro__ if k is not object]
            assert resolver.mro(f"m.{name}") == expected, (shape, name)


def test_the_mro_of_a_deep_chain_is_made_once_per_class_and_cycles_end():
    depth = 3000
    resolver = _hierarchy({"C0": (), **{f"C{i}": (f"C{i - 1}",) for i in range(1, depth)}})
    assert resolver.mro(f"m.C{depth - 1}") == [f"m.C{i}" for i in reversed(range(depth))]
    assert len(resolver._mro) == depth  # every ancestor's order kept, each made once
    looped = _hierarchy({"A": ("B",), "B": ("A",), "S": ("S",)})
    assert looped.mro("m.A") == ["m.A"] and looped.mro("m.B") == ["m.B"]
    assert looped.mro("m.S") == ["m.S"]


def test_classes_deriving_from_each_other_answer_the_same_whichever_is_asked_first():
    """Python refuses `class A(B)` with `class B(A)`; a model may still write it, and an update
    asks the resolver in another order than a full build does: each class of such a cycle leaves
    out the bases in it, whichever came first (before, the first asked kept the other as a base;
    a mutated click had its update and its rebuild disagree on what `super().__init__` runs)."""
    classes = {"Root": (), "Top": (), "A": ("B", "Top"), "B": ("C", "Root"), "C": ("A",), "D": ("B",), "E": ("D", "A")}
    answers = set()
    for first in classes:
        resolver = _hierarchy(classes)
        resolver.mro(f"m.{first}")
        answers.add(tuple((name, tuple(resolver.mro(f"m.{name}"))) for name in classes))
    assert len(answers) == 1
    mros = dict(answers.pop())
    assert mros["A"] == ("m.A", "m.Top") and mros["B"] == ("m.B", "m.Root") and mros["C"] == ("m.C",)
    assert mros["D"] == ("m.D", "m.B", "m.Root")  # below the cycle, its classes are bases as any
    assert mros["E"] == ("m.E", "m.D", "m.B", "m.Root", "m.A", "m.Top")


def test_a_name_looked_up_in_a_function_no_one_taught_it_asks_the_loader():
    """An update learns the local names of the files it resolves; a class made inside a function
    of another file (`def serve(handler=None): ...; class Handler(handler)`) is still read in that
    function's names, which the resolver asks `scope_loader` for, once, when it first looks one
    up there. Before, the name fell through to the module: the base resolved to nothing, and that
    answer was kept after the function's names came."""
    defs = {"m": "module", "m.Base": "class", "m.serve": "function", "m.serve.<locals>.Handler": "class"}
    bases = [("m.serve.<locals>.Handler", "m", 0, "handler")]
    resolver = Resolver(defs, [], bases)
    asked = []

    def loader(scopes):
        asked.append(sorted(scopes))
        bindings = [("m.serve", "handler", "assignment", "Base", None)] if "m.serve" in scopes else []
        parameters = [("m.serve", 0, "handler", None, "positional", "None")] if "m.serve" in scopes else []
        return bindings, parameters

    resolver.scope_loader = loader
    assert resolver.subclasses("m.Base") == ["m.serve.<locals>.Handler"]
    assert resolver.resolved_bases("m.serve.<locals>.Handler") == [("m.Base", "alias")]
    assert asked == [["m.serve"]]


def test_a_receiver_nothing_describes_is_guessed_by_the_one_family_defining_the_method(tmp_path):
    """`x.render_all()` on a parameter: the one class family's method and its override; never
    where the code says the receiver is a library's or builtin's value (re.compile, dict(), a
    string), a module or a class, nor for a name two families define or a builtin type has."""
    (tmp_path / "shapes.py").write_text(textwrap.dedent("""\
        import re

        class Page:
            def render_all(self):
                return 1
            def shared(self):
                return 1

        class Cover(Page):
            def render_all(self):
                return 2

        class Other:
            def shared(self):
                return 3
            def sub(self, a, b):
                return a

        class Store:
            def __init__(self):
                self.dict = dict(a=1)  # the builtin, though the class has a member of that name

            def first(self):
                return self.dict.render_all()

        MARK = re.compile("x")

        def show(p, q):
            p.render_all()
            q.shared()
            p.update()
            MARK.sub("", "y")
            d = dict(a=1)
            d.render_all()
            "text".render_all()
            Page.render_all(p)
        """))
    db = tmp_path / "g.duckdb"
    index_repository(tmp_path, db, jobs=1, embed=False, libraries=False)
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT callee_text, resolved_callee, resolution FROM calls WHERE callee_text LIKE '%.%' "
                       "ORDER BY line, alternative").fetchall()
    con.close()
    assert [r for r in rows if r[2] in ("name", "override")] == [
        ("p.render_all", "shapes.Page.render_all", "name"), ("p.render_all", "shapes.Cover.render_all", "override")]
    assert ("Page.render_all", "shapes.Page.render_all", "local") in rows


def test_a_property_object_stored_cut_or_spaced_still_runs_its_getter_and_setter(tmp_path):
    """`status = property (_get, _set, None, "<a long doc>")` is stored shortened: the names it
    starts with still say the getter and setter; a call stored cut with nothing readable after
    `property(` says nothing, and neither breaks the build."""
    doc = "and on " * 40
    (tmp_path / "m.py").write_text(textwrap.dedent(f"""\
        class R:
            def _get(self):
                return 1

            def _set(self, value):
                pass

            status = property (_get, _set, None, "{doc}")
            odd = property(lambda self: {"x" * 300!r})


        def use(r: R):
            r.status = 2
            return r.status, r.odd
        """))
    report = index_repository(tmp_path, tmp_path / "g.duckdb", jobs=1, embed=False, libraries=False)
    con = duckdb.connect(str(report.db_path), read_only=True)
    try:
        assert con.execute("SELECT value FROM members WHERE name = 'status'").fetchone()[0].endswith("...")
        rows = set(con.execute("SELECT callee_text, resolved_callee FROM calls WHERE kind = 'property'").fetchall())
    finally:
        con.close()
    assert rows == {("r.status", "m.R._get"), ("r.status", "m.R._set")}

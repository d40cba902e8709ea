"""The resolver on shapes real packages have, without indexing anything."""

import time

from codegraph.resolve import Resolver


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

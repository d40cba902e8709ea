"""What the indexer must get right, spelled out on the fixture repository."""

from conftest import rows


def test_src_layout_and_scripts_get_importable_module_names(mini_con):
    modules = {r[0] for r in rows(mini_con, "SELECT qualname FROM modules")}
    assert modules == {"shop", "shop.models", "shop.pricing", "shop.util", "shop.util.text", "run"}


def test_gitignored_and_build_folders_are_not_indexed(mini_con):
    paths = {r[0] for r in rows(mini_con, "SELECT path FROM files")}
    assert not any(p.startswith(("ignored_dir/", "build/")) or p.endswith("_generated.py") for p in paths)


def test_member_kinds_are_told_apart(mini_con):
    kinds = dict(rows(mini_con, "SELECT qualname, kind FROM members"))
    assert kinds["shop.models.Item.gross"] == "property"
    assert kinds["shop.models.Cart.size"] == "property"  # functools.cached_property
    assert kinds["shop.models.Item.parse"] == "staticmethod"
    assert kinds["shop.models.Base.create"] == "classmethod"
    assert kinds["shop.models.Cart.add"] == "method"
    assert kinds["shop.models.Item.TAX"] == "class_attribute"
    assert kinds["shop.models.Item.name"] == "class_attribute"  # annotated, no value
    assert kinds["shop.models.Cart.owner"] == "instance_attribute"
    assert kinds["shop.models.Cart.touched"] == "instance_attribute"  # assigned outside __init__
    assert "shop.models.Cart.items" in kinds
    # the property setter is the same member, not a second one
    assert rows(mini_con, "SELECT count(*) FROM members WHERE qualname = 'shop.models.Item.gross'") == [(1,)]


def test_parameters_keep_kind_annotation_and_default(mini_con):
    params = rows(mini_con, """SELECT name, kind, annotation, default_value FROM parameters
                               WHERE owner_qualname = 'shop.models.Cart.__init__' ORDER BY position""")
    assert params == [
        ("self", "positional-only", None, None),
        ("owner", "positional-only", None, None),
        ("items", "positional", None, "None"),
        ("currency", "keyword-only", "str", '"EUR"'),
    ]
    kinds = [r[0] for r in rows(mini_con, """SELECT kind FROM parameters
                                           WHERE owner_qualname = 'shop.pricing.total' ORDER BY position""")]
    assert kinds == ["positional", "positional", "var-positional", "keyword-only", "var-keyword"]


def test_relative_imports_are_resolved(mini_con):
    got = rows(mini_con, """SELECT module, imported_module, name, resolved_qualname FROM imports
                            WHERE level > 0 ORDER BY module, line, name""")
    assert ("shop.util.text", "shop.pricing", "total", "shop.pricing.total") in got
    assert ("shop.pricing", "shop", "models", "shop.models") in got
    assert ("shop", "shop.models", "Cart", "shop.models.Cart") in got
    # the import inside Cart.total is scoped to that method
    assert rows(mini_con, "SELECT scope_qualname FROM imports WHERE line = 63") == [("shop.models.Cart.total",)]


def test_dunder_all_is_recorded_including_augmented_assignment(mini_con):
    assert rows(mini_con, "SELECT all_names FROM modules WHERE qualname = 'shop'") == [(["Item", "Basket", "VERSION"],)]


def test_calls_resolve_through_imports_self_super_and_reexports(mini_con):
    resolved = {(r[0], r[1]): (r[2], r[3]) for r in rows(
        mini_con, "SELECT caller_qualname, callee_text, resolved_callee, resolution FROM calls")}
    assert resolved[("shop.models.Cart.add", "self._touch")] == ("shop.models.Cart._touch", "self")
    assert resolved[("shop.models.Item.describe", "super().describe")] == ("shop.models.Base.describe", "super")
    assert resolved[("shop.pricing.load", "models.Cart.create")] == ("shop.models.Base.create", "import")
    assert resolved[("run", "Basket")] == ("shop.models.Cart", "import")  # re-exported under an alias
    assert resolved[("shop.pricing.apply_discount", "clamp")] == (
        "shop.pricing.apply_discount.<locals>.clamp", "local")
    assert resolved[("shop.pricing.load", "j.loads")] == ("json.loads", "external")
    assert resolved[("shop.pricing.load", "fh.read")] == (None, None)  # needs types: left alone


def test_bases_resolve_through_module_attributes_and_aliases(mini_con):
    assert rows(mini_con, "SELECT base_qualnames FROM classes WHERE name = 'Special'") == [
        (["shop.models.Item", "shop.models.Base"],)]


def test_unparsable_file_is_recovered_not_dropped(mini_con):
    assert rows(mini_con, "SELECT parse_errors > 0 FROM files WHERE path = 'src/shop/util/text.py'") == [(True,)]
    assert rows(mini_con, "SELECT name FROM globals WHERE module = 'shop.util.text' AND name = 'label'") == [("label",)]


def test_symbols_view_answers_where_is_x_defined(mini_con):
    got = rows(mini_con, "SELECT kind, qualname, path, start_line FROM symbols WHERE name = 'total' ORDER BY qualname")
    assert got == [("method", "shop.models.Cart.total", "src/shop/models.py", 62),
                   ("function", "shop.pricing.total", "src/shop/pricing.py", 9)]


def test_members_of_follows_the_mro_and_hides_overridden_members(mini_con):
    got = rows(mini_con, "SELECT name, defined_in, mro_position FROM members_of('shop.pricing.Special')")
    by_name = {name: (defined_in, pos) for name, defined_in, pos in got}
    assert by_name["describe"] == ("shop.models.Item", 1)  # Item overrides Base.describe
    assert by_name["create"] == ("shop.models.Base", 2)
    assert len(got) == len(by_name)


def test_macros(mini_con):
    assert rows(mini_con, "SELECT qualname FROM subclasses_of('Base') ORDER BY qualname") == [
        ("shop.models.Cart",), ("shop.models.Item",), ("shop.pricing.Special",)]
    names = {r[0]: r[1] for r in rows(mini_con, "SELECT name, origin FROM names_in_module('shop')")}
    assert names == {"Basket": "imported", "Item": "imported", "__all__": "defined", "VERSION": "defined"}
    assert rows(mini_con, "SELECT parameters FROM signature_of('shop.pricing.total')") == [
        (["items", "discount", "rest", "rounding", "options"],)]
    callers = {r[0] for r in rows(mini_con, "SELECT caller_qualname FROM callers_of('shop.pricing.total')")}
    assert callers == {"shop.models.Cart.total", "shop.util.text.label"}
    defs = rows(mini_con, "SELECT qualname FROM definitions_named('Item')")
    assert defs == [("shop.models.Item",)]
    lines = [r[0] for r in rows(mini_con, "SELECT import_line FROM import_candidates('Item')")]
    assert lines[0] == "from shop import Item"  # the package's public path before the module that defines it
    assert "from shop.models import Item" in lines

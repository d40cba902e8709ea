"""Facts about the real standard library of the Python running the tests."""

import pytest

from conftest import rows

pytestmark = pytest.mark.slow


def test_every_stdlib_file_is_indexed_or_reported(stdlib_con, stdlib_root):
    on_disk = {p.relative_to(stdlib_root).as_posix() for p in stdlib_root.rglob("*.py")
               if "site-packages" not in p.parts and "__pycache__" not in p.parts}
    indexed = {r[0] for r in rows(stdlib_con, "SELECT path FROM files")}
    skipped = {r[0] for r in rows(stdlib_con, "SELECT path FROM skipped_files")}
    assert indexed | skipped == on_disk
    assert len(indexed) > 1000


def test_module_names_are_what_python_imports(stdlib_con):
    assert rows(stdlib_con, "SELECT path, is_package FROM modules WHERE qualname = 'json.decoder'") == [
        ("json/decoder.py", False)]
    assert rows(stdlib_con, "SELECT path FROM modules WHERE qualname = 'json'") == [("json/__init__.py",)]


def test_json_decoder_members(stdlib_con):
    kinds = dict(rows(stdlib_con, "SELECT name, kind FROM members WHERE class_qualname = 'json.decoder.JSONDecoder'"))
    assert kinds["raw_decode"] == "method"
    assert kinds["decode"] == "method"
    assert kinds["parse_float"] == "instance_attribute"
    assert kinds["scan_once"] == "instance_attribute"
    assert rows(stdlib_con, "SELECT signature FROM members WHERE qualname = 'json.decoder.JSONDecoder.raw_decode'") == [
        ("(self, s, idx=0)",)]


def test_get_payload_parameters(stdlib_con):
    got = rows(stdlib_con, """SELECT name, kind, default_value FROM parameters
                              WHERE owner_qualname = 'email.message.Message.get_payload' ORDER BY position""")
    assert got == [("self", "positional", None), ("i", "positional", "None"), ("decode", "positional", "False")]


def test_bases_resolve(stdlib_con):
    assert rows(stdlib_con, "SELECT base_qualnames FROM classes WHERE qualname = 'collections.OrderedDict'") == [
        (["builtins.dict"],)]
    assert rows(stdlib_con, "SELECT base_qualnames FROM classes WHERE qualname = 'collections.UserDict'") == [
        (["_collections_abc.MutableMapping"],)]
    assert rows(stdlib_con, "SELECT base_qualnames FROM classes WHERE qualname = 'logging.RootLogger'") == [
        (["logging.Logger"],)]


def test_inherited_members_show_up_in_members_of(stdlib_con):
    got = {r[0]: r[1] for r in rows(stdlib_con,
                                     "SELECT name, defined_in FROM members_of('logging.RootLogger')")}
    assert got["__init__"] == "logging.RootLogger"  # its own override wins
    assert got["info"] == "logging.Logger"
    assert got["addFilter"] == "logging.Filterer"  # two levels up
    abc = {r[0]: r[1] for r in rows(stdlib_con, "SELECT name, defined_in FROM members_of('collections.UserDict')")}
    assert abc["setdefault"] == "_collections_abc.MutableMapping"
    assert abc["keys"] == "_collections_abc.Mapping"


def test_calls_resolve_across_modules(stdlib_con):
    # json/__init__.py builds its default decoder from the class it imports from .decoder
    got = rows(stdlib_con, """SELECT resolved_callee, resolution FROM calls
                              WHERE caller_qualname = 'json' AND callee_text = 'JSONDecoder'""")
    assert got == [("json.decoder.JSONDecoder", "import")]
    assert "json.load" in {r[0] for r in rows(stdlib_con, "SELECT caller_qualname FROM callers_of('json.loads')")}
    callers = {r[0] for r in rows(stdlib_con, "SELECT caller_qualname FROM callers_of('json.decoder.JSONDecoder.raw_decode')")}
    assert "json.decoder.JSONDecoder.decode" in callers
    share = rows(stdlib_con, "SELECT avg((resolved_callee IS NOT NULL)::INT) FROM calls")[0][0]
    assert share > 0.35


def test_import_candidates_on_the_stdlib(stdlib_con):
    lines = [r[0] for r in rows(stdlib_con, "SELECT import_line FROM import_candidates('OrderedDict')")]
    assert "from collections import OrderedDict" in lines

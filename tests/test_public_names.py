"""Names as users write them: a public path (`pkg.Client`) leads to its definition in a private
module, and import cards put the public import first (issue 29, part 1)."""

from pathlib import Path

import duckdb
import pytest

from codegraph.indexer import index_repository
from codegraph.retrieval import tools
from codegraph.retrieval.rules import load_template

FILES = {
    "pkg/__init__.py": '''"""A package whose public names live in private modules."""
from ._client import Client, helper
from ._errors import *
from . import _client as client_module

__all__ = ["Client", "helper", "Oops"]
''',
    "pkg/_client.py": '''import os
import warnings


class Base:
    def close(self):
        return None


class Client(Base):
    def send(self, request):
        return helper(request)


def helper(x):
    return x
''',
    "pkg/_errors.py": '''__all__ = ["Oops"]


class Oops(Exception):
    pass
''',
    "pkg/sub/__init__.py": "",
    "pkg/sub/decoder.py": "def decode(text):\n    return text\n",
    "tests/__init__.py": "",
    "tests/test_client.py": "from pkg._client import Client, os\n\n\ndef test_send():\n    Client().send(1)\n",
    "my-scripts/run.py": "from pkg import Client, helper\n",
    "app.py": '''import pkg


def main():
    client = pkg.Client()
    client.send(1)
    return pkg.helper(2)
''',
}


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    root = tmp_path_factory.mktemp("public") / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    report = index_repository(root, jobs=1, embed=False)  # with the standard library: `import os`
    con = duckdb.connect(str(report.db_path), read_only=True)
    yield con
    con.close()


def _column(con, sql, *params):
    return [r[0] for r in con.execute(sql, list(params)).fetchall()]


@pytest.mark.parametrize("path, expected", [
    ("pkg.Client", "pkg._client.Client"),                   # re-exported by the package
    ("pkg.Client.close", "pkg._client.Base.close"),         # then a member, inherited
    ("pkg.Oops", "pkg._errors.Oops"),                       # through a star import
    ("pkg.client_module.helper", "pkg._client.helper"),     # through a module imported under another name
    ("pkg._client.Client.send", "pkg._client.Client.send"),  # a qualified name is itself
    ("os.path.join", "posixpath.join"),                     # the standard library's own re-exports
])
def test_a_dotted_path_leads_to_its_definition(con, path, expected):
    assert expected in _column(con, "SELECT qualname FROM canonical(?)", path)


def test_a_path_to_nothing_leads_nowhere(con):
    assert _column(con, "SELECT qualname FROM canonical(?)", "pkg.Nothing") == []
    assert _column(con, "SELECT qualname FROM canonical(?)", "Client") == []  # a simple name is not a path


def test_every_macro_takes_the_public_path(con):
    members = con.execute("SELECT DISTINCT class FROM members_of('pkg.Client')").fetchall()
    assert members == [("pkg._client.Client",)]
    assert {"send", "close"} <= set(_column(con, "SELECT name FROM members_of('pkg.Client')"))
    assert con.execute("SELECT qualname, parameters FROM signature_of('pkg.helper')").fetchall() == [
        ("pkg._client.helper", ["x"])]
    assert set(_column(con, "SELECT caller_qualname FROM callers_of('pkg.helper')")) == {
        "app.main", "pkg._client.Client.send"}
    assert "app.main" in _column(con, "SELECT caller_qualname FROM callers_of('pkg.Client.send')")
    assert "pkg._client.helper" in _column(con, "SELECT resolved_callee FROM callees_of('pkg.Client.send')")
    assert _column(con, "SELECT qualname FROM definitions_named('pkg.Client')") == ["pkg._client.Client"]
    assert "pkg._client.Client" in _column(con, "SELECT qualname FROM definitions_named('Client')")
    assert _column(con, "SELECT qualname FROM implementations_of('pkg.Client.close')") == ["pkg._client.Base.close"]
    assert _column(con, "SELECT qualname FROM ancestors_of('pkg.Client') a JOIN all_classes c "
                        "ON c.qualname = a.class_qualname ORDER BY mro_position") == [
        "pkg._client.Client", "pkg._client.Base"]
    assert "Client" in _column(con, "SELECT name FROM names_in_module('pkg')")
    assert "app" in {p.split(".")[0] for p in _column(con, "SELECT path FROM references_to('pkg.Client')")}


def test_import_cards_put_the_public_path_first(con):
    client = _column(con, "SELECT import_line FROM import_candidates('Client')")
    assert client[0] == "from pkg import Client"
    assert "from pkg._client import Client" in client  # still offered, after it
    assert not any("tests" in line or "my-scripts" in line for line in client)  # a test module, a hyphen
    assert _column(con, "SELECT import_line FROM import_candidates('Oops')")[0] == "from pkg import Oops"


def test_a_module_is_imported_as_itself_before_modules_that_import_it(con):
    lines = _column(con, "SELECT import_line FROM import_candidates('os')")
    assert lines[0] == "import os"
    assert "from pkg._client import os" in lines  # the project's module passing it on comes later
    assert not any(line.startswith("from tests") for line in lines)
    assert _column(con, "SELECT import_line FROM import_candidates('warnings')")[0] == "import warnings"
    # a submodule is bound by a from-import: `import pkg.sub.decoder` does not bind `decoder`
    assert _column(con, "SELECT import_line FROM import_candidates('decoder')")[0] == "from pkg.sub import decoder"


def test_each_definition_has_one_chosen_spelling(con):
    chosen = con.execute("SELECT qualname, import_line FROM import_candidates('Client') WHERE choice = 1").fetchall()
    assert chosen == [("pkg._client.Client", "from pkg import Client")]
    assert con.execute("SELECT import_line, public_path FROM import_line_of('pkg._client.Client.send')").fetchall() \
        == [("from pkg import Client", "pkg.Client.send")]


def test_the_rrr_tools_take_the_public_path_and_say_how_to_import(con):
    info = tools.get_class_info(con, "pkg.Client")
    assert [(c["qualname"], c["import_line"]) for c in info] == [("pkg._client.Client", "from pkg import Client")]
    assert "send" in {m["name"] for m in info[0]["members"]}
    assert [(s["qualname"], s["import_line"]) for s in tools.get_signature(con, "pkg.helper")] == [
        ("pkg._client.helper", "from pkg import helper")]
    assert "return helper(request)" in tools.get_method_body(con, "pkg.Client.send")[0]["source"]
    imports = tools.get_imports(con, ["Client", "os"])
    assert imports["Client"][:2] == ["from pkg import Client", "from pkg._client import Client"]
    assert imports["os"][0] == "import os"

def test_an_undefined_name_is_offered_by_its_public_path(con):
    found = con.execute(load_template("undefined_name"), {
        "name": "Client", "module": "app", "owner": "", "function": "app.main", "local": [], "limit": 5}).fetchall()
    columns = [d[0] for d in con.description]
    first = dict(zip(columns, found[0]))
    assert (first["qualname"], first["import_line"]) == ("pkg._client.Client", "from pkg import Client")
    module = dict(zip(columns, con.execute(load_template("undefined_name"), {
        "name": "os", "module": "app", "owner": "", "function": "app.main", "local": [], "limit": 5}).fetchall()[0]))
    assert module["import_line"] == "import os"

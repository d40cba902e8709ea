import atexit
import os
import shutil
import sysconfig
import tempfile
from pathlib import Path

import duckdb
import pytest

from codegraph.indexer import index_repository

FIXTURES = Path(__file__).parent / "fixtures"
# The library cache of this session (the builds share it, the processes they start too): never the
# user's own folder.
os.environ["CODEGRAPH_CACHE"] = tempfile.mkdtemp(prefix="codegraph-test-cache-")
atexit.register(shutil.rmtree, os.environ["CODEGRAPH_CACHE"], True)
# The library layer comes from the interpreter running the tests, not from a virtualenv the shell
# activated (CI activates one and then runs the tests with another's python).
os.environ.pop("VIRTUAL_ENV", None)
# The builds embed with the hashing model unless a test names the learned one: what the machine
# happens to have installed must not change the suite's results or its run time.
os.environ["CODEGRAPH_EMBEDDING"] = "hash"
EXAMPLE = Path(__file__).parent.parent / "examples" / "shop"  # the README's example repository


@pytest.fixture(scope="session")
def stdlib_root() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


@pytest.fixture(scope="session")
def stdlib_db(tmp_path_factory, stdlib_root) -> Path:
    """The real standard library of this Python, indexed once per test session."""
    db_path = tmp_path_factory.mktemp("stdlib") / "graph.duckdb"
    index_repository(stdlib_root, db_path)
    return db_path


@pytest.fixture(scope="session")
def stdlib_con(stdlib_db):
    con = duckdb.connect(str(stdlib_db), read_only=True)
    yield con
    con.close()


@pytest.fixture
def mini_repo(tmp_path) -> Path:
    """A private copy of the fixture repository, free to edit."""
    target = tmp_path / "minirepo"
    shutil.copytree(FIXTURES / "minirepo", target, symlinks=True)
    return target


@pytest.fixture(scope="session")
def mini_db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mini") / "minirepo"
    shutil.copytree(FIXTURES / "minirepo", root)
    report = index_repository(root, jobs=1, libraries=False)  # the golden rows: no machine-dependent stdlib
    return report.db_path


@pytest.fixture
def mini_con(mini_db):
    con = duckdb.connect(str(mini_db), read_only=True)
    yield con
    con.close()


@pytest.fixture
def example(tmp_path) -> Path:
    """A private copy of examples/shop (the README's refine example), free to edit."""
    repo = tmp_path / "shop"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns("__pycache__", ".codegraph"))
    return repo


def rows(con, sql, params=None):
    return con.execute(sql, params or {}).fetchall()


GRAPH_TABLES = ("files", "modules", "classes", "members", "globals", "parameters", "bindings", "imports", "calls",
                "refs", "inheritance", "nested_functions", "skipped_files", "words", "getattr_strings")
_BY_FILE = ("words", "getattr_strings")  # rows that say nothing of their file but its id: read with its path


def snapshot(db_path):
    """Every graph table's rows in order (file ids left out: they follow paths): two builds of
    the same files must be equal."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {table: con.execute(
            f"SELECT f.path, t.* EXCLUDE (file_id) FROM {table} t LEFT JOIN files f USING (file_id) ORDER BY ALL"
            if table in _BY_FILE else f"SELECT * EXCLUDE (file_id) FROM {table} ORDER BY ALL"
            if table != "skipped_files" else f"SELECT * FROM {table} ORDER BY ALL").fetchall() for table in GRAPH_TABLES}
    finally:
        con.close()

"""codegraph: a Python repository as a code-graph database in one DuckDB file."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("codegraph-duckdb")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"

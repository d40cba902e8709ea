"""codegraph: a Python repository as a code-graph database in one DuckDB file."""

__version__ = "0.1.0"  # the one place the version is said (pyproject.toml reads it)

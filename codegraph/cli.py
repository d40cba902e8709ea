"""The command line: each command checks its options, calls one library function, prints."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict

import click

from . import __version__, db
from .errors import CodegraphError
from .formatting import as_csv, as_json, as_table, index_summary


class _Group(click.Group):
    """Turns codegraph's own errors into one clear line and exit status 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except CodegraphError as exc:
            click.echo(f"Error: {exc}", err=True)
            ctx.exit(1)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="codegraph")
def main() -> None:
    """A Python repository as a code-graph database in one DuckDB file."""


db_option = click.option(
    "--db", "db_path", type=click.Path(dir_okay=False),
    help=f"Database file. Default: ${db.ENV_DB}, else the nearest {db.DB_DIRNAME}/{db.DB_FILENAME} upwards.",
)


@main.command()
@click.argument("repo", type=click.Path(exists=True, file_okay=False))
@click.option("--db", "db_path", type=click.Path(dir_okay=False),
              help=f"Where to write the database. Default: REPO/{db.DB_DIRNAME}/{db.DB_FILENAME}.")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating changed files.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), help="Parser processes (default: up to 2 cores).")
@click.option("--max-file-size", type=click.IntRange(1), default=5 * 1024 * 1024, show_default=True,
              help="Skip Python files larger than this many bytes.")
@click.option("--json", "as_json_", is_flag=True, help="Print the report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def index(repo, db_path, full, jobs, max_file_size, as_json_, quiet):
    """Build or update the code graph of REPO."""
    from .indexer import index_repository

    show_bar = not quiet and not as_json_ and sys.stderr.isatty()
    bar = click.progressbar(length=1, label="parsing", file=sys.stderr) if show_bar else None

    def progress(done: int, total: int, path: str) -> None:
        if bar is not None:
            bar.length = total
            bar.update(done - bar.pos, path)

    try:
        report = index_repository(repo, db_path, jobs=jobs, max_file_size=max_file_size, full=full,
                                  progress=progress if bar else None)
    finally:
        if bar is not None:
            bar.render_finish()
    if as_json_:
        data = asdict(report)
        data["db_path"], data["repo_root"] = str(report.db_path), str(report.repo_root)
        click.echo(json.dumps(data, indent=2))
    elif not quiet:
        click.echo(index_summary(report))


@main.command()
@click.argument("query")
@db_option
@click.option("--json", "fmt", flag_value="json", help="Rows as JSON objects.")
@click.option("--csv", "fmt", flag_value="csv", help="Rows as CSV.")
@click.option("--max-rows", type=click.IntRange(1), default=10_000, show_default=True)
@click.option("--timeout", type=click.FloatRange(0.1), default=30.0, show_default=True, help="Seconds.")
def sql(query, db_path, fmt, max_rows, timeout):
    """Run read-only SQL over the graph. QUERY may be - to read it from standard input."""
    if query == "-":
        query = sys.stdin.read()
    if not query.strip():
        raise click.UsageError("QUERY is empty: give a SELECT statement, e.g. \"SELECT * FROM stats\"")
    result = db.query_database(db.find_db(db_path), query, max_rows=max_rows, timeout_s=timeout)
    click.echo({"json": as_json, "csv": as_csv}.get(fmt, as_table)(result).rstrip("\n"))


@main.command()
@db_option
@click.option("--json", "as_json_", is_flag=True)
def stats(db_path, as_json_):
    """Row counts per table and what the database was built from."""
    info = db.database_stats(db.find_db(db_path))
    if as_json_:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"database: {info['path']}")
    for key, value in info["meta"].items():
        click.echo(f"  {key}: {value}")
    width = max(len(t) for t in info["counts"])
    for table, count in info["counts"].items():
        click.echo(f"  {table.ljust(width)}  {count:>10,}")


if __name__ == "__main__":
    main()

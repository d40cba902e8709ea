"""The command line: each command checks its options, calls one library function, prints."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

import click

from . import __version__, graphfile, query_worker
from .environment import withhold_secrets
from .errors import CodegraphError, system_refusal, terminal_safe
from .formatting import as_csv, as_json, as_table, index_summary
from .semantic import MODES


def echo(message=None, nl: bool = True, err: bool = False) -> None:
    """click.echo, with every control character made visible: names, query results and a model's
    answers never reach the terminal as escape sequences."""
    click.echo(terminal_safe(message) if isinstance(message, str) else message, nl=nl, err=err)


class _Group(click.Group):
    """Turns codegraph's own errors, and what the system refuses (a full disk, a folder without
    write permission), into one clear line and exit status 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except CodegraphError as exc:
            echo(f"Error: {exc}", err=True)
        except Exception as exc:
            duck = sys.modules.get("duckdb")  # never imported, nothing of it raised: `sql` leaves it to its child
            if not (isinstance(exc, OSError) or duck is not None and isinstance(exc, duck.Error)):
                raise
            echo(f"Error: {system_refusal(exc)}", err=True)
        except RecursionError:
            echo("Error: the input nests too deeply to be read (a file or task built to exhaust the stack)", err=True)
        ctx.exit(1)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="codegraph")
def main() -> None:
    """A Python or Java repository as a code-graph database in one DuckDB file."""


db_option = click.option(
    "--db", "db_path", type=click.Path(dir_okay=False),
    help=f"Database file. Default: ${graphfile.ENV_DB}, else the nearest "
         f"{graphfile.DB_DIRNAME}/{graphfile.DB_FILENAME} upwards.",
)


@main.command()
@click.argument("repo", type=click.Path(exists=True, file_okay=False))
@click.option("--db", "db_path", type=click.Path(dir_okay=False),
              help=f"Where to write the database. Default: REPO/{graphfile.DB_DIRNAME}/{graphfile.DB_FILENAME}.")
@click.option("--full", is_flag=True, help="Rebuild from scratch instead of updating changed files.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), help="Parser processes (default: up to 2 cores).")
@click.option("--resolve-jobs", type=click.IntRange(1, 64),
              help="Processes that resolve a full build (Python's of 20,000 calls or more, Java's of 5,000), on Linux. "
                   "Each past the first is a forked copy of the indexer: faster, at the cost of memory. Default: 1 for "
                   "Python (the stdlib: 11 % less time for 0.6 GB more), up to 2 cores for Java (its resolver is small).")
@click.option("--max-file-size", type=click.IntRange(1), default=5 * 1024 * 1024, show_default=True,
              help="Skip source files larger than this many bytes.")
@click.option("--no-embed", is_flag=True, help="Skip the embeddings (no `codegraph search`, no embed() in SQL).")
@click.option("--embed-model", type=click.Choice(["auto", "hash", "minilm"]), default="auto", show_default=True,
              help="The embedding model: minilm (learned, all-MiniLM-L6-v2, offline; the `learned` extra and its model, "
                   "see the README) or hash (identifiers hashed, no dependency, ~100x faster to build); auto: minilm "
                   "where installed. An update keeps the model the database was built with unless one is named.")
@click.option("--no-libraries", is_flag=True,
              help="Leave out the code the repository imports: Python's standard library and packages (layer "
                   "stdlib / site), Java's JDK and dependency jars (layer jdk / jar).")
@click.option("--python", "python", type=click.Path(exists=True, dir_okay=False),
              help="The interpreter whose standard library and packages are indexed (run to find them). Default: "
                   "the repository's own virtualenv (.venv, venv or env), read from its files, never run; else an "
                   "activated $VIRTUAL_ENV, read the same way; else the interpreter running codegraph.")
@click.option("--json", "as_json_", is_flag=True, help="Print the report as JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary.")
def index(repo, db_path, full, jobs, resolve_jobs, max_file_size, no_embed, embed_model, no_libraries, python, as_json_,
          quiet):
    """Build or update the code graph of REPO."""
    from .indexer import index_repository

    show = not quiet and not as_json_ and sys.stderr.isatty()
    state: dict = {"phase": None, "bar": None}

    def progress(phase: str, done: int, total: int, detail: str) -> None:
        if phase != state["phase"]:
            if state["bar"] is not None:
                state["bar"].render_finish()
                state["bar"] = None
            state["phase"] = phase
            if phase in ("parsing", "embedding"):  # the phases that take minutes on a large repository
                state["bar"] = click.progressbar(length=max(1, total), label=phase, file=sys.stderr)
            else:
                echo(f"{phase}...", err=True)
        bar = state["bar"]
        if bar is not None:
            bar.length = max(1, total)
            bar.update(done - bar.pos, detail)

    try:
        report = index_repository(repo, db_path, jobs=jobs, max_file_size=max_file_size, full=full,
                                  embed=False if no_embed else embed_model,
                                  progress=progress if show else None,
                                  libraries=not no_libraries, python=python, resolve_jobs=resolve_jobs)
    finally:
        if state["bar"] is not None:
            state["bar"].render_finish()
    if as_json_:
        data = asdict(report)
        data["db_path"], data["repo_root"] = str(report.db_path), str(report.repo_root)
        echo(json.dumps(data, indent=2))
    elif not quiet:
        echo(index_summary(report))


@main.command()
@click.argument("query")
@db_option
@click.option("--json", "fmt", flag_value="json", help="Rows as JSON objects.")
@click.option("--csv", "fmt", flag_value="csv", help="Rows as CSV.")
@click.option("--limit", "--max-rows", "limit", type=click.IntRange(1), default=10_000, show_default=True,
              help="At most this many rows.")
@click.option("--timeout", type=click.FloatRange(0.1), default=30.0, show_default=True, help="Seconds.")
def sql(query, db_path, fmt, limit, timeout):
    """Run read-only SQL over the graph. QUERY may be - to read it from standard input."""
    if query == "-":
        query = sys.stdin.read()
    if not query.strip():
        raise click.UsageError("QUERY is empty: give a SELECT statement, e.g. "
                               "\"SELECT kind, count(*) FROM symbols GROUP BY kind\"")
    result = query_worker.query_database(graphfile.find_db(db_path), query, max_rows=limit, timeout_s=timeout)
    echo({"json": as_json, "csv": as_csv}.get(fmt, as_table)(result).rstrip("\n"))


@main.command()
@db_option
@click.option("--json", "as_json_", is_flag=True)
def stats(db_path, as_json_):
    """Row counts per table and what the database was built from."""
    from . import db

    info = db.database_stats(graphfile.find_db(db_path))
    if as_json_:
        echo(json.dumps(info, indent=2))
        return
    echo(f"database: {info['path']}")
    for key, value in info["meta"].items():
        if key == "embedding_idf":  # the model's weights: data, not something to read
            value = f"({len(json.loads(value))} IDF weights; --json shows them)"
        elif key == "library_imports":  # hundreds of names: how many, not which
            value = f"{len(json.loads(value))} imported names (--json lists them)"
        echo(f"  {key}: {value}")
    width = max(len(t) for t in info["counts"])
    for table, count in info["counts"].items():
        echo(f"  {table.ljust(width)}  {count:>10,}")


@main.command()
@click.argument("query")
@click.option("--limit", "-k", "limit", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="How many results.")
@db_option
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True,
              help="Words (BM25), meaning (the embedding), or both blended.")
@click.option("--exact", is_flag=True, help="Scan the vectors in the table instead of the int8 cache (same answer, slower).")
@click.option("--json", "as_json_", is_flag=True)
def search(query, limit, db_path, mode, exact, as_json_):
    """Definitions that answer a plain-language question: BM25 and the embedding, blended, with
    public code before private helpers and tests unless the question asks for them."""
    from . import db
    from .semantic.search import search as run, vectors_unavailable

    path = graphfile.find_db(db_path)
    con = db.connect_readonly(path)
    try:
        meta = db.check_schema(con, path)
        hits = run(con, path, query, limit, mode=mode, exact=exact)
        note = vectors_unavailable(meta) if mode == "hybrid" else None
    finally:
        con.close()
    if note:
        echo(f"note: {note}", err=True)
    if as_json_:
        echo(json.dumps(hits, indent=2, default=str))
        return
    for hit in hits:
        # a Java member's qualname ends with its parameter types: its signature goes after a space
        between = "  " if hit["qualname"].endswith(")") else ""
        echo(f"{hit['score']:.3f}  {hit['kind']:18} {hit['qualname']}{between}{hit['signature'] or ''}".rstrip())
        if hit["docstring"]:
            echo(f"       {hit['docstring'][:100]}")


@main.command()
@click.option("--task", "task_path", type=click.Path(dir_okay=False), help="Take the target and description from a task file.")
@click.option("--file", "target_file", help="The file the code goes into, relative to the repository.")
@click.option("--symbol", help="What is written: `name` or `Class.method`.")
@click.option("--description", help="What the code must do.")
@click.option("--signature", help="The signature, if known, e.g. \"(self, key: str) -> bytes\".")
@click.option("--budget", type=click.IntRange(50), default=2000, show_default=True, help="Token budget (a hard cap).")
@click.option("--keep-target", is_flag=True, help="Use the target's own body if it exists (by default it is left out).")
@db_option
@click.option("--json", "as_json_", is_flag=True)
def context(task_path, target_file, symbol, description, signature, budget, keep_target, db_path, as_json_):
    """The context code for a task will most likely need, before anything is written: the
    enclosing class, the module's names, definitions that answer the description and the
    target's graph neighbours, each with the reason it was chosen."""
    from .retrieval.task_context import task_context

    start = None
    if task_path:
        from .refine.task import TaskError, load_task

        try:
            task = load_task(task_path)
        except TaskError as exc:
            raise click.UsageError(str(exc)) from None
        target_file, symbol = target_file or task.target_file, symbol or task.symbol
        description, start = description or task.description, task.repo
    missing = [name for name, value in (("--file", target_file), ("--symbol", symbol), ("--description", description))
               if not value]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (or give --task TASK.json)")
    path = graphfile.find_db(db_path, start=start)
    result = task_context(path, description, target_file, symbol, signature=signature, budget_tokens=budget,
                          exclude_target=not keep_target)
    if as_json_:
        echo(json.dumps(result.to_dict(), indent=2))
        return
    echo(result.text)
    for note in result.notes:
        echo(f"note: {note}", err=True)
    echo(f"\n({result.tokens} tokens of {budget}, {len(result.items)} definitions, {result.elapsed_ms:.0f} ms)",
               err=True)


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@db_option
@click.option("--lines", "line_spec", metavar="A-B", help="Keep only diagnostics on these lines (the candidate).")
@click.option("--json", "as_json_", is_flag=True, help="Diagnostics, SQL, rows and context as JSON.")
@click.option("--budget", type=click.IntRange(50), default=1500, show_default=True,
              help="Token budget of the rendered context.")
@click.option("--subprocess", "use_subprocess", is_flag=True, help="Run the checker (pylint) in a subprocess.")
def diagnose(file, db_path, line_spec, as_json_, budget, use_subprocess):
    """Lint FILE against its repository and fetch the project context for each error.

    Exit status: 0 when no error remains on the candidate's lines, 1 when some do (as linters
    do), 2 for bad usage."""
    from .languages import checked_language

    language = checked_language(Path(file))
    with language.checker("subprocess" if use_subprocess else None) as checker:
        checker.start()  # pylint loads in its process while this one loads the rest
        from .retrieval.diagnose import diagnose as run, parse_lines

        try:
            lines = parse_lines(line_spec)
        except CodegraphError as exc:
            raise click.BadParameter(str(exc), param_hint="--lines") from None
        report = run(file, db_path, lines=lines, budget_tokens=budget, checker=checker)
    if as_json_:
        echo(json.dumps(report.to_dict(), indent=2, default=str))
        sys.exit(1 if report.retrievals else 0)
    if not report.retrievals:
        echo(f"{report.path}: no errors on the candidate's lines ({language.checker_name}, {report.lint_ms:.0f} ms)")
        return
    for r in report.retrievals:
        d = r.diagnostic
        echo(f"{d.path or report.path}:{d.line}:{d.column}: {d.msg_id} {d.symbol} [{d.category}] {d.message}")
        origin = {"rule": f"rule {r.rule}", "llm": "LLM-written SQL", "hybrid": "hybrid search", "lexical": "lexical search",
                  "local": "the candidate's own lines", "none": "nothing found"}[r.source]
        echo(f"  via {origin}" + (f" with {json.dumps(r.params, default=str)}" if r.params else ""))
        for row in r.rows:
            echo(f"    {row.get('match', ''):8} {row.get('qualname')}  {row.get('signature') or ''}".rstrip())
    echo(f"\n--- context ({report.lint_ms:.0f} ms lint, {report.retrieve_ms:.0f} ms retrieval) ---")
    echo(report.context)
    sys.exit(1)


@main.command()
@click.option("--task", "task_path", required=True, type=click.Path(dir_okay=False),
              help="The task file (JSON; see docs/task.md).")
@click.option("--model", help="Model name on an OpenAI-compatible endpoint ($CODEGRAPH_MODEL). "
                              "Without a model the offline generator repairs the task's starting_code.")
@click.option("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 ($CODEGRAPH_BASE_URL).")
@click.option("--api-key", help="API key ($CODEGRAPH_API_KEY or $OPENAI_API_KEY).")
@click.option("--replay", type=click.Path(exists=True, dir_okay=False),
              help="Answer from a recorded file instead of a live model.")
@click.option("--mode", type=click.Choice(["direct", "naive-rag", "repocoder", "reflexion", "cocogen", "rrr"]),
              help="Override the task's mode (the papers' baselines).")
@click.option("--iterations", type=click.IntRange(1, 50), help="Override the task's iteration limit.")
@click.option("--isolation", type=click.Choice(["auto", "sandbox", "no-network", "rlimits"]),
              help="How the tests are fenced (docs/refine.md); default: the task's, else auto.")
@db_option
@click.option("--json", "as_json_", is_flag=True, help="The full trace: one record per iteration.")
@click.option("--diff", "as_diff", is_flag=True, help="Print a unified diff instead of the code.")
@click.option("--apply", is_flag=True, help="Write the result into the repository when lint and tests pass.")
def refine(task_path, model, base_url, api_key, replay, mode, iterations, isolation, db_path, as_json_, as_diff,
           apply):
    """Generate -> lint -> retrieve -> regenerate until the code lints clean and the tests pass.

    Exit status: 0 when lint and tests pass, 1 when not, 2 for bad usage."""
    from .refine.loop import refine as run
    from .llm import ModelError, OpenAIChat, ReplayModel
    from .refine.task import TaskError, load_task

    try:
        task = load_task(task_path)
    except TaskError as exc:
        raise click.UsageError(str(exc)) from None
    if mode:
        task.mode = mode
    if iterations:
        task.limits.iterations = iterations
    if isolation:
        task.isolation = isolation
    try:
        if replay:
            chat = ReplayModel(replay)
        elif model or os.environ.get("CODEGRAPH_MODEL"):
            chat = OpenAIChat(model, base_url, api_key)
        else:
            chat = None
    except ModelError as exc:
        raise click.UsageError(str(exc)) from None
    withhold_secrets()  # before any helper process starts: none of them inherits a key (docs/refine.md)
    log = (lambda m: echo(m, err=True)) if not as_json_ else None
    try:
        result = run(task, chat, db_path=db_path, apply=apply, log=log)
    except ModelError as exc:
        raise CodegraphError(str(exc)) from None
    if as_json_:
        echo(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        for it in result.iterations:
            if it.error:
                echo(f"iteration {it.number}: {it.error}", err=True)
                continue
            status = "lint clean" if it.lint_clean else f"{len(it.diagnostics)} lint error(s): " + ", ".join(
                sorted({d['symbol'] for d in it.diagnostics}))
            if it.tests is not None:
                status += ", tests " + ("pass" if it.tests["passed"] else "fail")
            echo(f"iteration {it.number}: {status}" + (f"; repaired: {'; '.join(it.repairs)}" if it.repairs else ""),
                       err=True)
        verdict = "done" if result.success else "not done"
        echo(f"{verdict}: {result.stop_reason} after {len(result.iterations)} iteration(s), "
                   f"{result.seconds:.1f} s, {result.prompt_tokens + result.completion_tokens} tokens "
                   f"({result.model}, mode {result.mode}"
                   + (f", tests fenced: {result.isolation}" if result.isolation else "") + ")"
                   + ("; applied" if result.applied else ""), err=True)
        echo(result.diff if as_diff else result.code, nl=False)
    sys.exit(0 if result.success else 1)


@main.command()
@click.option("--markdown", is_flag=True, help="Every language's table as docs/rules.md shows it.")
@click.option("--uncovered", is_flag=True, help="Only the checker's error messages no rule covers.")
@click.option("--language", "language_name", default="python", show_default=True, help="Whose table.")
def rules(markdown, uncovered, language_name):
    """The rule table: which checker message (pylint's for Python) runs which SQL template."""
    from .languages import language
    from .retrieval.rules import rules_markdown, uncovered as not_covered

    if markdown:
        echo(rules_markdown().rstrip("\n"))
        return
    try:
        lang = language(language_name)
    except KeyError as exc:
        raise click.BadParameter(exc.args[0], param_hint="--language") from None
    if uncovered:
        missing = not_covered(lang)
        for msgid, symbol in missing:
            echo(f"{msgid} {symbol}")
        if not missing:
            echo(f"every {lang.checker_name} error message about code has a rule", err=True)
        return
    for rule in lang.rules():
        template = rule.template or "(local)"
        echo(f"{rule.symbol:28} {lang.categories.get(rule.symbol, 'OTHER'):10} {template:22} {rule.finds}")


@main.command()
@click.argument("repo", type=click.Path(exists=True, file_okay=False), default=".")
@click.option("--db", "db_path", type=click.Path(dir_okay=False), help="Database file. Default: REPO/.codegraph/graph.duckdb.")
@click.option("--no-libraries", is_flag=True, help="Leave the standard library and installed packages out.")
def mcp(repo, db_path, no_libraries):
    """Serve REPO's graph to a coding agent over the Model Context Protocol (stdio).

    Tools: sql, schema, search, context, diagnose, class_info, signature, members, body,
    imports_for, callers, callees, index_status. The graph is kept current: a file you
    save is in the next answer. Needs the `mcp` extra: pip install 'codegraph-duckdb[mcp]'."""
    try:
        import mcp as _sdk  # noqa: F401
    except ImportError:
        raise CodegraphError("the MCP server needs the official SDK: pip install 'codegraph-duckdb[mcp]'") from None
    from .server import serve

    serve(repo, db_path, libraries=not no_libraries)


@main.group()
def tool():
    """The RRR tools: class info, signatures, bodies, imports, relevant and related code."""


def _tool_output(rows) -> None:
    echo(json.dumps(rows, indent=2, default=str))


def _tool_con(db_path, start=None):
    from . import db

    return db.open_graph(graphfile.find_db(db_path, start=start))


def _lookup_tool(command: str, argument: str, function: str, help_text: str, with_k: bool = False) -> None:
    """A `codegraph tool` subcommand that runs one RRR tool on one argument."""

    def run(db_path, limit=None, **kwargs):
        from .retrieval import tools

        extra = (limit,) if with_k else ()
        con = _tool_con(db_path)
        try:
            rows = getattr(tools, function)(con, kwargs[argument], *extra)
            if not rows and argument != "query" and not tools.is_defined(con, kwargs[argument]):
                raise CodegraphError(f"nothing named {kwargs[argument]!r} in the graph: "
                                     "try `codegraph search` or a dotted path (pkg.Class.method)")
        finally:
            con.close()
        _tool_output(rows)

    run = db_option(run)
    if with_k:
        run = click.option("--limit", "-k", "limit", type=click.IntRange(1, 100), default=10, show_default=True,
                           help="How many results.")(run)
    tool.command(command, help=help_text)(click.argument(argument)(run))


for _spec in (("class-info", "name", "get_class_info", "Members (inherited too), bases and constructor of a class."),
              ("signature", "name", "get_signature", "Signature and parameters, by qualified or simple name."),
              ("body", "name", "get_method_body", "The source of a function or method."),
              ("relevant", "query", "get_relevant_code", "Definitions that match a description.", True),
              ("related", "name", "get_related_snippets", "Callers and callees of a definition.", True)):
    _lookup_tool(*_spec)


@tool.command("imports")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@db_option
def imports(file, db_path):
    """Import lines for every undefined name in FILE."""
    from .retrieval import tools

    con = _tool_con(db_path, start=Path(file).resolve().parent)
    try:
        rows = tools.get_imports(con, tools.undefined_names(file))
    finally:
        con.close()
    _tool_output(rows)


if __name__ == "__main__":
    main()

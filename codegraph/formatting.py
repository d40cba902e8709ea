"""Turning query results and reports into text for a terminal, JSON or CSV."""

from __future__ import annotations

import csv
import datetime
import decimal
import io
import json
from typing import Any

from .graphfile import QueryResult

MAX_CELL = 80


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time, decimal.Decimal)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _cell(value: Any, width: int = MAX_CELL) -> str:
    if value is None:
        text = "NULL"
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join("NULL" if v is None else str(v) for v in value) + "]"
    else:
        text = str(value)
    text = text.replace("\r", "").replace("\n", "⏎").replace("\t", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def as_table(result: QueryResult) -> str:
    if not result.columns:
        return "(no result set)"
    cells = [[_cell(v) for v in row] for row in result.rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(result.columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(result.columns, widths)).rstrip()
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in cells]
    footer = f"({len(result.rows)} row{'s' if len(result.rows) != 1 else ''}"
    if result.truncated and getattr(result, "stopped_by", None) == "bytes":
        footer += ", stopped at the result size cap: select fewer or shorter columns, or add LIMIT"
    elif result.truncated:
        footer += ", stopped at the row cap: raise --max-rows or add LIMIT"
    out.append(footer + f", {result.elapsed_s * 1000:.0f} ms)")
    return "\n".join(out)


def as_json(result: QueryResult) -> str:
    rows = [dict(zip(result.columns, (_plain(v) for v in row))) for row in result.rows]
    return json.dumps({"columns": result.columns, "rows": rows, "truncated": result.truncated},
                      ensure_ascii=False, indent=2)


def as_csv(result: QueryResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(result.columns)
    for row in result.rows:
        writer.writerow(["" if v is None else json.dumps(_plain(v)) if isinstance(v, (list, dict)) else v
                         for v in row])
    return buffer.getvalue()


def index_summary(report, max_skips: int = 10) -> str:
    """One screen: what was indexed, how long it took, what was skipped and why."""
    c = report.counts
    head = {
        "full": f"Indexed {report.repo_root} (full build) in {report.elapsed_s:.2f} s",
        "update": f"Updated the index of {report.repo_root} in {report.elapsed_s:.2f} s",
        "unchanged": f"Index of {report.repo_root} is up to date (checked in {report.elapsed_s:.2f} s)",
    }[report.mode]
    lines = [head, f"  database: {report.db_path}"]
    if getattr(report, "rebuilt_because", ""):
        lines.append(f"  built afresh: {report.rebuilt_because}")
    if report.mode == "update":
        lines.append(f"  files: {report.parsed} re-parsed, {report.unchanged} unchanged, {report.deleted} deleted, "
                     f"{report.reresolved} others re-resolved")
    else:
        lines.append(f"  files: {c.get('files', 0)} indexed")
    lines.append("  " + "  ".join(f"{t} {c.get(t, 0):,}" for t in
                                  ("modules", "classes", "members", "globals", "parameters")))
    lines.append("  " + "  ".join(f"{t} {c.get(t, 0):,}" for t in
                                  ("imports", "calls", "inheritance", "nested_functions")))
    for warning in getattr(report, "warnings", []):
        lines.append(f"  warning: {warning}")
    if c.get("library_files"):
        source = f" from {report.library_environment}" if getattr(report, "library_environment", "") else ""
        lines.append(f"  library layer: {c['library_files']:,} files of the code the repository imports{source} "
                     "(all_<table>, layer stdlib / site / jdk / jar; --no-libraries leaves them out)")
        if getattr(report, "library_layer", ""):
            lines.append(f"  library layer read in place from the cache: {report.library_layer}")
    if "embeddings" in c:
        lines.append(f"  embeddings {c['embeddings']:,} (codegraph search; embed() in codegraph sql)")
    if report.partial:
        lines.append(f"  {len(report.partial)} file(s) have syntax errors; tree-sitter recovered what it could:")
        for path, errors in report.partial[:max_skips]:
            lines.append(f"    {path} ({errors} error node{'s' if errors != 1 else ''})")
        if len(report.partial) > max_skips:
            lines.append(f"    ... and {len(report.partial) - max_skips} more")
    if report.skipped:
        lines.append(f"  {len(report.skipped)} file(s) skipped:")
        for skip in report.skipped[:max_skips]:
            detail = f" ({skip.detail})" if skip.detail else ""
            lines.append(f"    {skip.path}: {skip.reason}{detail}")
        if len(report.skipped) > max_skips:
            lines.append(f"    ... and {len(report.skipped) - max_skips} more: "
                         "codegraph sql \"SELECT * FROM skipped_files\"")
    return "\n".join(lines)

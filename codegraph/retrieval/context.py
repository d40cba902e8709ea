"""Retrieved rows as short cards for a prompt, under a token budget.

Per diagnostic: exact matches before fuzzy before lexical/semantic ones; signatures and
docstrings before bodies; a card that does not fit is dropped, never cut in half.
"""

from __future__ import annotations

from pathlib import Path

from ..languages import Language, for_file, language as language_named
from ..llm import estimate_tokens
from .engine import Retrieval

_MATCH_ORDER = {"exact": 0, "fuzzy": 1, "scope": 2, "lexical": 3, "hybrid": 3, "semantic": 4}
_CARDS = 5  # a scope's rows past these are listed compactly on one line


def _first_line(doc: str | None) -> str | None:
    if not doc:
        return None
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return None


def language_of(path: str | None, default: Language | None = None) -> Language:
    """The language a row's or a message's file is in (Python when the path says none)."""
    found = for_file(Path(path).name) if path else None
    return found or default or language_named("python")


def card(row: dict, with_source: bool = True, language: Language | None = None) -> str:
    """One row as a card, its declaration in its own file's language (else `language`'s: a row
    of the JDK has no file)."""
    kind = row.get("kind") or ""
    name = row.get("name") or (row.get("qualname") or "").rpartition(".")[2]
    if kind == "import":
        head = f"{name} = {row.get('qualname')}  (re-exported)"
    elif kind == "module":
        head = f"module {row.get('qualname')}"
    else:
        head = language_of(row.get("path"), language).declaration(
            kind, name, row.get("signature"), None, row.get("value"), row.get("qualname"))
    where = ""
    if row.get("path"):
        where = f"  # {row['path']}:{row.get('start_line') or 1}"
    lines = [f"{row.get('qualname')} ({kind}){where}", f"    {head}"]
    doc = _first_line(row.get("docstring"))
    if doc:
        lines.append(f'    """{doc}"""')
    if row.get("parameters"):
        lines.append("    parameters: " + ", ".join(row["parameters"]))
    if row.get("import_line"):
        lines.append(f"    import with: {row['import_line']}")
    if row.get("reason"):
        lines.append(f"    (found by {row['reason']})")
    if with_source and row.get("source"):
        lines += ["    " + s for s in str(row["source"]).splitlines()]
    return "\n".join(lines)


def _header(group: list[Retrieval]) -> str:
    d = group[0].diagnostic
    lines = sorted({r.diagnostic.line for r in group})
    where = f"line {lines[0]}" if len(lines) == 1 else "lines " + ", ".join(map(str, lines))
    return f"{where}: {d.symbol} ({d.msg_id}): {d.message}"


def collapse(retrievals: list[Retrieval]) -> list[list[Retrieval]]:
    """Retrievals grouped by identical message: one block, all its lines, its rows once."""
    groups: dict[tuple[str, str], list[Retrieval]] = {}
    for r in retrievals:
        groups.setdefault((r.diagnostic.symbol, r.diagnostic.message), []).append(r)
    return list(groups.values())


def render(retrievals: list[Retrieval], budget_tokens: int = 1500) -> str:
    """The context block for a prompt: each distinct diagnostic (identical messages collapsed
    into one block with all their lines), then what the graph says about it. The budget is a
    hard cap on the whole text (estimate_tokens, as everywhere): headers first, then cards in
    turn across the diagnostics, best first; a card that does not fit is shortened (no source)
    or left out, never cut."""
    if not retrievals:
        return ""
    blocks: list[dict] = []
    for group in collapse(retrievals):
        seen, rows = set(), []
        for r in group:
            for row in r.rows:
                key = row.get("qualname") or id(row)
                if key not in seen:
                    seen.add(key)
                    rows.append(row)
        # the retrieval's own order (a scope is already ranked); exact matches first across merged groups
        rows.sort(key=lambda row: row.get("match") != "exact")
        local = next((r.local_context for r in group if r.local_context), None)
        language = language_of(group[0].diagnostic.path)
        tail = rows[_CARDS:]
        summary = "Also in scope: " + ", ".join(
            f"{row.get('name') or (row.get('qualname') or '').rpartition('.')[2]}{row.get('signature') or ''}"
            for row in tail) if tail else None
        blocks.append({"head": [_header(group), *([local] if local else [])], "rows": rows[:_CARDS], "cards": [],
                       "summary": summary, "language": language})

    def text() -> str:
        out = []
        for b in blocks:
            if b.get("dropped"):
                continue
            parts = list(b["head"])
            if b["cards"]:
                parts.append("Project definitions that may fix it:")
                parts += b["cards"]
            if b.get("with_summary"):
                parts.append(b["summary"])
            out.append("\n".join(parts))
        return "\n\n".join(out)

    for b in blocks:
        b["dropped"] = True
    for b in blocks:  # every diagnostic's header that fits, in order
        b["dropped"] = False
        if estimate_tokens(text()) > budget_tokens:
            b["dropped"], b["rows"] = True, []
    rank = 0
    while any(rank < len(b["rows"]) for b in blocks):
        for b in blocks:
            if rank >= len(b["rows"]):
                continue
            row = b["rows"][rank]
            language = b["language"]
            for candidate in ((card(row, True, language), card(row, False, language)) if row.get("source")
                              else (card(row, True, language),)):
                b["cards"].append(candidate)
                if estimate_tokens(text()) <= budget_tokens:
                    break
                b["cards"].pop()
        rank += 1
    for b in blocks:  # the rest of a scope, one line, where it fits
        if b.get("summary") and not b.get("dropped"):
            b["with_summary"] = True
            if estimate_tokens(text()) > budget_tokens:
                b["with_summary"] = False
    return text()

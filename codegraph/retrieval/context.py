"""Retrieved rows as short cards for a prompt, under a token budget.

Per diagnostic: exact matches before fuzzy before lexical/semantic ones; signatures and
docstrings before bodies; a card that does not fit is dropped, never cut in half.
"""

from __future__ import annotations

from ..llm import estimate_tokens
from .engine import Retrieval

_MATCH_ORDER = {"exact": 0, "fuzzy": 1, "lexical": 2, "semantic": 3}
_CALLABLE = {"function", "method", "classmethod", "staticmethod", "property", "nested_function"}


def _first_line(doc: str | None) -> str | None:
    if not doc:
        return None
    for line in doc.strip().splitlines():
        if line.strip():
            return line.strip()
    return None


def card(row: dict, with_source: bool = True) -> str:
    kind = row.get("kind") or ""
    name = row.get("name") or (row.get("qualname") or "").rpartition(".")[2]
    signature = row.get("signature") or ""
    if kind == "class":
        head = f"class {name}{signature if signature not in ('()', '') else ''}"
    elif kind in _CALLABLE:
        prefix = {"property": "@property ", "classmethod": "@classmethod ", "staticmethod": "@staticmethod "}.get(kind, "")
        head = f"{prefix}def {name}{signature or '(...)'}"
    elif kind == "module":
        head = f"module {row.get('qualname')}"
    elif kind == "import":
        head = f"{name} = {row.get('qualname')}  (re-exported)"
    else:
        head = f"{name}{signature if signature.startswith(':') else ''}"
        if row.get("value"):
            head += f" = {row['value']}"
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
    if with_source and row.get("source"):
        lines += ["    " + s for s in str(row["source"]).splitlines()]
    return "\n".join(lines)


def render(retrievals: list[Retrieval], budget_tokens: int = 1500) -> str:
    """The context block for a prompt: each diagnostic, then what the graph says about it."""
    if not retrievals:
        return ""
    share = max(80, budget_tokens // len(retrievals))
    blocks = []
    for r in retrievals:
        d = r.diagnostic
        header = f"line {d.line}: {d.symbol} ({d.msg_id}): {d.message}"
        parts, used = [header], estimate_tokens(header)
        if r.local_context:
            parts.append(r.local_context)
            used += estimate_tokens(r.local_context)
        rows = sorted(r.rows, key=lambda row: (_MATCH_ORDER.get(row.get("match") or "", 4), -(row.get("score") or 0)))
        if rows:
            parts.append("Project definitions that may fix it:")
        for row in rows:
            text = card(row)
            cost = estimate_tokens(text)
            if used + cost > share and row.get("source"):
                text = card(row, with_source=False)
                cost = estimate_tokens(text)
            if used + cost > share:
                continue
            parts.append(text)
            used += cost
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)

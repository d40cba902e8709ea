"""The offline generator: repairs a candidate from the graph alone, no LLM.

It cannot write code from a description, but it fixes what CoCoGen's study says most
project-level failures are: a wrong module in an import, a near-miss name or member, a name
used without its import, a misspelt keyword. Each repair uses the top row the rules retrieved;
which repair a message gets is in the language's rule table (languages/python/rules.py, repairs.py).
"""

from __future__ import annotations

import re

from ..languages import Language, Site
from ..llm import ChatModel, Completion, Message, register
from ..retrieval.engine import Retrieval


@register("offline")
class OfflineRepairer(ChatModel):
    """Deterministic graph-based repairs; `complete()` exists only to satisfy the interface."""

    name = "offline"

    def complete(self, messages: list[Message], *, max_tokens: int = 1024, temperature: float = 0.0) -> Completion:
        return Completion("", 0, 0, self.name)

    def repair(self, lines: list[str], retrievals: list[Retrieval], span: tuple[int, int],
               import_at: int, language: Language) -> tuple[list[str], list[str]]:
        """Edit the file's lines; returns (new lines, what was done). Lines are 0-based here."""
        lines = list(lines)
        done: list[str] = []
        new_imports: list[str] = []
        for r in retrievals:
            d = r.diagnostic
            top = next((row for row in r.rows if row.get("qualname")), None)
            # the repair of the rule that answered (its template), else the message's first
            rules = [rule for rule in language.rules_for(d.symbol) if rule.repair]
            repair = next((rule.repair for rule in rules if rule.template == r.rule), rules[0].repair if rules else None)
            if repair is None or top is None or not (1 <= d.line <= len(lines)):
                continue
            did = repair(Site(lines, d.line - 1, d, top, re.findall(r"'([^']+)'", d.message), span, new_imports))
            if did:
                done.append(f"line {d.line}: {did}")
        if new_imports:
            lines = lines[:import_at] + new_imports + lines[import_at:]
        return lines, done

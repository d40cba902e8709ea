"""The offline generator: repairs a candidate from the graph alone, no LLM.

It cannot write code from a description, but it fixes what CoCoGen's study says most
project-level failures are: a wrong module in an import, a near-miss name or member, a name
used without its import, a misspelt keyword. Each repair uses the top row the rules retrieved.
"""

from __future__ import annotations

import difflib
import re

from ..retrieval.engine import Retrieval
from ..llm import ChatModel, Completion, Message, register


def _quoted(message: str) -> list[str]:
    return re.findall(r"'([^']+)'", message)


def _near(bad: str, good: str | None) -> bool:
    """A rename is a repair only between near-miss names; anything else is a guess."""
    return bool(good) and good != bad and difflib.SequenceMatcher(None, bad.lower(), good.lower()).ratio() >= 0.7


def _replace_word(line: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, line)


@register("offline")
class OfflineRepairer(ChatModel):
    """Deterministic graph-based repairs; `complete()` exists only to satisfy the interface."""

    name = "offline"

    def complete(self, messages: list[Message], *, max_tokens: int = 1024, temperature: float = 0.0) -> Completion:
        return Completion("", 0, 0, self.name)

    def repair(self, lines: list[str], retrievals: list[Retrieval], span: tuple[int, int],
               import_at: int) -> tuple[list[str], list[str]]:
        """Edit the file's lines; returns (new lines, what was done). Lines are 0-based here."""
        lines = list(lines)
        done: list[str] = []
        new_imports: list[str] = []
        first, last = span
        for r in retrievals:
            d = r.diagnostic
            top = next((row for row in r.rows if row.get("qualname")), None)
            if top is None or not (1 <= d.line <= len(lines)):
                continue
            i = d.line - 1
            line = lines[i]
            names = _quoted(d.message)
            symbol = d.symbol
            if symbol == "no-name-in-module" and names:
                bad = names[0]
                if top.get("match") == "exact" and top.get("import_line"):
                    stripped = line.strip()
                    if re.fullmatch(rf"from\s+\S+\s+import\s+{re.escape(bad)}(\s+as\s+\w+)?", stripped):
                        alias = re.search(r"\s+as\s+\w+$", stripped)
                        indent = line[: len(line) - len(line.lstrip())]
                        lines[i] = indent + top["import_line"] + (alias.group(0) if alias else "")
                        done.append(f"line {d.line}: import {bad} from where it is defined")
                        continue
                good = top.get("name")
                if _near(bad, good):
                    lines[i] = _replace_word(line, bad, good)
                    for j in range(first - 1, min(last, len(lines))):
                        if j != i:
                            lines[j] = _replace_word(lines[j], bad, good)
                    done.append(f"line {d.line}: {bad} -> {good}")
            elif symbol == "import-error" and names and top.get("kind") == "module":
                bad, good = names[0], top["qualname"]
                if bad != good and bad in line:
                    lines[i] = line.replace(bad, good, 1)
                    done.append(f"line {d.line}: module {bad} -> {good}")
            elif symbol == "no-member" and len(names) >= 2:
                bad, good = names[1], top.get("name")
                if _near(bad, good) and f".{bad}" in line:
                    lines[i] = re.sub(rf"\.{re.escape(bad)}\b", f".{good}", line)
                    done.append(f"line {d.line}: .{bad} -> .{good}")
            elif symbol in ("undefined-variable", "used-before-assignment") and names:
                bad = names[0]
                if top.get("match") == "exact" and top.get("import_line"):
                    if top["import_line"] not in new_imports:
                        new_imports.append(top["import_line"])
                        done.append(f"line {d.line}: {top['import_line']}")
                elif _near(bad, top.get("name")):
                    lines[i] = _replace_word(line, bad, top["name"])
                    done.append(f"line {d.line}: {bad} -> {top['name']}")
            elif symbol == "unexpected-keyword-arg" and names and top.get("parameters"):
                bad = names[0]
                params = [p.split(":")[0] for p in top["parameters"]
                          if not p.endswith(("var-positional", "var-keyword"))]
                close = difflib.get_close_matches(bad, params, n=1, cutoff=0.6)
                if close and re.search(rf"\b{re.escape(bad)}\s*=", line):
                    lines[i] = re.sub(rf"\b{re.escape(bad)}(\s*=)", rf"{close[0]}\1", line, count=1)
                    done.append(f"line {d.line}: keyword {bad} -> {close[0]}")
            elif symbol == "not-callable" and top.get("kind") in ("property", "instance_attribute",
                                                                     "class_attribute", "variable"):
                name = top.get("name")
                if name and re.search(rf"\.{re.escape(name)}\(\)", line):
                    lines[i] = re.sub(rf"\.{re.escape(name)}\(\)", f".{name}", line)
                    done.append(f"line {d.line}: {name} is a {top['kind']}, not a method")
        if new_imports:
            lines = lines[:import_at] + new_imports + lines[import_at:]
        return lines, done

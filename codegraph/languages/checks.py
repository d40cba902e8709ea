"""What a language's checker (Python: pylint) gives the rest of codegraph, in words that are not
its own: a Diagnostic; the Checker that lints a file; the rule table's Rule (a message -> a SQL
template of codegraph/queries and how to fill it); and the offline generator's Site and Repair.
Which messages exist, what they say and how to read them stays in the language's folder."""

from __future__ import annotations

import difflib
import os
import re
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

from ..errors import CodegraphError


@dataclass
class Diagnostic:
    """One message of a checker about a file."""

    symbol: str  # the message's name (pylint: no-member)
    msg_id: str  # its code (pylint: E1101)
    message: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    path: str = ""
    obj: str = ""
    category: str = "OTHER"  # CoCoGen's (UNDEF-CM, API, OBJ...), given by the language's `categories`

    def to_dict(self) -> dict:
        return asdict(self)


class CheckError(CodegraphError):
    """The checker could not check the file (it crashed, the file is too large)."""


class CheckTimeout(CheckError):
    pass


class Checker(ABC):
    """Lints files with a language's checker; it may keep a warm process, so close it (or use it
    as a context manager)."""

    @abstractmethod
    def lint(self, path: str | os.PathLike, changed_modules: Iterable[str] = (),
             timeout_s: float | None = None) -> list[Diagnostic]:
        """The file's messages. `changed_modules`: modules edited since the last lint (a warm
        checker forgets what it knew of them). Raises CheckError, CheckTimeout."""

    def start(self) -> None:
        """Get ready in the background (a warm checker starts its process), so the first lint
        overlaps what the caller does meanwhile; lint() works without it."""

    def close(self) -> None:
        pass

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class RuleContext:
    """What a rule reads beside the message: the candidate (retrieval.candidate.Candidate: its rows,
    what sits at a line) and the graph's names (retrieval.candidate.GraphNames)."""

    candidate: Any
    graph: Any


Params = Callable[[Diagnostic, RuleContext], "dict | None"]


@dataclass
class Site:
    """Where an offline repair works: the file's lines (0-based), the message, the row the rules
    ranked first."""

    lines: list[str]
    index: int  # the message's line
    diagnostic: Diagnostic
    top: dict
    names: list[str]  # the names the message quotes
    span: tuple[int, int]  # 1-based lines of the candidate in the file
    imports: list[str]  # import lines to add at the top

    @property
    def line(self) -> str:
        return self.lines[self.index]


# Edits `site.lines` in place (or adds to `site.imports`) and says what it did, or returns None
# and leaves everything as it was.
Repair = Callable[[Site], "str | None"]


def near_miss(bad: str, good: str | None) -> bool:
    """A rename is a repair only between near-miss names; anything else is a guess."""
    return bool(good) and good != bad and difflib.SequenceMatcher(None, bad.lower(), good.lower()).ratio() >= 0.7


def replace_word(line: str, old: str, new: str) -> str:
    """`old` as a whole name, not a member of something (`x.old`) nor part of a longer name."""
    return re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, line)


@dataclass(frozen=True)
class Rule:
    """One row of a language's rule table: for a message, the SQL template (codegraph/queries)
    that finds the context, how to fill its parameters, and the offline repair."""

    symbol: str
    template: str | None  # None: answered from the candidate itself, no SQL
    params: Params  # returns None when it cannot fill them: the next rule runs
    finds: str
    repair: Repair | None = None

"""Every error codegraph raises on purpose, and how any error is shown: the CLI and the MCP
server turn each into one clear line (`one_line`), safe for a terminal (`terminal_safe`)."""

import errno
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
MESSAGE_CHARS = 400


def terminal_safe(text: str) -> str:
    """Every control character but newline and tab as a visible \\u00XX escape: no escape
    sequence (CSI, OSC, a carriage return over the line) from a file name, a model's answer or a
    query result reaches a terminal. In JSON text the same escape keeps its value."""
    return _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def one_line(message: str, limit: int = MESSAGE_CHARS) -> str:
    """A message as one terminal-safe line of at most `limit` characters (an argument of 10 MB is
    not echoed back whole)."""
    text = terminal_safe(" ".join(str(message).split()))
    return text if len(text) <= limit else f"{text[:limit - 1]}… ({len(text):,} characters in all)"


class CodegraphError(Exception):
    """Base class: the message says what went wrong and how to fix it."""


class DatabaseNotFound(CodegraphError):
    pass


class DatabaseLocked(CodegraphError):
    """Another process holds the database file's write lock."""


class DatabaseCorrupt(CodegraphError):
    pass


class SchemaMismatch(CodegraphError):
    pass


class QueryError(CodegraphError):
    pass


class QueryRejected(QueryError):
    """SQL that is not allowed to run (writes, external access, several statements...)."""


class QueryTimeout(QueryError):
    pass


class RepositoryError(CodegraphError):
    pass


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def system_refusal(exc: BaseException) -> str:
    """An OSError or a DuckDB I/O error as one line that says what to do. Writes of the graph go to
    a file beside it and are swapped in, updates are one transaction: what was there is intact."""
    text = one_line(str(exc))
    if getattr(exc, "errno", None) in _NO_SPACE or "No space left" in text or "Disk quota" in text:
        where = getattr(exc, "filename", None) or (re.search(r'file "([^"]+)"', text) or [None, None])[1]
        return (f"no space left on the device{f' (writing {where})' if where else ''}: free some space, or write "
                "elsewhere (--db for the graph, TMPDIR for scratch files), and run again; what was there "
                "before (the graph, your files) is unchanged")
    if getattr(exc, "errno", None) in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"{exc.strerror or text}{f': {exc.filename}' if getattr(exc, 'filename', None) else ''}: " \
               "choose a place this user may write to (--db, TMPDIR)"
    return text

"""What discovery hands on: a source file to index, a file skipped and why, and the size past
which a file is skipped. Its own module, below discovery and the languages, which both use it."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative to the repository root, with forward slashes
    abspath: str
    module: str
    is_package: bool  # stands for its folder (Python's __init__.py)
    size: int
    mtime_ns: int
    language: str  # the registered language that reads it
    text: bytes | None = None  # the source itself when it is made, not read (a built-in module's stub)


@dataclass
class Skip:
    path: str
    reason: str
    detail: str = ""

"""Where codegraph keeps what it builds once per machine (library layers, the JDK's types,
Java's checker and classpaths): light to import, so a command that only asks where pays nothing."""

from __future__ import annotations

import os
from pathlib import Path


def cache_folder() -> Path | None:
    """Where the caches live, or None when CODEGRAPH_CACHE=off."""
    setting = os.environ.get("CODEGRAPH_CACHE")
    if setting == "off":
        return None
    if setting:
        return Path(setting)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "codegraph"

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
    return _default_folder()


def _default_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "codegraph"


def layers_folder() -> Path:
    """Where the library layers live (library_cache.write_layer), resolved: written by codegraph
    alone, so a read-only connection may read the graph's views into it and no other file. With
    CODEGRAPH_CACHE=off, where they would be (a graph built with the cache still reads its layer)."""
    return Path(os.path.realpath((cache_folder() or _default_folder()) / "layers"))


def write_cached(path: Path, text: str) -> None:
    """Write a cache file whole, then rename it in: a reader never meets half a file. A cache that
    cannot be written (a read-only home) is left out: the work is done again next time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass

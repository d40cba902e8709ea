"""What the JDK's public types are, for typing Java code that uses them: each class's supertypes,
its methods' parameter and return types, its fields' types (java.base). Read from the JDK on the
PATH by JdkTypes.java (its javax.lang.model, through the single-file source launcher, 2 s) and
kept in the user's cache folder per JDK version; without a JDK, or with CODEGRAPH_JDK=off, there
is none and names outside the repository are told by their spelling alone.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ...cachedir import cache_folder, write_cached

_LISTER = Path(__file__).with_name("JdkTypes.java")
MODULES = ("java.base",)


@dataclass
class JdkTypes:
    supertypes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class -> its direct supertypes
    methods: dict[str, dict[str, list[tuple[tuple[str, ...], str]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))  # class -> name -> [(params, returns)]
    fields: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))  # class -> name -> type

    @classmethod
    def parse(cls, text: str) -> JdkTypes:
        out = cls()
        for line in text.splitlines():
            parts = line.split("\t")
            if parts[0] == "C" and len(parts) == 3:
                out.supertypes[parts[1]] = tuple(p for p in parts[2].split(",") if p)
            elif parts[0] == "M" and len(parts) == 5:
                out.methods[parts[1]][parts[2]].append((tuple(p for p in parts[3].split(",") if p), parts[4]))
            elif parts[0] == "F" and len(parts) == 4:
                out.fields[parts[1]][parts[2]] = parts[3]
        return out


@functools.lru_cache(maxsize=4)
def java_version(java: str) -> str | None:
    """Which JDK `java` is, on one line (None when it cannot tell): what the JDK's cached lists
    and stubs are keyed by. Its home's `release` file says it (JDK 9 and later) without the 0.05 s
    of starting a JVM that `java -version` costs every command."""
    home = Path(os.path.realpath(java)).parent.parent
    try:
        said = dict(line.partition("=")[::2] for line in (home / "release").read_text(encoding="utf-8").splitlines())
    except (OSError, UnicodeDecodeError):
        said = {}
    version = {k: v.strip().strip('"') for k, v in said.items() if k.startswith(("JAVA_", "IMPLEMENTOR"))}
    if version.get("JAVA_VERSION"):
        return (f"{version.get('IMPLEMENTOR', 'a')} JDK {version.get('JAVA_RUNTIME_VERSION') or version['JAVA_VERSION']}"
                f" of {version.get('JAVA_VERSION_DATE', '?')}, {home}")
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stderr.strip().splitlines()[0] or None if done.returncode == 0 and done.stderr.strip() else None


@functools.lru_cache(maxsize=1)
def jdk_types() -> JdkTypes | None:
    """The JDK's types, from the cache or listed now; None without a JDK (or CODEGRAPH_JDK=off)."""
    java = shutil.which("java")
    if os.environ.get("CODEGRAPH_JDK") == "off" or java is None:
        return None
    version = java_version(java)
    if version is None:
        return None
    key = hashlib.sha256(f"{version}\n{_LISTER.read_bytes().hex()}\n{MODULES}".encode()).hexdigest()[:16]
    folder = cache_folder()
    cached = folder / "jdk" / f"{key}.tsv" if folder is not None else None
    if cached is not None and cached.is_file():
        return JdkTypes.parse(cached.read_text(encoding="utf-8"))
    try:
        done = subprocess.run([java, str(_LISTER), *MODULES], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0 or not done.stdout:
        return None
    if cached is not None:
        write_cached(cached, done.stdout)
    return JdkTypes.parse(done.stdout)

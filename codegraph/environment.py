"""The process environment: which variables are secrets, and keeping them out of the environment
every child process inherits.

A command that runs model-written code (`codegraph refine`) moves secrets (API keys, tokens,
passwords) from os.environ into this module's memory before it starts any helper process: the
lint worker, a forkserver or multiprocessing's resource tracker would otherwise carry them in
their /proc/PID/environ, readable by any process of the same user. codegraph's own code reads
settings through `getenv`, which finds a withheld value too.
"""

from __future__ import annotations

import os

_SECRET_WORDS = frozenset({"KEY", "KEYS", "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASSPHRASE",
                           "PASS", "CREDENTIAL", "CREDENTIALS", "AUTH", "COOKIE", "SESSION", "PRIVATE", "SIGNATURE"})
_SECRET_PARTS = ("APIKEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL")

_withheld: dict[str, str] = {}


def looks_secret(name: str) -> bool:
    """KEY, TOKEN, SECRET, PASSWORD, ... as a word of the name (OPENAI_API_KEY, GH_TOKEN,
    DB_PASSWORD), or a telling part of one (GITHUBTOKEN)."""
    upper = name.upper()
    return any(word in _SECRET_WORDS for word in upper.split("_")) or any(part in upper for part in _SECRET_PARTS)


def withhold_secrets() -> list[str]:
    """Move every variable that looks secret out of os.environ (so no child inherits it) into
    this process's memory; returns their names."""
    names = [name for name in os.environ if looks_secret(name)]
    for name in names:
        _withheld[name] = os.environ.pop(name)
    return names


def getenv(name: str, default: str | None = None) -> str | None:
    """os.environ.get that also finds a withheld secret."""
    value = os.environ.get(name)
    return value if value is not None else _withheld.get(name, default)

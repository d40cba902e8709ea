"""Offline repairs: what the offline generator (refine/offline.py) does with a message's best row.
Each is attached to its message's rules in Python's rule table (rules.py), so one table says, per
pylint message, how to find the context and how to repair without a model.

A repair edits `site.lines` in place (or adds to `site.imports`) and says what it did, or
returns None and leaves everything as it was. Only near-miss renames and exact imports are made:
anything else would be a guess."""

from __future__ import annotations

import difflib
import re

from ..checks import Site, near_miss, replace_word


def name_in_module(site: Site) -> str | None:
    """`from m import nam`: import it from where it is defined, or rename a near miss (in the
    whole candidate)."""
    if not site.names:
        return None
    bad, top = site.names[0], site.top
    if top.get("match") == "exact" and top.get("import_line"):
        stripped = site.line.strip()
        if re.fullmatch(rf"from\s+\S+\s+import\s+{re.escape(bad)}(\s+as\s+\w+)?", stripped):
            alias = re.search(r"\s+as\s+\w+$", stripped)
            indent = site.line[: len(site.line) - len(site.line.lstrip())]
            site.lines[site.index] = indent + top["import_line"] + (alias.group(0) if alias else "")
            return f"import {bad} from where it is defined"
    good = top.get("name")
    if not near_miss(bad, good):
        return None
    site.lines[site.index] = replace_word(site.line, bad, good)
    first, last = site.span
    for j in range(first - 1, min(last, len(site.lines))):
        if j != site.index:
            site.lines[j] = replace_word(site.lines[j], bad, good)
    return f"{bad} -> {good}"


def module(site: Site) -> str | None:
    """`import jsn`: the module the rules found instead."""
    if not site.names or site.top.get("kind") != "module":
        return None
    bad, good = site.names[0], site.top["qualname"]
    if bad == good or bad not in site.line:
        return None
    site.lines[site.index] = site.line.replace(bad, good, 1)
    return f"module {bad} -> {good}"


def member(site: Site) -> str | None:
    """`obj.nmae`: a near-miss member."""
    if len(site.names) < 2:
        return None
    bad, good = site.names[1], site.top.get("name")
    if not near_miss(bad, good) or f".{bad}" not in site.line:
        return None
    site.lines[site.index] = re.sub(rf"\.{re.escape(bad)}\b", f".{good}", site.line)
    return f".{bad} -> .{good}"


def undefined(site: Site) -> str | None:
    """A name used without its import: the import, once; else a near-miss name."""
    if not site.names:
        return None
    bad, top = site.names[0], site.top
    said = top.get("import_line") or ""  # an import line, or how else to reach the name (`self.x  (...)`)
    if top.get("match") == "exact" and said.startswith(("import ", "from ")):
        if said in site.imports:
            return None
        site.imports.append(said)
        return said
    if top.get("match") == "exact" and said.startswith(f"self.{bad} "):  # a member the code forgot `self.` for
        site.lines[site.index] = replace_word(site.line, bad, f"self.{bad}")
        return f"{bad} -> self.{bad}"
    if near_miss(bad, top.get("name")):
        site.lines[site.index] = replace_word(site.line, bad, top["name"])
        return f"{bad} -> {top['name']}"
    return None


def keyword(site: Site) -> str | None:
    """`f(nmae=1)`: the nearest parameter name of the callee."""
    if not site.names or not site.top.get("parameters"):
        return None
    bad = site.names[0]
    params = [p.split(":")[0] for p in site.top["parameters"] if not p.endswith(("var-positional", "var-keyword"))]
    close = difflib.get_close_matches(bad, params, n=1, cutoff=0.6)
    if not close or not re.search(rf"\b{re.escape(bad)}\s*=", site.line):
        return None
    site.lines[site.index] = re.sub(rf"\b{re.escape(bad)}(\s*=)", rf"{close[0]}\1", site.line, count=1)
    return f"keyword {bad} -> {close[0]}"


def not_callable(site: Site) -> str | None:
    """`obj.size()` where size is a property or an attribute: drop the call."""
    if site.top.get("kind") not in ("property", "instance_attribute", "class_attribute", "variable"):
        return None
    name = site.top.get("name")
    if not name or not re.search(rf"\.{re.escape(name)}\(\)", site.line):
        return None
    site.lines[site.index] = re.sub(rf"\.{re.escape(name)}\(\)", f".{name}", site.line)
    return f"{name} is a {site.top['kind']}, not a method"

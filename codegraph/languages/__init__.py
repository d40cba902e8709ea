"""The languages codegraph reads, each one folder behind the protocol in base.py. Importing this
package registers them; the rest of codegraph asks for one by name or by file suffix."""

from __future__ import annotations

from . import java, python  # noqa: F401  (register themselves)
from .base import (EXTRACT_SECONDS, ExtractionBudget, FileFacts, Language, Library, Resolution, Spliced,
                   UndecodableSource, Unsupported, checked_language, for_file, language, languages, register,
                   stable_id, suffixes, unregister)
from .checks import CheckError, Checker, CheckTimeout, Diagnostic, Repair, Rule, RuleContext, Site

__all__ = ["EXTRACT_SECONDS", "CheckError", "CheckTimeout", "Checker", "Diagnostic", "ExtractionBudget", "FileFacts",
           "Language", "Library", "Repair", "Resolution", "Rule", "RuleContext", "Site", "Spliced", "UndecodableSource",
           "Unsupported", "checked_language", "for_file", "language", "languages", "register", "stable_id", "suffixes",
           "unregister"]

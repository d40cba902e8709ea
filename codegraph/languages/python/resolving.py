"""Python's Resolution (the protocol of languages/base.py): a full build's in resolution.py, an
update's in incremental.py. Its own module, imported when a build asks for it (Python.resolution)."""

from __future__ import annotations

from ..base import Resolution
from . import incremental
from .resolution import resolve_full


class PythonResolution(Resolution):
    """The resolver of resolve.py: a full build in resolution.py, an update in incremental.py."""

    def full(self, project, library, modules, jobs, emit):
        return resolve_full(project, library, modules, jobs, emit)

    def plan_update(self, con, fresh):
        return incremental.plan_update(con, fresh)

    def apply_update(self, con, plan, fresh, modules):
        return incremental.apply_update(con, plan, fresh, modules)

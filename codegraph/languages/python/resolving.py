"""Python's Resolution (the protocol of languages/base.py): a full build's in resolution.py, an
update's in incremental.py. Its own module, imported when a build asks for it (Python.resolution)."""

from __future__ import annotations

from ..base import Resolution
from .incremental import apply_update as apply_incremental, plan_update as plan_incremental
from .resolution import resolve_full


class PythonResolution(Resolution):
    """The resolver of resolve.py: a full build in resolution.py, an update in incremental.py."""

    def full(self, project, library, modules, jobs, emit, library_resolved=False):
        # one process unless asked: a copy comes to own most of the resolver's memory (0.6 GB on the stdlib)
        return resolve_full(project, library, modules, jobs or 1, emit, library_resolved)

    def plan_update(self, con, fresh):
        return plan_incremental(con, fresh)

    def apply_update(self, con, plan, fresh, modules):
        return apply_incremental(con, plan, fresh, modules)

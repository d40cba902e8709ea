"""A helper process that can be stopped: what bounds work that cannot be interrupted in place
(a pylint run, one long DuckDB expression). Requests go over a pipe; a request that overruns its
time kills the process, and the next request starts a fresh one. Spawned, never forked: the
parent may hold DuckDB connections and threads.
"""

from __future__ import annotations

import multiprocessing
from typing import Any, Callable


class WorkerTimeout(Exception):
    pass


class WorkerDied(Exception):
    pass


def serve(connection, handle: Callable[[Any], Any]) -> None:
    """The child's loop: a request in, handle(request) out, until None or the parent goes away."""
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        connection.send(handle(request))


class Worker:
    """`target(connection, *args)` runs in the child; it may send one greeting first, which
    `start` returns."""

    def __init__(self, target: Callable, args: tuple = (), name: str = "codegraph-worker",
                 greeting: bool = False) -> None:
        self.target, self.args, self.name, self.greeting = target, args, name, greeting
        self._process = None
        self._connection = None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    def start(self, timeout_s: float = 60.0) -> Any:
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        self._process = context.Process(target=self.target, args=(child, *self.args), daemon=True, name=self.name)
        self._process.start()
        child.close()
        self._connection = parent
        if not self.greeting:
            return None
        if not parent.poll(timeout_s):
            self.stop()
            raise WorkerTimeout(f"{self.name} did not start within {timeout_s:g} s")
        try:
            return parent.recv()
        except (EOFError, OSError):
            self.stop()
            raise WorkerDied(f"{self.name} died while starting") from None

    def ask(self, request: Any, timeout_s: float) -> Any:
        """The reply, or WorkerTimeout (the process is killed) or WorkerDied. Start it first."""
        if self._connection is None:
            raise WorkerDied(f"{self.name} is not running")
        try:
            self._connection.send(request)
            ready = self._connection.poll(max(0.0, timeout_s))
            reply = self._connection.recv() if ready else None
        except (EOFError, OSError):
            self.stop()
            raise WorkerDied(f"{self.name} died") from None
        if not ready:
            self.stop()
            raise WorkerTimeout(f"{self.name} overran {timeout_s:g} s and was stopped")
        return reply

    def stop(self) -> None:
        """Kill the process now."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join(5)
            self._process = None

    def close(self) -> None:
        """Ask the process to finish, then make sure it has."""
        if self._connection is not None:
            try:
                self._connection.send(None)
            except (OSError, BrokenPipeError):
                pass
        if self._process is not None:
            self._process.join(1)
        self.stop()

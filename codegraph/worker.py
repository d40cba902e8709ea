"""A helper process that can be stopped: what bounds work that cannot be interrupted in place
(a pylint run, one long DuckDB expression). Requests go over a pipe; a request that overruns its
time kills the process, and the next request starts a fresh one. Spawned, never forked: the
parent may hold DuckDB connections and threads.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import shutil
import threading
import time
from typing import Any, Callable


def die_with(parent: int) -> None:
    """End this process as soon as `parent` ends, even by SIGKILL: helper processes (parsing
    workers, which the forkserver started, and the lint and query workers) would otherwise live
    on, and keep the forkserver and the resource tracker alive with them. A parsing worker also
    removes the forkserver's socket folder (pymp-*), which only the dead parent would have."""
    def watch() -> None:
        try:
            handle = os.pidfd_open(parent)
        except (AttributeError, OSError):  # no pidfd (before Linux 5.3): poll
            handle = None
        while True:
            if handle is not None:
                select.select([handle], [], [])
                break
            try:
                os.kill(parent, 0)
            except ProcessLookupError:
                break
            except PermissionError:
                pass
            time.sleep(1.0)
        try:
            from multiprocessing import forkserver

            address = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_address", None)
            folder = os.path.dirname(address) if isinstance(address, str) else ""
            if os.path.basename(folder).startswith("pymp-"):
                shutil.rmtree(folder, ignore_errors=True)
        finally:
            os._exit(1)

    threading.Thread(target=watch, name="codegraph-parent-watch", daemon=True).start()


def _child(parent: int, target: Callable, *args) -> None:
    die_with(parent)
    target(*args)


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
        self._process = context.Process(target=_child, args=(os.getpid(), self.target, child, *self.args),
                                        daemon=True, name=self.name)
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

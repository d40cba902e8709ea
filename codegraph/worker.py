"""A helper process that can be stopped: what bounds work that cannot be interrupted in place
(a pylint run, one long DuckDB expression). Requests go over a socket; a request that overruns its
time kills the process, and the next request starts a fresh one. A fresh interpreter, never a
fork (the parent may hold DuckDB connections and threads), that imports only the module of its
target: multiprocessing's spawn would first run the parent's main module again (the whole CLI).
"""

from __future__ import annotations

import importlib
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Any, Callable

# The folder codegraph is imported from, put first on the child's path before anything else.
_HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BOOT = f"import sys; sys.path.insert(0, {_HOME!r}); from codegraph.worker import _boot; _boot()"


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


def _boot() -> None:
    """The child's start: its socket is argv[1]; the parent sends its pid, its sys.path, the target
    ("module:function") and the arguments; target(connection, *args) runs until it returns. A
    process started ahead (prestart) imports the module argv[2] names while it waits."""
    connection = Connection(int(sys.argv[1]))
    if len(sys.argv) > 2:
        try:
            importlib.import_module(sys.argv[2])
        except Exception:  # noqa: BLE001 - imported again below, where a failure is reported
            pass
    try:
        parent, path, target, args = connection.recv()
    except (EOFError, OSError):  # started ahead and never used: its parent is gone
        os._exit(0)
    sys.path[:] = path
    die_with(parent)
    module, _, function = target.partition(":")
    getattr(importlib.import_module(module), function)(connection, *args)
    # Done: leave without tearing down the interpreter. Nothing is left to write, and freeing a
    # warm pylint's caches one object at a time made every `codegraph diagnose` wait 0.7 s.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


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


# Processes started ahead of their Worker (prestart), by target: a Worker of that target adopts one.
_spares: dict[str, tuple[subprocess.Popen, Connection]] = {}


def _spawn(early: str | None = None) -> tuple[subprocess.Popen, Connection]:
    """A fresh interpreter running _boot, and this side of its socket; `early`: a module it imports
    before it is told what to run."""
    mine, theirs = socket.socketpair()
    try:
        process = subprocess.Popen([sys.executable, "-c", _BOOT, str(theirs.fileno()), *([early] if early else [])],
                                   pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL)
    finally:
        theirs.close()
    return process, Connection(mine.detach())


def prestart(target: str) -> None:
    """Start the process of the next Worker of `target` now: its interpreter starts and imports the
    target's module while this process goes on with its own imports (`codegraph sql`: DuckDB's
    import beside the CLI's). Unused, it ends with this process (its socket closes)."""
    if target not in _spares:
        _spares[target] = _spawn(target.partition(":")[0])


class Worker:
    """`target(connection, *args)` runs in the child, named "module:function" (the parent never
    imports it); it may send one greeting first, which `start` returns. The arguments are pickled."""

    def __init__(self, target: str, args: tuple = (), name: str = "codegraph-worker",
                 greeting: bool = False) -> None:
        self.target, self.args, self.name, self.greeting = target, args, name, greeting
        self._process: subprocess.Popen | None = None
        self._connection: Connection | None = None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, timeout_s: float = 60.0) -> Any:
        spare = _spares.pop(self.target, None)
        if spare is not None and spare[0].poll() is not None:  # it died waiting
            spare[1].close()
            spare = None
        self._process, parent = spare or _spawn()
        self._connection = parent
        try:
            parent.send((os.getpid(), list(sys.path), self.target, self.args))
        except OSError:
            self.stop()
            raise WorkerDied(f"{self.name} died while starting") from None
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
            if self._process.poll() is None:
                self._process.kill()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                pass
            self._process = None

    def close(self) -> None:
        """Ask the process to finish, then make sure it has."""
        if self._connection is not None:
            try:
                self._connection.send(None)
            except (OSError, BrokenPipeError):
                pass
        if self._process is not None:
            try:
                self._process.wait(1)
            except subprocess.TimeoutExpired:
                pass
        self.stop()

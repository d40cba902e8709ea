"""Work shared with forked copies of this process, in two steps with an exchange between them.
Each copy starts with everything the parent has learned (a resolver and its caches, hundreds of
megabytes that no pipe could carry in time) and works on one part; only answers travel back.

Forking a process that runs other threads (DuckDB's writer, a server's) is safe only for a child
that touches nothing those threads may hold a lock of: a child here runs pure Python over objects
it inherited, writes to a pipe and leaves with os._exit. A part whose copy fails or dies is done
by the parent itself, so the result never depends on a child finishing."""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import warnings
from typing import Any, Callable, Sequence


def can_fork() -> bool:
    """Only where fork copies a plain process (on macOS system frameworks may not survive it)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork")


class _Copy:
    """One forked copy: a pipe each way."""

    def __init__(self, pid: int, to_copy: int, from_copy: int) -> None:
        self.pid = pid
        self.writer = os.fdopen(to_copy, "wb")
        self.reader = os.fdopen(from_copy, "rb")
        self.alive = True

    def receive(self) -> Any:
        try:
            status, value = pickle.load(self.reader)
        except Exception:  # it died (killed, out of memory) before its answer was whole
            status, value = False, None
        if not status:
            self.alive = False
        return status, value

    def send(self, value: Any) -> None:
        try:
            pickle.dump(value, self.writer, protocol=pickle.HIGHEST_PROTOCOL)
            self.writer.flush()
        except OSError:
            self.alive = False

    def end(self, kill: bool) -> None:
        for stream in (self.writer, self.reader):
            try:
                stream.close()
            except OSError:
                pass
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def two_steps(parts: int, first: Callable[[int], Any], combine: Callable[[Sequence[Any]], Any],
              adopt: Callable[[Any], None], second: Callable[[int], Any]) -> tuple[list, list]:
    """Run first(k) for every part k, then adopt(combine(all first results)) in every process,
    then second(k); parts 1.. in forked copies, part 0 in this process (one part: no fork).
    Returns both lists of results in part order. The results must not depend on which process
    computed them."""
    copies: dict[int, _Copy] = {}
    killed = True
    try:
        for k in range(1, parts):
            copy = _fork(k, first, adopt, second, list(copies.values()))
            if copy is not None:
                copies[k] = copy
        firsts = [first(0)]
        for k in range(1, parts):
            done, value = copies[k].receive() if k in copies else (False, None)
            firsts.append(value if done else first(k))
        shared = combine(firsts)
        for copy in copies.values():
            if copy.alive:
                copy.send(shared)
        adopt(shared)
        seconds = [second(0)]
        for k in range(1, parts):
            done, value = copies[k].receive() if k in copies and copies[k].alive else (False, None)
            seconds.append(value if done else second(k))
        killed = False
        return firsts, seconds
    finally:
        for copy in copies.values():
            copy.end(kill=killed or not copy.alive)


def whole_files(weight: dict[int, float], parts: int) -> dict[int, int]:
    """Each file's part (file id -> 0..parts-1): whole files, in the order given, about equal weight
    to each part (what a file's rows ask, its other rows ask again: one copy's caches keep it)."""
    total, done, part_of = sum(weight.values()), 0.0, {}
    for file_id, w in weight.items():
        part_of[file_id] = min(parts - 1, int(done * parts / total)) if total else 0
        done += w
    return part_of


def positions(file_ids: list[int], part_of: dict[int, int], parts: int) -> list[list[int]]:
    """The positions of rows (of these files, in this order) in each part."""
    out: list[list[int]] = [[] for _ in range(parts)]
    for at, file_id in enumerate(file_ids):
        out[part_of[file_id]].append(at)
    return out


def each(parts: int, work: Callable[[int], Any]) -> list:
    """work(k) for every part k, parts 1.. in forked copies, in part order (two_steps' first step
    alone)."""
    return two_steps(parts, work, lambda results: None, lambda shared: None, lambda k: None)[0]


def _fork(k: int, first: Callable[[int], Any], adopt: Callable[[Any], None],
          second: Callable[[int], Any], others: list[_Copy]) -> _Copy | None:
    to_copy_r, to_copy_w = os.pipe()
    from_copy_r, from_copy_w = os.pipe()
    try:
        with warnings.catch_warnings():  # 3.12+ warns of forking with threads: see the module's docstring
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:  # no memory or processes left for a copy: the parent does the part
        for fd in (to_copy_r, to_copy_w, from_copy_r, from_copy_w):
            os.close(fd)
        return None
    if pid:
        os.close(to_copy_r)
        os.close(from_copy_w)
        return _Copy(pid, to_copy_w, from_copy_r)
    code = 1
    try:
        for fd in (to_copy_w, from_copy_r, *(f.fileno() for c in others for f in (c.writer, c.reader))):
            os.close(fd)  # a copy holding another's pipe would keep it waiting after the parent is gone
        gc.freeze()  # a collection would write to every inherited object, copying all the pages
        gc.disable()
        with os.fdopen(from_copy_w, "wb") as out, os.fdopen(to_copy_r, "rb") as inp:
            pickle.dump((True, first(k)), out, protocol=pickle.HIGHEST_PROTOCOL)
            out.flush()
            adopt(pickle.load(inp))
            pickle.dump((True, second(k)), out, protocol=pickle.HIGHEST_PROTOCOL)
            out.flush()
        code = 0
    except BaseException:  # the parent sees the pipe close and does this part itself
        pass
    finally:
        os._exit(code)

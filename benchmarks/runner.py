"""One results file per task, resumable, tasks spread over worker processes.

A benchmark is a list of task ids and a top-level function `work(task_id, options) -> dict`.
Each finished task is written atomically to `<results>/<task_id>.json`; a rerun skips the tasks
whose file exists, so an interrupted run resumes where it stopped. Workers are separate processes
(`concurrent.futures.ProcessPoolExecutor`) that may keep per-process state (a checkout and its
virtualenv) across the tasks they are given.

Spreading the same list over a cluster needs no new code here: `--shard I/N` runs every N-th task
starting at I, so N machines (a Slurm array job, one Kubernetes job per shard) each run one shard
into a shared results directory; or hand `work` to Ray (`ray.util.multiprocessing.Pool` takes the
place of the process pool, `pool.imap_unordered(partial(work, options=...), ids)`), since every
task is self-contained and writes its own file.
"""

from __future__ import annotations

import json
import os
import re
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")


class ResultStore:
    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path(self, task_id: str) -> Path:
        return self.directory / (_UNSAFE.sub("_", task_id) + ".json")

    def done(self, task_id: str) -> bool:
        return self.path(task_id).is_file()

    def write(self, task_id: str, record: dict) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        target = self.path(task_id)
        partial = target.with_suffix(f".{os.getpid()}.part")
        partial.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
        os.replace(partial, target)
        return target

    def load(self) -> list[dict]:
        if not self.directory.is_dir():
            return []
        return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(self.directory.glob("*.json"))]


def shard(ids: list[str], spec: str | None) -> list[str]:
    """`I/N`: every N-th id starting at the I-th (0-based), for splitting a run over machines."""
    if not spec:
        return ids
    try:
        index, count = (int(x) for x in spec.split("/"))
    except ValueError:
        raise SystemExit(f"--shard wants I/N such as 0/4, got {spec!r}") from None
    if not 0 <= index < count:
        raise SystemExit(f"--shard {spec}: I must be in 0..N-1")
    return ids[index::count]


def _guarded(work: Callable[[str, dict], dict], task_id: str, options: dict) -> dict:
    """A task that raises is recorded as an error instead of killing the run."""
    try:
        return work(task_id, options)
    except Exception as exc:  # noqa: BLE001 - the record keeps the traceback
        return {"task_id": task_id, "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=8)}


def run_all(work: Callable[[str, dict], dict], task_ids: Iterable[str], store: ResultStore, options: dict,
            *, workers: int = 1, retry_errors: bool = False, rerun: bool = False,
            progress: Callable[[str, dict], None] | None = None) -> list[dict]:
    """Run `work` for each task not yet in the store (every task with `rerun`); returns the
    records written by this run."""
    todo = []
    for task_id in task_ids:
        if store.done(task_id) and not rerun:
            previous = json.loads(store.path(task_id).read_text(encoding="utf-8"))
            if not (retry_errors and "error" in previous):
                continue
        todo.append(task_id)
    written: list[dict] = []

    def finish(task_id: str, record: dict) -> None:
        store.write(task_id, record)
        written.append(record)
        if progress:
            progress(task_id, record)

    if workers <= 1 or len(todo) <= 1:
        for task_id in todo:
            finish(task_id, _guarded(work, task_id, options))
        return written
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_guarded, work, task_id, options): task_id for task_id in todo}
        for future in as_completed(futures):
            finish(futures[future], future.result())
    return written

"""The scratch copy refine edits, the throw-away copy each test run gets, and writes that never
follow a link.

Fenced code may have changed any path it could reach (at the lower isolation levels, the scratch
copy itself), so refine never follows a path from there: every write walks the folders from an
open descriptor of the root with O_NOFOLLOW and replaces the last entry by rename, which replaces
a link instead of writing through it. Each test run gets its own copy of the scratch copy, thrown
away afterwards: what the tests leave behind is never read back.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import stat
import tempfile
import time
from pathlib import Path, PurePosixPath

from ..errors import CodegraphError

COPY_IGNORE = shutil.ignore_patterns(".git", ".hg", ".codegraph", "__pycache__", ".venv", "venv", "node_modules",
                                     ".tox", ".mypy_cache", ".pytest_cache", "*.pyc")


class TamperedError(CodegraphError):
    """A path refine writes to is no longer what refine made: a link, or outside its root."""


SCRATCH_PREFIX = "codegraph-refine-"
OWNER_FILE = ".owner"
UNOWNED_AGE = 3600.0  # seconds: a folder without an owner file is older than any run's first step


class Scratch:
    """The run's own folder in the temporary directory, held by an exclusive lock on a file
    inside it. The kernel drops the lock when the process dies, however it dies (SIGKILL, the
    OOM killer, a power cut spares /tmp anyway), so the next run can tell an abandoned folder
    from a live one and remove it: a scratch copy of the repository never outlives its run."""

    def __init__(self) -> None:
        sweep_abandoned()
        self.path = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        self._lock = os.open(self.path / OWNER_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)

    def remove(self) -> None:
        remove_tree(self.path)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def _abandoned(folder: Path, now: float) -> bool:
    """True for a folder of ours whose owner is gone: its owner file takes the lock at once, or it
    has none and is older than any live run's first step (made by a version without one)."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return False  # a link or another user's folder: not ours to judge
    try:  # non-blocking: fenced code could have put a FIFO there, whose open would wait for a writer
        fd = os.open(folder / OWNER_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return now - st.st_mtime > UNOWNED_AGE
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False  # not what a run made: left alone
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False  # held: its run is alive
    finally:
        os.close(fd)
    return True


def sweep_abandoned(root: Path | None = None) -> list[Path]:
    """Remove the scratch folders runs that were killed left in `root` (the temporary directory);
    the folders removed."""
    root = Path(root or tempfile.gettempdir())
    now = time.time()
    removed = []
    try:
        entries = [entry for entry in os.scandir(root) if entry.name.startswith(SCRATCH_PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        folder = root / entry.name
        if _abandoned(folder, now):
            remove_tree(folder)
            removed.append(folder)
    return removed


def copy_repository(source: Path, target: Path) -> list[str]:
    """Copy the repository for the loop to edit. Symlinks never lead out of the copy: a file
    symlink that resolves inside the repository becomes a copy of its target, a directory symlink
    inside it a link within the copy, and anything resolving outside is left out (and reported)."""
    source = source.resolve()
    shutil.copytree(source, target, ignore=COPY_IGNORE, symlinks=True)
    notes = []
    for folder, dirnames, filenames in os.walk(target):
        for name in [*dirnames, *filenames]:
            path = Path(folder) / name
            if not path.is_symlink():
                continue
            original = source / path.relative_to(target)
            real = Path(os.path.realpath(original))
            path.unlink()
            if not real.is_relative_to(source) or not real.exists():
                notes.append(f"left out {original.relative_to(source)}: a symlink to {real}, outside the repository")
            elif real.is_dir():
                os.symlink(os.path.relpath(target / real.relative_to(source), path.parent), path)
            else:
                shutil.copyfile(real, path)
    return notes


def run_copy(scratch_repo: Path, run_dir: Path) -> Path:
    """A copy of the scratch copy for one test run, under `run_dir` (which must not exist)."""
    run_dir.mkdir()
    target = run_dir / "repo"
    shutil.copytree(scratch_repo, target, symlinks=True)
    return target


def remove_tree(path: Path) -> None:
    """Remove a folder fenced code wrote into: rmtree works on descriptors and never follows links."""
    if shutil.rmtree.avoids_symlink_attacks:
        shutil.rmtree(path, ignore_errors=True)
    else:  # pragma: no cover - the fence needs Linux, where rmtree is safe
        raise TamperedError("this platform cannot remove a folder without following links")


def write_inside(root: Path, relative: str, text: str, *, durable: bool = False) -> None:
    """Write `text` to `root/relative` without following any link on the way: each folder is
    opened with O_NOFOLLOW from the one before, the file is written beside its target and renamed
    over it. A link in the way is refused (TamperedError); a link in the last place is replaced,
    never written through. `root` itself is taken as the caller resolved it."""
    parts = PurePosixPath(relative).parts
    if not parts or PurePosixPath(relative).is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise TamperedError(f"{relative!r} is not a plain path inside {root}")
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        folder = os.open(root, flags)
    except OSError as exc:
        raise TamperedError(f"cannot open {root} without following a link: {exc.strerror}") from None
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                inner = os.open(part, flags, dir_fd=folder)
            except OSError as exc:
                raise TamperedError(f"{'/'.join(parts[:i + 1])} in {root} is no longer a folder "
                                    f"({exc.strerror}): refusing to write {relative}") from None
            os.close(folder)
            folder = inner
        name = parts[-1]
        mode = 0o644
        try:
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise TamperedError(f"{relative} in {root} was replaced by a link: refusing to write through it")
            if stat.S_ISREG(st.st_mode):
                mode = stat.S_IMODE(st.st_mode)
        except FileNotFoundError:
            pass
        temporary = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                     dir_fd=folder)
        try:
            os.fchmod(fd, mode)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
                if durable:
                    fh.flush()
                    os.fsync(fh.fileno())
            os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temporary, dir_fd=folder)
            except OSError:
                pass
            raise
    finally:
        os.close(folder)

"""Find the source files of a repository, in every registered language, and the module name each
language gives them (languages/)."""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct
import sys
import time
from dataclasses import dataclass, field

import pathspec

from .languages import for_file, languages, suffixes
from .sources import DEFAULT_MAX_FILE_SIZE, Skip, SourceFile

# Directories that never hold the project's own code.
# Virtualenvs are recognised by their pyvenv.cfg, whatever their name (the stdlib has a `venv`
# package); build/ and dist/ only when they are not packages themselves (a package marker inside,
# or a language's source folder: Java's `src/main/java/org/x/build/`).
NOISE_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".codegraph", "__pycache__", "node_modules", ".tox", ".nox",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", "site-packages", "dist-packages",
        ".idea", ".vscode",
    }
)
OUTPUT_DIRS = frozenset({"build", "dist"})


@dataclass
class Discovery:
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    # every folder walked, .gitignore read and source file looked at (skipped ones too): what a change
    # to the set of indexed files would touch (Snapshot)
    looked_at: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)  # the folders walked, absolute


def _is_virtualenv(dirpath: str, filenames: list[str]) -> bool:
    return "pyvenv.cfg" in filenames or os.path.exists(os.path.join(dirpath, "conda-meta"))


def _load_gitignore(dirpath: str, filenames: list[str], rel_dir: str, result: "Discovery") -> pathspec.PathSpec | None:
    """The folder's .gitignore; a line that is no valid pattern (a lone backslash) is reported
    and left out, as git itself ignores it, and the other lines still apply."""
    if ".gitignore" not in filenames:
        return None
    path = os.path.join(dirpath, ".gitignore")
    result.looked_at.append(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except ValueError:  # pathspec's pattern errors derive from ValueError
        pass
    good = []
    where = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
    for number, line in enumerate(lines, 1):
        try:
            pathspec.GitIgnoreSpec.from_lines([line])
        except ValueError as exc:
            result.skipped.append(Skip(where, "bad-ignore-pattern",
                                       f"line {number} ({line[:80]!r}) is not a valid pattern and was left out: {exc}"))
            continue
        good.append(line)
    return pathspec.GitIgnoreSpec.from_lines(good)


def _printable(rel: str) -> str | None:
    """None when the name is valid UTF-8 (what the database stores), else a safe rendering of it."""
    try:
        rel.encode("utf-8")
        return None
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def discover(root: str | os.PathLike, max_file_size: int = DEFAULT_MAX_FILE_SIZE) -> Discovery:
    """Walk the repository without following directory symlinks (so loops cannot trap us); file
    symlinks are followed only when they resolve inside the repository."""
    root = os.path.abspath(root)
    real_root = os.path.realpath(root)
    result = Discovery()
    known = languages()
    packages: dict[str, set[str]] = {language.name: set() for language in known}  # folders on the module path
    markers = frozenset().union(*(language.package_markers for language in known))
    candidates: list[tuple[str, str, os.stat_result, object]] = []
    ignores: list[tuple[str, pathspec.PathSpec]] = []  # (dir prefix, spec) stack
    seen_real: set[str] = set()

    def ignored(rel: str, is_dir: bool) -> bool:
        for prefix, spec in ignores:
            if prefix and not rel.startswith(prefix + "/"):
                continue
            sub = rel[len(prefix) + 1 :] if prefix else rel
            if spec.match_file(sub + ("/" if is_dir else "")):
                return True
        return False

    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        result.looked_at.append(dirpath)
        result.folders.append(dirpath)
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        ignores = [(p, s) for p, s in ignores if not p or rel_dir == p or rel_dir.startswith(p + "/")]
        spec = _load_gitignore(dirpath, filenames, rel_dir, result)
        if spec is not None:
            ignores.append((rel_dir, spec))
        for language in known:
            if language.package_folder(rel_dir, filenames, packages[language.name]):
                packages[language.name].add(rel_dir)
        kept = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            full = os.path.join(dirpath, d)
            if d in NOISE_DIRS or d.endswith(".egg-info"):
                continue
            shown = _printable(rel)
            if shown is not None:
                result.skipped.append(Skip(shown, "undecodable-name", "the directory name is not valid UTF-8"))
                continue
            if d in OUTPUT_DIRS and not any(os.path.exists(os.path.join(full, m)) for m in markers) \
                    and not any(language.source_folder(rel) for language in known):
                continue
            if os.path.islink(full):
                result.skipped.append(Skip(rel, "symlink", "directory symlinks are not followed"))
                continue
            if ignored(rel, True):
                continue
            try:
                if _is_virtualenv(full, os.listdir(full)):
                    continue
            except OSError as exc:
                result.skipped.append(Skip(rel, "unreadable", str(exc)))
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            language = for_file(name)
            if language is None:
                continue
            rel = f"{rel_dir}/{name}" if rel_dir else name
            full = os.path.join(dirpath, name)
            result.looked_at.append(full)
            shown = _printable(rel)
            if shown is not None:
                result.skipped.append(Skip(shown, "undecodable-name", "the file name is not valid UTF-8"))
                continue
            if ignored(rel, False):
                continue
            try:
                st = os.stat(full)  # follows file symlinks
            except OSError as exc:
                result.skipped.append(Skip(rel, "unreadable", f"broken symlink or unreadable: {exc}"))
                continue
            if not os.path.isfile(full):
                result.skipped.append(Skip(rel, "not-a-file"))
                continue
            if os.path.islink(full):
                real = os.path.realpath(full)
                if os.path.commonpath([real, real_root]) != real_root:
                    result.skipped.append(Skip(rel, "symlink", f"points outside the repository, to {real}"))
                    continue
                if real in seen_real:
                    continue
                seen_real.add(real)
            if st.st_size > max_file_size:
                result.skipped.append(
                    Skip(rel, "too-large", f"{st.st_size} bytes > limit {max_file_size} (--max-file-size)")
                )
                continue
            candidates.append((rel, full, st, language))

    for rel, full, st, language in candidates:
        result.files.append(SourceFile(rel, full, language.module_name(rel, packages[language.name]),
                                       language.is_package(rel), st.st_size, st.st_mtime_ns, language.name))
    return result



RACY_NS = 200_000_000  # a file changed this close to a snapshot may change again with the same mtime


@dataclass
class Snapshot:
    """What a repository's files looked like just before it was indexed, to tell whether the index
    still matches the disk. On Linux, an inotify watch on every folder walked: the kernel queues
    an event inside the very write, rename or unlink that makes it, so whatever finished before
    a question is in the queue when the question reads it, and reading it costs one syscall.
    Elsewhere (or past the watch limit), one stat per folder and file (a file saved, added or
    deleted changes its own or its folder's mtime; what changed within RACY_NS before the
    snapshot is compared by content too, since a second change in the same clock tick keeps the
    mtime, "racy git")."""

    taken_ns: int
    stats: dict[str, tuple[int, int, int]]  # path -> (mtime_ns, size, inode)
    racy: dict[str, object]  # path -> file digest or folder listing, for recent changes
    watch: "_Inotify | None" = None

    @classmethod
    def of(cls, root: str | os.PathLike, max_file_size: int = DEFAULT_MAX_FILE_SIZE) -> "Snapshot":
        taken = time.time_ns()
        found = discover(root, max_file_size)
        watch = _Inotify.of(found.folders)  # before the stats: a change after them is seen
        if watch is not None:  # a folder made while the first walk ran has no watch yet: walk again
            watched = set(found.folders)
            if not watch.add([f for f in discover(root, max_file_size).folders if f not in watched]):
                watch.close()
                watch = None
        stats, racy = {}, {}
        for path in found.looked_at:
            state = _state(path)
            stats[path] = state
            if state is not None and state[0] >= taken - RACY_NS:
                racy[path] = _content(path)
        return cls(taken, stats, racy, watch)

    def changed(self) -> bool:
        if self.watch is not None:
            return self.watch.changed()
        for path, state in self.stats.items():
            if _state(path) != state:
                return True
        return any(_content(path) != content for path, content in self.racy.items())

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
            self.watch = None


class _Inotify:
    """Linux inotify, read without blocking. Events that cannot change the graph (a log file, an
    editor's swap file) are ignored; a folder created, moved or deleted, a source or .gitignore file
    written, moved or deleted, and a lost event (queue overflow) are changes. Once a change is
    seen it stays seen (the next update takes a new snapshot). Not watchfiles: it hands events
    over from its own thread after a debounce, so it cannot say whether a save that already
    returned is queued; a non-blocking read of the kernel's queue can."""

    _MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800  # MODIFY ATTRIB CLOSE_WRITE MOVED_* CREATE DELETE*
    _ISDIR, _OVERFLOW, _IGNORED = 0x40000000, 0x4000, 0x8000
    _libc = None

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.names = tuple(suffix.encode() for suffix in (*suffixes(), ".gitignore"))
        self.seen = False

    @classmethod
    def of(cls, folders: list[str]) -> "_Inotify | None":
        if not sys.platform.startswith("linux"):
            return None
        try:
            if cls._libc is None:
                cls._libc = ctypes.CDLL(None, use_errno=True)
            fd = cls._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            return None
        watch = cls(fd)
        if not watch.add(folders):
            watch.close()  # past max_user_watches: the stats instead
            return None
        return watch

    def add(self, folders: list[str]) -> bool:
        return all(self._libc.inotify_add_watch(self.fd, os.fsencode(folder), self._MASK) >= 0 for folder in folders)

    def changed(self) -> bool:
        while not self.seen:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return False
            except OSError:
                self.seen = True
                break
            at = 0
            while at + 16 <= len(data):
                _wd, mask, _cookie, length = struct.unpack_from("iIII", data, at)
                name = data[at + 16: at + 16 + length].rstrip(b"\0")
                at += 16 + length
                if mask & self._ISDIR and name.decode("utf-8", "replace") in NOISE_DIRS:
                    continue  # never walked (the index's own .codegraph/ made beside the code, a cache)
                if mask & (self._ISDIR | self._OVERFLOW | self._IGNORED) or name.endswith(self.names):
                    self.seen = True
        return self.seen

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _state(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _content(path: str) -> object:
    try:
        if os.path.isdir(path):
            return tuple(sorted(os.listdir(path)))
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).digest()
    except OSError:
        return None

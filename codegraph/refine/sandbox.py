"""Running a task's tests, i.e. model-written code, behind a fence.

Levels, strongest first (docs/refine.md has what each one guarantees, measured):

- `sandbox`: bubblewrap: no network, its own PID, IPC and user namespaces, no capabilities (root
  included), the whole filesystem read-only except the run's own folder, the caller's home folder
  and /tmp hidden (only an interpreter's own folders under them stay visible, read-only; /tmp is
  a private tmpfs), a sized /dev/shm.
- `no-network`: `unshare` with a user, network, PID and mount namespace and a /proc of its own:
  no network, no other process visible; the filesystem is the caller's.
- `rlimits`: resource limits, no capabilities, no setuid elevation; nothing else.

At every level the fenced command is started by `launcher.py`, a process whose environment never
held the caller's keys and which owns the run's process tree (a subreaper: nothing escapes by
double-forking), enforces the memory limit on the whole tree (a cgroup where this user may make
one, else a watchdog) and the disk limit on the run's folder, and kills every descendant at the
end or when refine goes away. The wrappers it starts (bwrap, unshare) are absolute paths found in
the caller's PATH and run with an empty environment: the task's variables exist inside the fence
only. Output comes back through a pipe, never through a file the tests could replace.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import select
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import CodegraphError

LEVELS = ("sandbox", "no-network", "rlimits")
ALLOWED_ENV = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ", "VIRTUAL_ENV",
               "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUTF8",
               "SSL_CERT_FILE", "SSL_CERT_DIR")
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
OUTPUT_TAIL = 64 * 1024
FILE_SIZE_LIMIT = 1 << 30
EXTRA_PROCESSES = 256
LAUNCHER = Path(__file__).with_name("launcher.py")
STOP_GRACE_S = 10.0
USE_CGROUP = True  # a memory cgroup where this user may make one; the watchdog alone otherwise


class IsolationError(CodegraphError):
    pass


@dataclass
class Fenced:
    returncode: int
    seconds: float
    output: str
    timed_out: bool
    level: str
    stopped_by: str | None = None  # "memory" or "disk" when the watchdog ended the run
    peak_memory_mb: float = 0.0
    output_bytes: int = 0


def trusted_tool(name: str) -> str | None:
    """`name` resolved to an absolute real path through the caller's PATH (relative entries
    skipped): what the task's environment cannot replace."""
    entries = _absolute_entries(os.environ.get("PATH", "")) or SAFE_PATH.split(":")
    found = shutil.which(name, path=os.pathsep.join(entries))
    return os.path.realpath(found) if found else None


def _probe(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=20, env={},
                              cwd="/").returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.lru_cache(maxsize=None)
def available(level: str) -> bool:
    """Does this machine offer the level? Probed once per process, with the wrapper's full set of
    options, an absolute path and an empty environment."""
    if level == "rlimits":
        return sys.platform.startswith("linux")
    if not sys.platform.startswith("linux"):
        return False
    if level == "sandbox":
        bwrap = trusted_tool("bwrap")
        true = trusted_tool("true")
        return bool(bwrap and true) and _probe([bwrap, *_bwrap_base(64 << 20), "--", true])
    if level == "no-network":
        unshare, true = trusted_tool("unshare"), trusted_tool("true")
        return bool(unshare and true) and _probe([*_unshare_prefix(unshare), true])
    raise ValueError(level)


def _bwrap_base(shm_bytes: int) -> list[str]:
    return ["--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--size", str(shm_bytes), "--tmpfs", "/dev/shm"]


def _unshare_prefix(unshare: str) -> list[str]:
    user = "--map-root-user" if os.geteuid() == 0 else "--map-current-user"
    return [unshare, "--user", user, "--net", "--pid", "--fork", "--mount-proc", "--kill-child", "--"]


def choose_level(requested: str = "auto") -> str:
    if requested == "auto":
        return next((level for level in LEVELS if available(level)), "none")
    if requested not in LEVELS:
        raise IsolationError(f"unknown isolation {requested!r}: choose auto, {', '.join(LEVELS)}")
    if not available(requested):
        hint = {"sandbox": "install bubblewrap (Debian: apt install bubblewrap) or allow user namespaces",
                "no-network": "unshare with user namespaces is not permitted here",
                "rlimits": "the fence needs Linux"}[requested]
        raise IsolationError(f"isolation {requested!r} is not available on this machine: {hint}; "
                             "or choose isolation auto")
    return requested


def fence_environment(run_dir: Path, roots: list[Path], python: str, extra: dict[str, str] | None = None,
                     passed: list[str] = (), path_entries: list[str] = ()) -> dict[str, str]:
    """The allow-listed environment: what the tests need and nothing they could steal. HOME and
    TMPDIR are folders of the run; `extra` and `passed` were vetted by task.confine_env."""
    env = {k: os.environ[k] for k in ALLOWED_ENV if k in os.environ}
    env.update({k: os.environ[k] for k in passed if k in os.environ})
    home, tmp = run_dir / "home", run_dir / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    env.update(extra or {})
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(str(r) for r in roots),
               PATH=os.pathsep.join(dict.fromkeys([*path_entries, os.path.dirname(os.path.abspath(python)),
                                                   *_absolute_entries(os.environ.get("PATH", "")),
                                                   *SAFE_PATH.split(":")])))
    return env


def _absolute_entries(path: str) -> list[str]:
    return [p for p in path.split(os.pathsep) if os.path.isabs(p)]


def interpreter_folders(python: str) -> tuple[str, ...]:
    """The folders an interpreter needs, found without running it (the interpreter a task names
    runs only inside the fence): its installation, the virtualenv around it and the folders its
    site-packages' .pth files add."""
    folders: set[str] = set()
    exe = os.path.realpath(python)
    folders.add(os.path.dirname(os.path.dirname(exe)))
    venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    config = os.path.join(venv, "pyvenv.cfg")
    if os.path.isfile(config):
        folders.add(os.path.realpath(venv))
        try:
            for line in Path(config).read_text(encoding="utf-8", errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    folders.add(os.path.dirname(os.path.realpath(value.strip())))
        except OSError:
            pass
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        # its installation, not the folder it was started from (sys.path[0] may be anywhere)
        folders.update(os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sysconfig.get_path("purelib"),
                                                     sysconfig.get_path("platlib")) if p)
    for prefix in list(folders):
        for pth in Path(prefix).glob("lib/python3*/site-packages/*.pth"):
            try:
                lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")) and os.path.isabs(line):
                    folders.add(os.path.realpath(line))
    return tuple(sorted(f for f in folders if os.path.isdir(f)))


def _hidden_home() -> str | None:
    home = os.path.realpath(os.path.expanduser("~"))
    return home if home not in ("/", "") and os.path.isdir(home) else None


def _bwrap_argv(cmd: list[str], run_dir: Path, cwd: Path, env: dict[str, str], shm_bytes: int,
                read_only: tuple[str, ...] = ()) -> list[str]:
    """The caller's home folder and /tmp are empty tmpfs inside (/tmp sized as /dev/shm, and
    writable: a JVM's attach socket lives there, whatever java.io.tmpdir says), with the run's
    folder and, read-only, the interpreter's own folders and `read_only` under them shown again."""
    args = [trusted_tool("bwrap"), *_bwrap_base(shm_bytes)]
    tmp = os.path.realpath("/tmp")
    hidden = sorted({h for h in (_hidden_home(), tmp if tmp != "/" else None) if h}, key=len)

    def hide(folder: str) -> list[str]:
        return ["--size", str(shm_bytes), "--tmpfs", folder] if folder == tmp else ["--tmpfs", folder]

    for folder in hidden:
        args += hide(folder)
    shown = [*interpreter_folders(cmd[0]), *(os.path.realpath(f) for f in read_only if os.path.isdir(f))]
    # never a hidden folder itself or what holds it: only an interpreter's own folders, and those
    # the tests' tool reads (Maven's local repository); outer ones first, and a hidden folder that
    # one of them holds (a home folder under /tmp) hidden again at once
    for folder in sorted({f for f in shown if any(f.startswith(h + os.sep) for h in hidden)} - set(hidden), key=len):
        args += ["--ro-bind", folder, folder]
        for inner in hidden:
            if inner.startswith(folder + os.sep):
                args += hide(inner)
    args += ["--bind", str(run_dir), str(run_dir), "--chdir", str(cwd), "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return [*args, "--", *cmd]


def fenced_argv(level: str, cmd: list[str], run_dir: Path, cwd: Path, env: dict[str, str],
                shm_bytes: int, read_only: tuple[str, ...] = ()) -> tuple[list[str], dict[str, str]]:
    """(argv, the environment the launcher execs it with): the wrappers get none, the task's
    variables are set at the innermost exec. `read_only`: folders under the home folder or /tmp
    the sandbox shows, read-only."""
    if level == "sandbox":
        return _bwrap_argv(cmd, run_dir, cwd, env, shm_bytes, read_only), {}
    if level == "no-network":
        env_tool = trusted_tool("env")
        if env_tool is None:
            raise IsolationError("the no-network level needs env(1) from coreutils")
        return [*_unshare_prefix(trusted_tool("unshare")), env_tool, "-i",
                *(f"{k}={v}" for k, v in env.items()), *cmd], {}
    return cmd, env


class _Tail:
    """The last `size` bytes of a stream, and how many came in all."""

    def __init__(self, size: int) -> None:
        self.size, self.data, self.total = size, bytearray(), 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        if len(self.data) > 2 * self.size:
            del self.data[: len(self.data) - self.size]

    def text(self) -> str:
        return bytes(self.data[-self.size:]).decode("utf-8", "replace")


def run_fenced(cmd: list[str], *, cwd: Path, run_dir: Path, env: dict[str, str], timeout_s: float,
               memory_mb: int = 4096, disk_mb: int = 2048, level: str = "rlimits",
               read_only: tuple[str, ...] = ()) -> Fenced:
    """Run `cmd` at `level`, from the launcher, and bring back its output's tail. `run_dir` is the
    only folder the command may write to (at the sandbox level) and whose size is limited."""
    if not sys.platform.startswith("linux"):
        raise IsolationError("running tests behind a fence needs Linux")
    memory = memory_mb << 20
    argv, exec_env = fenced_argv(level, cmd, run_dir, cwd, env, shm_bytes=max(16 << 20, memory // 4),
                                 read_only=read_only)
    spec = {"argv": argv, "env": exec_env, "cwd": str(cwd), "memory_bytes": memory, "disk_bytes": disk_mb << 20,
            "watch": str(run_dir), "processes": EXTRA_PROCESSES, "drop_privileges": level == "rlimits",
            "cgroup": USE_CGROUP,
            "rlimits": [("RLIMIT_CPU", int(timeout_s) + 1, int(timeout_s) + 6), ("RLIMIT_AS", memory, memory),
                        ("RLIMIT_FSIZE", FILE_SIZE_LIMIT, FILE_SIZE_LIMIT), ("RLIMIT_CORE", 0, 0)]}
    status_r, status_w = os.pipe()
    spec["status_fd"] = status_w
    started = time.perf_counter()
    tail, status = _Tail(OUTPUT_TAIL), b""
    timed_out = False
    with _undumpable():
        try:
            proc = subprocess.Popen([sys.executable, "-I", "-S", str(LAUNCHER)], env={}, cwd="/",
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    pass_fds=(status_w,), start_new_session=True)
        finally:
            os.close(status_w)
        try:
            proc.stdin.write(json.dumps(spec).encode() + b"\n")
            proc.stdin.flush()
            deadline = time.monotonic() + max(0.1, timeout_s)
            streams = {proc.stdout.fileno(): tail, status_r: None}
            while streams:
                left = deadline - time.monotonic()
                if left <= 0 and not timed_out:
                    timed_out = True
                    proc.stdin.close()  # the lifeline: the launcher kills everything and reports
                    deadline = time.monotonic() + STOP_GRACE_S
                    continue
                if left <= 0:
                    break
                ready, _, _ = select.select(list(streams), [], [], min(left, 1.0))
                for fd in ready:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        del streams[fd]
                    elif streams[fd] is None:
                        status += chunk
                    else:
                        streams[fd].add(chunk)
                if status_r not in streams and proc.stdout.fileno() in streams:
                    _drain(proc.stdout.fileno(), tail)  # the launcher is done: what is left, without waiting
                    break
        finally:
            for stream in (proc.stdin, proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            os.close(status_r)
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    try:
        report = json.loads(status.decode() or "{}")
    except ValueError:
        report = {}
    reason = report.get("reason")
    returncode = -1 if timed_out else report.get("returncode", -1)
    output = tail.text()
    stopped_by = reason if reason in ("memory", "disk") else None
    if stopped_by == "memory":
        output += (f"\ncodegraph: the tests' processes together used more than the {memory_mb} MB the task allows "
                   "(limits.test_memory_mb); all of them were stopped\n")
    elif stopped_by == "disk":
        output += (f"\ncodegraph: the tests wrote more than {disk_mb} MB into their folder "
                   "(limits.test_disk_mb); all of their processes were stopped\n")
    return Fenced(returncode, time.perf_counter() - started, output, timed_out, level, stopped_by,
                  round(report.get("peak_memory_bytes", 0) / (1 << 20), 1), tail.total)


def _drain(fd: int, tail: _Tail) -> None:
    while select.select([fd], [], [], 0.05)[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        tail.add(chunk)


# -- the caller's own process ----------------------------------------------------------------------

_PR_SET_DUMPABLE, _PR_GET_DUMPABLE = 4, 3
_dumpable_lock = threading.Lock()
_dumpable_state = {"runs": 0, "before": None}


class _undumpable:
    """While fenced code runs, this process is not dumpable: its /proc files (environ, mem) belong
    to root and no process of this user may read or trace it. Restored when the last run of any
    thread ends."""

    def __enter__(self):
        with _dumpable_lock:
            if _dumpable_state["runs"] == 0:
                try:
                    libc = ctypes.CDLL(None, use_errno=True)
                    _dumpable_state["before"] = (libc, libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0))
                    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
                except (OSError, AttributeError):
                    _dumpable_state["before"] = None
            _dumpable_state["runs"] += 1
        return self

    def __exit__(self, *exc):
        with _dumpable_lock:
            _dumpable_state["runs"] -= 1
            before = _dumpable_state["before"]
            if _dumpable_state["runs"] == 0 and before is not None and before[1] > 0:
                before[0].prctl(_PR_SET_DUMPABLE, before[1], 0, 0, 0)

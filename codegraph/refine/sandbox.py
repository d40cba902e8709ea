"""Running a task's tests, i.e. model-written code, behind a fence.

Levels, strongest first (docs/refine.md):

- `sandbox`: bubblewrap (Debian's `bubblewrap` package): no network, its own PID namespace, the
  whole filesystem read-only except the scratch copy, and the caller's home folder hidden (what
  the tests print goes back to the model, so ~/.ssh or ~/.aws must not be readable); only the
  interpreter's own folders under it stay visible, read-only. Plus the limits below.
- `no-network`: `unshare --net`: no network; the filesystem is the caller's.
- `rlimits`: resource limits only.

Every level runs in its own process group (killed as a whole on timeout) with limits on CPU
seconds, address space, file size and processes, and sees an allow-listed environment: never the
caller's API keys, tokens or secrets. `auto` picks the strongest level that works here.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..errors import CodegraphError

LEVELS = ("sandbox", "no-network", "rlimits")
ALLOWED_ENV = ("PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TZ", "VIRTUAL_ENV",
               "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "PYTHONHASHSEED", "PYTHONIOENCODING", "PYTHONUTF8",
               "SYSTEMROOT", "COMSPEC", "PATHEXT", "SSL_CERT_FILE", "SSL_CERT_DIR")
OUTPUT_TAIL = 64 * 1024
FILE_SIZE_LIMIT = 1 << 30


class IsolationError(CodegraphError):
    pass


@dataclass
class Fenced:
    returncode: int
    seconds: float
    output: str
    timed_out: bool
    level: str


def _probe(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.lru_cache(maxsize=None)
def available(level: str) -> bool:
    """Does this machine offer the level? Probed once per process."""
    if level == "rlimits":
        return sys.platform != "win32"
    if not sys.platform.startswith("linux"):
        return False
    if level == "sandbox":
        bwrap = shutil.which("bwrap")
        return bool(bwrap) and _probe([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                       "--unshare-net", "--unshare-pid", "--die-with-parent", "true"])
    if level == "no-network":
        return bool(shutil.which("unshare")) and _probe(_unshare_prefix() + ["true"])
    raise ValueError(level)


def _unshare_prefix() -> list[str]:
    return ["unshare", "--net"] if os.geteuid() == 0 else ["unshare", "--net", "--map-current-user"]


def choose_level(requested: str = "auto") -> str:
    if requested == "auto":
        return next((level for level in LEVELS if available(level)), "none")
    if requested not in LEVELS:
        raise IsolationError(f"unknown isolation {requested!r}: choose auto, {', '.join(LEVELS)}")
    if not available(requested):
        hint = {"sandbox": "install bubblewrap (Debian: apt install bubblewrap) or allow user namespaces",
                "no-network": "unshare --net is not permitted here",
                "rlimits": "resource limits need a POSIX system"}[requested]
        raise IsolationError(f"isolation {requested!r} is not available on this machine: {hint}; "
                             "or choose isolation auto")
    return requested


def test_environment(scratch: Path, roots: list[Path], extra: dict[str, str] | None = None,
                     passed: list[str] = ()) -> dict[str, str]:
    """The allow-listed environment: what the tests need and nothing they could steal."""
    env = {k: os.environ[k] for k in ALLOWED_ENV if k in os.environ}
    env.update({k: os.environ[k] for k in passed if k in os.environ})
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    path_entries = [str(r) for r in roots] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(path_entries))
    env.setdefault("PATH", os.defpath)
    env.update(extra or {})
    return env


def _limits(cpu_s: float, memory_mb: int):
    def apply() -> None:
        import resource

        def cap(which, soft, hard=None):
            try:
                _, current_hard = resource.getrlimit(which)
                hard = soft if hard is None else hard
                if current_hard != resource.RLIM_INFINITY:
                    soft, hard = min(soft, current_hard), min(hard, current_hard)
                resource.setrlimit(which, (soft, hard))
            except (ValueError, OSError):
                pass

        cap(resource.RLIMIT_CPU, int(cpu_s) + 1, int(cpu_s) + 6)
        cap(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
        cap(resource.RLIMIT_FSIZE, FILE_SIZE_LIMIT)
        cap(resource.RLIMIT_CORE, 0)
        if os.geteuid() != 0:  # root is not held by RLIMIT_NPROC
            cap(resource.RLIMIT_NPROC, _user_processes() + 256)

    return apply


def _user_processes() -> int:
    uid, count = os.getuid(), 0
    try:
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    count += entry.stat().st_uid == uid
                except OSError:
                    pass
    except OSError:
        return 1024
    return count


@functools.lru_cache(maxsize=16)
def _interpreter_paths(python: str) -> tuple[str, ...]:
    """The folders an interpreter needs: its prefixes and everything on its sys.path."""
    probe = "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, *sys.path]))"
    try:
        out = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL).stdout
        paths = json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        paths = []
    real = {os.path.realpath(p) for p in paths if p and os.path.exists(p)}
    real.add(os.path.dirname(os.path.dirname(os.path.realpath(python))))
    return tuple(sorted(real))


def _hidden_home() -> str | None:
    home = os.path.realpath(os.path.expanduser("~"))
    return home if home not in ("/", "") and os.path.isdir(home) else None


def _wrap(level: str, cmd: list[str], scratch: Path, cwd: Path) -> list[str]:
    if level == "sandbox":
        args = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/dev/shm"]
        home = _hidden_home()
        if home:
            args += ["--tmpfs", home]
            for path in _interpreter_paths(cmd[0]):
                if path == home or path.startswith(home + os.sep):
                    args += ["--ro-bind", path, path]
        return [*args, "--bind", str(scratch), str(scratch), "--unshare-net", "--unshare-pid",
                "--die-with-parent", "--new-session", "--chdir", str(cwd), "--", *cmd]
    if level == "no-network":
        return [*_unshare_prefix(), "--", *cmd]
    return cmd


def run_fenced(cmd: list[str], *, cwd: Path, scratch: Path, env: dict[str, str], timeout_s: float,
               memory_mb: int = 4096, level: str = "rlimits") -> Fenced:
    """Run `cmd` at `level`; output goes to a file in the scratch directory (a flood of output
    cannot fill memory) and its tail comes back."""
    out_path = scratch / "fenced-output.txt"
    started = time.perf_counter()
    timed_out = False
    with open(out_path, "wb") as out:
        preexec = _limits(timeout_s, memory_mb) if level != "none" and sys.platform != "win32" else None
        proc = subprocess.Popen(_wrap(level, cmd, scratch, cwd), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, preexec_fn=preexec,
                                start_new_session=True)
        try:
            proc.wait(timeout=max(0.1, timeout_s))
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc)
    with open(out_path, "rb") as fh:
        fh.seek(max(0, out_path.stat().st_size - OUTPUT_TAIL))
        output = fh.read().decode("utf-8", "replace")
    out_path.unlink(missing_ok=True)
    return Fenced(proc.returncode if not timed_out else -1, time.perf_counter() - started, output, timed_out, level)


def _kill_group(proc: subprocess.Popen) -> None:
    """Whatever the tests started (servers, workers) goes with them."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass

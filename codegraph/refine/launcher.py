"""The parent of every fenced run: a small program that owns the run's whole process tree.

Run as `python -I -S launcher.py` with an empty environment, so its own environment never held
the caller's keys (a test reading `/proc/$PPID/environ` finds nothing) and no `PYTHON*` or
`LD_*` variable reaches it. Standard library only: `-S` keeps site-packages off its path.

Protocol: one JSON line on stdin (the spec); stdin then stays open as the lifeline, and its end
(refine closed it, or refine died, SIGKILL included) stops the run. The run's output is the
launcher's stdout. When it is over, one JSON line (returncode, why it stopped, peak memory and
disk use) goes to the status descriptor.

What it does, at every isolation level: it is a child subreaper, so a process that double-forks
or calls setsid still has it as an ancestor; the command runs in a session of its own with
resource limits; a watchdog sums the memory of the whole tree (or reads its cgroup) and the size
of the run's folder, and stops everything past the limits; at the end, every descendant is
killed, whatever the command left behind.
"""

import ctypes
import errno
import json
import os
import resource
import select
import signal
import time

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_CAPBSET_DROP = 24
CAP_LAST_CAP = 63
TICK = 0.1
PAGE = os.sysconf("SC_PAGE_SIZE")

_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option, value):
    return _libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                       ctypes.c_ulong(0))


def _stat_fields(pid):
    """(ppid, rss pages) from /proc/PID/stat; the command name may hold spaces and parentheses."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        rest = fh.read().rsplit(b")", 1)[1].split()
    return int(rest[1]), int(rest[21])


def descendants(root):
    """{pid: rss bytes} of every process below `root`."""
    children, rss = {}, {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return {}
    for name in entries:
        if not name.isdigit():
            continue
        try:
            ppid, pages = _stat_fields(name)
        except (OSError, IndexError, ValueError):
            continue
        pid = int(name)
        children.setdefault(ppid, []).append(pid)
        rss[pid] = pages * PAGE
    out, todo = {}, list(children.get(root, ()))
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out[pid] = rss.get(pid, 0)
        todo.extend(children.get(pid, ()))
    return out


def folder_bytes(path, stop_at):
    """Disk blocks used under `path`, without following symlinks; stops counting past `stop_at`."""
    total, todo = 0, [path]
    while todo and total <= stop_at:
        try:
            with os.scandir(todo.pop()) as entries:
                for entry in entries:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    total += st.st_blocks * 512
                    if entry.is_dir(follow_symlinks=False):
                        todo.append(entry.path)
        except OSError:
            continue
    return total


class Cgroup:
    """A memory cgroup (v1, where this user may make one) that the kernel itself enforces."""

    def __init__(self, limit_bytes):
        self.path = None
        base = self._own_memory_cgroup()
        if base is None:
            return
        path = os.path.join(base, f"codegraph-fence-{os.getpid()}")
        try:
            os.mkdir(path)
        except OSError:
            return
        try:
            for name, value in (("memory.limit_in_bytes", limit_bytes), ("memory.memsw.limit_in_bytes", limit_bytes)):
                try:
                    with open(os.path.join(path, name), "w") as fh:
                        fh.write(str(limit_bytes))
                except OSError:
                    if name == "memory.limit_in_bytes":
                        raise
            self.path = path
        except OSError:
            self._remove(path)

    @staticmethod
    def _own_memory_cgroup():
        try:
            with open("/proc/self/cgroup") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return None
        for line in lines:
            parts = line.split(":", 2)
            if len(parts) == 3 and "memory" in parts[1].split(","):
                folder = "/sys/fs/cgroup/memory" + parts[2]
                if os.access(folder, os.W_OK):
                    return folder
        return None

    def join(self):
        if self.path:
            with open(os.path.join(self.path, "cgroup.procs"), "w") as fh:
                fh.write("0")

    def usage(self):
        return self._read("memory.usage_in_bytes")

    def peak(self):
        return self._read("memory.max_usage_in_bytes")

    def pids(self):
        try:
            with open(os.path.join(self.path, "cgroup.procs")) as fh:
                return [int(p) for p in fh.read().split()]
        except (OSError, ValueError):
            return []

    def oom_kills(self):
        """How many processes the kernel killed for the group's limit so far."""
        try:
            with open(os.path.join(self.path, "memory.oom_control")) as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def _read(self, name):
        try:
            with open(os.path.join(self.path, name)) as fh:
                return int(fh.read().strip())
        except (OSError, ValueError):
            return 0

    def remove(self):
        if self.path:
            self._remove(self.path)

    @staticmethod
    def _remove(path):
        for _ in range(50):
            try:
                os.rmdir(path)
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    return
                time.sleep(0.02)


def apply_limits(limits):
    for name, soft, hard in limits:
        which = getattr(resource, name)
        try:
            _, current_hard = resource.getrlimit(which)
            if current_hard != resource.RLIM_INFINITY:
                soft, hard = min(soft, current_hard), min(hard, current_hard)
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            pass


def drop_privileges():
    """No capability survives the exec (root included), and no setuid program can grant one."""
    for cap in range(CAP_LAST_CAP + 1):
        _prctl(PR_CAPBSET_DROP, cap)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def user_processes():
    uid, count = os.getuid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                count += os.stat(f"/proc/{name}").st_uid == uid
            except OSError:
                pass
    return count


def start(spec, cgroup, keep):
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setsid()
        if cgroup is not None:
            cgroup.join()
        limits = [tuple(limit) for limit in spec["rlimits"]]
        if os.geteuid() != 0:  # root is not held by RLIMIT_NPROC
            allowed = user_processes() + spec["processes"]
            limits.append(("RLIMIT_NPROC", allowed, allowed))
        apply_limits(limits)
        if spec.get("drop_privileges"):
            drop_privileges()
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for fd in keep:
            os.close(fd)
        os.chdir(spec["cwd"])
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.execve(spec["argv"][0], spec["argv"], spec["env"])
    except BaseException as exc:  # noqa: BLE001 - the child must never return into the launcher
        try:
            os.write(2, f"codegraph: the tests could not be started: {exc}\n".encode())
        except OSError:
            pass
    os._exit(127)


def sweep(root, cgroup):
    """Kill every descendant (and everything in the cgroup) until none is left, reaping them."""
    for _ in range(200):
        pids = set(descendants(root))
        if cgroup is not None:
            pids.update(cgroup.pids())
        pids.discard(root)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap(None)
        time.sleep(0.01)
    reap(None)


def reap(child):
    """Reap what has ended; the main child's wait status if it was among them."""
    status = None
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status
        if pid == 0:
            return status
        if pid == child:
            status = st


def main():
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(0, 65536)
        if not chunk:
            os._exit(2)
        line += chunk
    spec = json.loads(line)
    lifeline = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    status_fd = spec["status_fd"]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is refine's to handle; it closes the lifeline
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    memory_limit = spec["memory_bytes"]
    disk_limit = spec["disk_bytes"]
    cgroup = Cgroup(memory_limit) if memory_limit and spec.get("cgroup", True) else None
    if cgroup is not None and cgroup.path is None:
        cgroup = None
    me = os.getpid()
    child = start(spec, cgroup, (lifeline, status_fd))
    reason, wait_status, peak, disk_peak = None, None, 0, 0
    next_disk, disk_cost = 0.0, 0.0
    while reason is None:
        ready, _, _ = select.select([lifeline], [], [], TICK)
        if ready:
            try:
                data = os.read(lifeline, 4096)
            except OSError:
                data = b""
            if not data:
                reason = "stopped"
                break
        done = reap(child)
        if done is not None:
            wait_status, reason = done, "exited"
            break
        used = cgroup.usage() if cgroup is not None else sum(descendants(me).values())
        peak = max(peak, used)
        if memory_limit and (used > memory_limit or (cgroup is not None and cgroup.oom_kills())):
            reason = "memory"  # past the limit the whole run stops, as it would without a cgroup
            break
        now = time.monotonic()
        if disk_limit and spec.get("watch") and now >= next_disk:
            size = folder_bytes(spec["watch"], disk_limit)
            disk_cost = time.monotonic() - now
            next_disk = time.monotonic() + max(0.5, 10 * disk_cost)
            disk_peak = max(disk_peak, size)
            if size > disk_limit:
                reason = "disk"
                break
    sweep(me, cgroup)
    if wait_status is None:
        wait_status = reap(child)
    if cgroup is not None:
        peak = max(peak, cgroup.peak())
        if reason == "exited" and cgroup.oom_kills():
            reason = "memory"
        cgroup.remove()
    returncode = os.waitstatus_to_exitcode(wait_status) if wait_status is not None else -9
    report = {"returncode": returncode, "reason": reason, "peak_memory_bytes": peak,
              "disk_bytes": disk_peak, "cgroup": cgroup is not None}
    try:
        os.write(status_fd, (json.dumps(report) + "\n").encode())
    except OSError:
        pass
    os._exit(0)


if __name__ == "__main__":
    main()

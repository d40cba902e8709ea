"""The fence around model-written tests, attacked as issue 27 found it open: a test replaces the
output file or the target with a link, a task sets PATH or LD_PRELOAD for the wrapper, names an
interpreter that reads secrets, reads its parent's environment, leaves a daemon behind, floods
memory or disk. Each runs at every isolation level this machine offers."""

import json
import os
import signal
import subprocess
import tempfile
import sys
import time
import uuid
from pathlib import Path

import pytest

from codegraph.refine.loop import refine
from codegraph.refine.sandbox import available, run_fenced, fence_environment
from codegraph.refine.scratch import SCRATCH_PREFIX, Scratch, TamperedError, sweep_abandoned, write_inside
from codegraph.refine.task import TaskError, task_from_dict

GOOD = '''from shop.pricing import apply_discount, round_money


def summarize(cart: Cart, rate: float = 0.1) -> str:
    net = apply_discount(sum(i.price for i in cart.items), rate)
    return f"{cart.count()} items, {round_money(net)}"
'''
LEVELS = [level for level in ("sandbox", "no-network", "rlimits") if available(level)]
SECRET = "sk-fence-" + uuid.uuid4().hex


@pytest.fixture
def fake_home(tmp_path, monkeypatch):
    """A home folder holding an SSH key, as HOME for the test run."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY----- {SECRET} -----END KEY-----\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def _task(repo: Path, test: str, **changes) -> dict:
    (repo / "tests" / "test_attack.py").write_text(test)
    data = json.loads((repo / "task.json").read_text())
    data.update(starting_code=GOOD, tests=["tests/test_attack.py"], limits={"iterations": 1})
    data.update(changes)
    return data


def _run(repo: Path, data: dict):
    return refine(task_from_dict(data, base=repo))


# -- row 1: the output never comes back through a path the tests could replace ------------------

@pytest.mark.parametrize("level", LEVELS)
def test_links_planted_where_refine_once_read_the_output_bring_back_nothing(example, fake_home, level):
    test = (
        "import os\n\n"
        "def test_attack():\n"
        "    here = os.getcwd()\n"
        "    for folder in (here, os.path.dirname(here), os.path.dirname(os.path.dirname(here))):\n"
        "        for name in ('fenced-output.txt', 'output.txt', 'status.json'):\n"
        "            path = os.path.join(folder, name)\n"
        "            for target in ('/proc/self/environ', os.path.expanduser('~/.ssh/id_rsa')):\n"
        "                try:\n"
        "                    if os.path.lexists(path):\n"
        "                        os.remove(path)\n"
        "                    os.symlink(target, path)\n"
        "                except OSError:\n"
        "                    pass\n")
    # the key is in refine's own environment, the SSH key in the caller's home
    os.environ["CODEGRAPH_API_KEY"] = SECRET
    try:
        result = _run(example, _task(example, test, isolation=level))
    finally:
        del os.environ["CODEGRAPH_API_KEY"]
    assert result.isolation == level
    assert result.iterations[-1].tests["passed"], result.iterations[-1].tests["output"]
    assert SECRET not in json.dumps(result.to_dict(), default=str)


# -- row 2: refine never writes through a link the tests put in place of the target -------------

@pytest.mark.parametrize("level", LEVELS)
def test_a_target_replaced_by_a_link_is_never_written_through(example, tmp_path, level):
    victim = tmp_path / "victim.py"
    victim.write_text("KEEP = 'me'\n")
    # the tests know the layout: scratch/run-N/repo is their copy, scratch/repo refine's own
    test = (
        "import os\n\n"
        "def test_attack():\n"
        "    scratch = os.path.dirname(os.path.dirname(os.getcwd()))\n"
        "    for repo in (os.getcwd(), os.path.join(scratch, 'repo')):\n"
        "        target = os.path.join(repo, 'shop', 'report.py')\n"
        "        try:\n"
        "            os.remove(target)\n"
        f"            os.symlink({str(victim)!r}, target)\n"
        "        except OSError:\n"
        "            pass\n"
        "    assert False, 'try again'\n")
    answers = [f"```python\n{GOOD}```"] * 3
    from codegraph.llm import ScriptedModel

    data = _task(example, test, isolation=level, starting_code=None, limits={"iterations": 3})
    try:
        result = refine(task_from_dict(data, base=example), ScriptedModel(answers))
        assert len(result.iterations) == 3  # at the sandbox level the tests could not touch refine's copy
    except TamperedError as exc:  # at the lower levels they could, and refine stops, saying so
        assert level != "sandbox" and "replaced by a link" in str(exc)
    assert victim.read_text() == "KEEP = 'me'\n"


def test_write_inside_refuses_a_linked_folder_and_replaces_a_linked_file(tmp_path):
    root = tmp_path / "root"
    (root / "pkg").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "linked").symlink_to(outside)
    with pytest.raises(TamperedError, match="no longer a folder"):
        write_inside(root, "linked/mod.py", "x = 1\n")
    assert list(outside.iterdir()) == []
    (root / "pkg" / "mod.py").symlink_to(outside / "victim.py")
    with pytest.raises(TamperedError, match="replaced by a link"):
        write_inside(root, "pkg/mod.py", "x = 1\n")
    assert not (outside / "victim.py").exists()
    with pytest.raises(TamperedError):
        write_inside(root, "../outside/victim.py", "x = 1\n")
    write_inside(root, "pkg/new.py", "y = 2\n")
    assert (root / "pkg" / "new.py").read_text() == "y = 2\n"


# -- rows 3 and 4: the task's environment reaches the tests only, never the wrapper ---------------

def test_an_absolute_path_or_a_loader_variable_in_the_task_env_is_refused(example):
    with pytest.raises(TaskError, match="env PATH entry '/usr/local/evil' is not a folder inside"):
        task_from_dict(_task(example, "def test_x(): pass\n", env={"PATH": "/usr/local/evil:/usr/bin"}), base=example)
    for name in ("LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTEST_ADDOPTS", "HOME"):
        with pytest.raises(TaskError, match=f"env may not set {name}"):
            task_from_dict(_task(example, "def test_x(): pass\n", env={name: "/tmp/x"}), base=example)
    task_from_dict(_task(example, "def test_x(): pass\n", env={"PYTHONHASHSEED": "0", "PATH": "bin"}), base=example)


@pytest.mark.parametrize("level", LEVELS)
def test_a_fake_wrapper_on_the_task_path_never_runs(example, tmp_path, level):
    marker = tmp_path / "fake-wrapper-ran"
    (example / "bin").mkdir()
    for name in ("bwrap", "unshare", "env", "python", "python3"):
        fake = example / "bin" / name
        fake.write_text(f"#!/bin/sh\necho {name} > {marker}\nexit 0\n")
        fake.chmod(0o755)
    test = "import os\n\ndef test_attack():\n    assert os.environ['PATH'].split(':')[0].endswith('/bin')\n"
    result = _run(example, _task(example, test, isolation=level, env={"PATH": "bin"}))
    assert result.isolation == level and result.iterations[-1].tests["passed"], result.iterations[-1].tests
    assert not marker.exists(), marker.read_text()


def test_the_wrapper_runs_with_an_empty_environment(tmp_path, monkeypatch):
    """The caller's own variables reach neither the launcher nor a wrapper; the test's do."""
    monkeypatch.setenv("LD_PRELOAD", "/nonexistent/evil.so")  # would be loaded into bwrap, and warn
    level = LEVELS[0]
    env = fence_environment(tmp_path, [tmp_path], sys.executable, {"FOR_THE_TESTS": "yes"})
    run = run_fenced(["/bin/sh", "-c", "echo FOR=$FOR_THE_TESTS; echo PRELOAD=$LD_PRELOAD"], cwd=tmp_path,
                     run_dir=tmp_path, env=env, timeout_s=20, level=level)
    assert "FOR=yes" in run.output and "PRELOAD=\n" in run.output
    assert "evil.so" not in run.output, run.output  # the loader did not try it anywhere


# -- row 5: the task's interpreter runs only inside the fence ------------------------------------

@pytest.mark.skipif("sandbox" not in LEVELS, reason="bubblewrap is not usable here")
def test_the_task_interpreter_is_never_run_outside_the_fence(example, tmp_path, fake_home):
    marker = tmp_path / "interpreter-ran-outside"
    # a virtualenv made from the one running these tests (its pyvenv.cfg names that one's folder)
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "pyvenv.cfg").write_text(f"home = {os.path.dirname(sys.executable)}\n")
    python = tmp_path / "venv" / "bin" / "python"
    python.write_text(f"#!/bin/sh\ncat {fake_home}/.ssh/id_rsa > {marker} 2>/dev/null\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    result = _run(example, _task(example, "def test_x():\n    pass\n", isolation="sandbox", python=str(python)))
    assert result.iterations[-1].tests["passed"], result.iterations[-1].tests["output"]
    assert not marker.exists()  # the only run was fenced: the home hidden, the filesystem read-only


# -- row 7: no process the tests can see holds the key -------------------------------------------

@pytest.mark.parametrize("level", LEVELS)
def test_the_tests_find_the_key_in_no_process_environment(example, level):
    key = "sk-environ-" + uuid.uuid4().hex  # this test's own: helpers of earlier tests may hold SECRET
    test = (
        "import os\n\n"
        "def test_attack():\n"
        "    found = []\n"
        "    for pid in os.listdir('/proc'):\n"
        "        if pid.isdigit():\n"
        "            try:\n"
        f"                if {key!r}.encode() in open(f'/proc/{{pid}}/environ', 'rb').read():\n"
        "                    found.append(pid)\n"
        "            except OSError:\n"
        "                pass\n"
        "    try:\n"
        "        parent = open(f'/proc/{os.getppid()}/environ', 'rb').read()\n"
        "    except OSError:\n"
        "        parent = b''\n"
        "    assert found == [] and b'KEY' not in parent, found\n")
    (example / "task.json").write_text(json.dumps(_task(example, test, isolation=level)))
    env = {**os.environ, "CODEGRAPH_API_KEY": key, "SOME_SERVICE_TOKEN": key}
    proc = subprocess.run([sys.executable, "-m", "codegraph.cli", "refine", "--task", str(example / "task.json"),
                           "--json"], env=env, capture_output=True, text=True, timeout=300)
    result = json.loads(proc.stdout)
    assert result["isolation"] == level
    tests = result["iterations"][-1]["tests"]
    assert tests["passed"], tests["output"]


# -- row 10: pass_env does not hand over keys ------------------------------------------------------

@pytest.mark.parametrize("name", ["CODEGRAPH_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD",
                                  "AWS_SECRET_ACCESS_KEY", "LD_PRELOAD"])
def test_pass_env_refuses_names_that_look_secret(example, name):
    with pytest.raises(TaskError, match=f"pass_env (names|may not name) {name}"):
        task_from_dict(_task(example, "def test_x(): pass\n", pass_env=[name]), base=example)


# -- row 11: nothing the tests start outlives the run ----------------------------------------------

def _tagged(tag: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    out.append(int(entry.name))
            except OSError:
                pass
    return out


def _daemon_test(tag: str, then: str) -> str:
    return (
        "import os, subprocess, sys, time\n\n"
        "def test_attack():\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        f"            os.execv(sys.executable, [sys.executable, '-c', 'import time; time.sleep(300)', {tag!r}])\n"
        "        os._exit(0)\n"
        "    time.sleep(0.5)\n"
        f"    {then}\n")


@pytest.mark.parametrize("level", LEVELS)
def test_a_setsid_double_forked_daemon_dies_with_the_run(example, level):
    tag = f"codegraph-daemon-{uuid.uuid4().hex}"
    result = _run(example, _task(example, _daemon_test(tag, "assert True"), isolation=level))
    assert result.iterations[-1].tests["passed"], result.iterations[-1].tests["output"]
    deadline = time.monotonic() + 5
    while _tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _tagged(tag) == []


@pytest.mark.parametrize("level", LEVELS)
def test_sigkill_of_refine_takes_the_tests_and_their_daemons_along(example, level):
    tag = f"codegraph-orphan-{uuid.uuid4().hex}"
    data = _task(example, _daemon_test(tag, "time.sleep(300)"), isolation=level)
    data["limits"] = {"iterations": 1, "test_seconds": 200}
    (example / "task.json").write_text(json.dumps(data))
    proc = subprocess.Popen([sys.executable, "-m", "codegraph.cli", "refine", "--task", str(example / "task.json")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not _tagged(tag) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _tagged(tag), "the daemon never started"
        pytest_pids = [p for p in _tagged("test_attack") if p != proc.pid]
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while (_tagged(tag) or [p for p in pytest_pids if Path(f"/proc/{p}").exists()]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _tagged(tag) == []
    finally:
        proc.kill()
        for pid in _tagged(tag):
            os.kill(pid, signal.SIGKILL)



def test_a_killed_runs_scratch_copy_is_removed_by_the_next_run_and_a_live_one_is_not(tmp_path, monkeypatch):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom codegraph.refine.scratch import Scratch\n"
         "print(Scratch().path, flush=True)\ntime.sleep(300)\n"],
        stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        live = Path(holder.stdout.readline().strip())
        (live / "repo").mkdir()
        (live / "repo" / "secret.py").write_text("KEY = 'k'\n")
        old = tmp_path / f"{SCRATCH_PREFIX}old"  # left by a version without an owner file
        (old / "repo").mkdir(parents=True)
        young = tmp_path / f"{SCRATCH_PREFIX}young"  # or a run between mkdtemp and its lock
        young.mkdir()
        os.utime(old, (time.time() - 7200, time.time() - 7200))
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "keep.txt").write_text("keep")
        (tmp_path / f"{SCRATCH_PREFIX}link").symlink_to(elsewhere)
        assert sweep_abandoned(tmp_path) == [old]
        assert live.is_dir() and young.is_dir()
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        monkeypatch.setenv("TMPDIR", str(tmp_path))
        monkeypatch.setattr("tempfile.tempdir", None)
        mine = Scratch()  # the next run sweeps before it makes its own folder
        assert not live.exists()
        assert (elsewhere / "keep.txt").read_text() == "keep" and young.is_dir()
        assert sweep_abandoned(tmp_path) == []  # its own folder is held
        odd = tmp_path / f"{SCRATCH_PREFIX}fifo"  # an owner file fenced code replaced by a FIFO: no wait
        odd.mkdir()
        os.mkfifo(odd / ".owner")
        assert sweep_abandoned(tmp_path) == [] and odd.is_dir()
        mine.remove()
        assert not mine.path.exists()
    finally:
        holder.kill()


# -- row 14: no argument files ----------------------------------------------------------------------

def test_an_argument_file_is_refused(example):
    (example / "opts").write_text("--junitxml=/tmp/outside.xml\n")
    with pytest.raises(TaskError, match="read its options from a file"):
        task_from_dict(_task(example, "def test_x(): pass\n", tests=["@opts"]), base=example)


# -- row 15: memory and disk are limited for the whole run, not per process ------------------------

_FORKERS = (
    "import os, time\n"
    "kids = []\n"
    "for _ in range(4):\n"
    "    pid = os.fork()\n"
    "    if pid == 0:\n"
    "        block = bytearray(110 * 1024 * 1024)\n"
    "        for i in range(0, len(block), 4096):\n"
    "            block[i] = 1\n"
    "        time.sleep(20)\n"
    "        os._exit(0)\n"
    "    kids.append(pid)\n"
    "for pid in kids:\n"
    "    os.waitpid(pid, 0)\n"
    "print('ALL DONE')\n")


@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup-if-any", "watchdog"])
def test_four_forked_children_cannot_share_more_than_the_limit(tmp_path, cgroup, monkeypatch):
    if not cgroup:
        monkeypatch.setattr("codegraph.refine.sandbox.USE_CGROUP", False)
    env = fence_environment(tmp_path, [tmp_path], sys.executable)
    started = time.monotonic()
    run = run_fenced([sys.executable, "-c", _FORKERS], cwd=tmp_path, run_dir=tmp_path, env=env, timeout_s=60,
                     memory_mb=256, level=LEVELS[0])
    assert time.monotonic() - started < 30
    assert "ALL DONE" not in run.output
    assert run.stopped_by == "memory" or run.returncode != 0
    assert "used more than the 256 MB" in run.output or "Killed" in run.output or run.returncode < 0, run


def test_the_run_folder_is_limited_in_size(tmp_path):
    env = fence_environment(tmp_path, [tmp_path], sys.executable)
    writer = ("import os, time\n"
              "for i in range(40):\n"
              "    with open(f'blob{i}', 'wb') as fh:\n"
              "        fh.write(os.urandom(4 << 20))\n"
              "    time.sleep(0.05)\n"
              "print('ALL WRITTEN')\n")
    run = run_fenced([sys.executable, "-c", writer], cwd=tmp_path, run_dir=tmp_path, env=env, timeout_s=60,
                     disk_mb=32, level=LEVELS[0])
    assert run.stopped_by == "disk" and "ALL WRITTEN" not in run.output
    assert "wrote more than 32 MB" in run.output


@pytest.mark.skipif("sandbox" not in LEVELS, reason="bubblewrap is not usable here")
def test_dev_shm_in_the_sandbox_is_sized(tmp_path):
    env = fence_environment(tmp_path, [tmp_path], sys.executable)
    writer = ("try:\n"
              "    with open('/dev/shm/fill', 'wb') as fh:\n"
              "        for _ in range(64):\n"
              "            fh.write(b'x' * (4 << 20))\n"
              "            fh.flush()\n"
              "    print('FILLED')\n"
              "except OSError as exc:\n"
              "    print('REFUSED', exc.errno)\n")
    run = run_fenced([sys.executable, "-c", writer], cwd=tmp_path, run_dir=tmp_path, env=env, timeout_s=60,
                     memory_mb=256, level="sandbox")
    assert "REFUSED 28" in run.output, run.output  # ENOSPC at a quarter of the memory limit


# -- root may not undo the fence ------------------------------------------------------------------

@pytest.mark.skipif("sandbox" not in LEVELS, reason="bubblewrap is not usable here")
def test_the_sandbox_cannot_unmount_the_hidden_home_or_remount_the_root(tmp_path, fake_home):
    run_dir = tmp_path / "run"  # beside the home folder, as refine's scratch folder is
    run_dir.mkdir()
    env = fence_environment(run_dir, [run_dir], sys.executable)
    script = (f"umount {fake_home} 2>/dev/null; umount $HOME 2>/dev/null; "
              f"mount -o remount,rw / 2>/dev/null && echo REMOUNTED; cat {fake_home}/.ssh/id_rsa 2>/dev/null; "
              "grep CapEff /proc/self/status")
    run = run_fenced(["/bin/sh", "-c", script], cwd=run_dir, run_dir=run_dir, env=env, timeout_s=20,
                     level="sandbox")
    assert "REMOUNTED" not in run.output and SECRET not in run.output
    assert "CapEff:\t0000000000000000" in run.output


@pytest.mark.skipif("sandbox" not in LEVELS, reason="bubblewrap is not usable here")
def test_the_sandbox_gives_a_private_tmp_and_keeps_a_home_under_a_shown_folder_hidden(tmp_path, fake_home):
    """/tmp is the run's own (writable: a JVM's attach socket lives there) and the host's files in
    it are not seen; a folder shown read-only that holds the home folder does not show the home."""
    host_file = Path(tempfile.gettempdir()) / f"codegraph-host-{uuid.uuid4().hex}"
    host_file.write_text(SECRET)
    (tmp_path / "shown.txt").write_text("shown")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    try:
        script = (f"cat {host_file}; cat {fake_home}/.ssh/id_rsa; cat {tmp_path}/shown.txt; "
                  "echo private > /tmp/written && cat /tmp/written")
        run = run_fenced(["/bin/sh", "-c", script], cwd=run_dir, run_dir=run_dir, env={"PATH": "/usr/bin:/bin"},
                         timeout_s=20, level="sandbox", read_only=(str(tmp_path),))
    finally:
        host_file.unlink()
    assert SECRET not in run.output and "shown" in run.output and "private" in run.output, run.output
    assert not (Path(tempfile.gettempdir()) / "written").exists() or \
        (Path(tempfile.gettempdir()) / "written").read_text() != "private\n"

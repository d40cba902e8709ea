"""refine as a hostile task file, a hostile model and a hostile endpoint would use it: nothing is
written outside the scratch copy, the tests see no secrets, every limit holds, every fault is one
line (issue 10, rows 1-8, 16, 18, 25)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegraph.cli import main
from codegraph.llm import OpenAIChat, ScriptedModel
from codegraph.languages.python.splice import code_from_answer
from codegraph.refine.loop import refine
from codegraph.refine.task import Task, TaskError, task_from_dict
from openai_server import FakeOpenAI

GOOD = '''from shop.pricing import apply_discount, round_money


def summarize(cart: Cart, rate: float = 0.1) -> str:
    net = apply_discount(sum(i.price for i in cart.items), rate)
    return f"{cart.count()} items, {round_money(net)}"
'''


def _data(repo: Path, **changes) -> dict:
    data = json.loads((repo / "task.json").read_text())
    data.update(changes)
    return data


def _snapshot(folder: Path) -> dict:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


# -- row 1: the target is confined ---------------------------------------------------------------

def test_absolute_target_outside_the_repository_is_refused(example, tmp_path):
    victim = tmp_path / "victim.py"
    victim.write_text("def summarize():\n    return 'keep me'\n")
    with pytest.raises(TaskError, match="target_file .* is absolute"):
        task_from_dict(_data(example, target_file=str(victim)), base=example)
    assert victim.read_text() == "def summarize():\n    return 'keep me'\n"


def test_dotdot_target_is_refused(example, tmp_path):
    victim = tmp_path / "victim.py"
    victim.write_text("def summarize():\n    return 'keep me'\n")
    with pytest.raises(TaskError, match="target_file .*leads outside the repository"):
        task_from_dict(_data(example, target_file="../victim.py"), base=example)


def test_target_through_a_symlink_leading_out_is_refused_even_with_apply(example, tmp_path):
    victim = tmp_path / "victim.py"
    victim.write_text("def summarize():\n    return 'keep me'\n")
    (example / "shop" / "evil.py").symlink_to(victim)
    with pytest.raises(TaskError, match="leads outside the repository"):
        task_from_dict(_data(example, target_file="shop/evil.py"), base=example)
    # a Task built in code (as the benchmarks do) is confined by the loop itself
    task = Task(example, "shop/evil.py", "summarize", "d", starting_code=GOOD)
    with pytest.raises(TaskError, match="leads outside the repository"):
        refine(task, apply=True)
    assert victim.read_text() == "def summarize():\n    return 'keep me'\n"


def test_symlinks_in_the_repository_never_lead_out_of_the_scratch_copy(example, tmp_path):
    from codegraph.refine.loop import copy_repository

    secret = tmp_path / "secret.py"
    secret.write_text("API_KEY = 'sk-live-123'\n")
    (example / "shop" / "leak.py").symlink_to(secret)
    (example / "shop" / "alias.py").symlink_to(example / "shop" / "pricing.py")
    (example / "shop_link").symlink_to(example / "shop")
    copy = tmp_path / "copy"
    notes = copy_repository(example, copy)
    assert not (copy / "shop" / "leak.py").exists() and any("leak.py" in n for n in notes)
    alias = copy / "shop" / "alias.py"
    assert alias.is_file() and not alias.is_symlink()
    assert alias.read_text() == (example / "shop" / "pricing.py").read_text()
    link = copy / "shop_link"
    assert link.is_symlink() and link.resolve() == (copy / "shop").resolve()
    for path in copy.rglob("*"):
        if path.is_symlink():
            assert path.resolve().is_relative_to(copy.resolve()), path


# -- row 2: tests are paths or node ids, never options -----------------------------------------

@pytest.mark.parametrize("entry", ["--junitxml=/tmp/codegraph-junit.xml", "--debug=/tmp/codegraph-debug.log",
                                   "-p", "../../outside_test.py", "/etc/passwd"])
def test_pytest_options_and_outside_paths_are_refused(example, entry):
    with pytest.raises(TaskError, match="tests entry"):
        task_from_dict(_data(example, tests=[entry]), base=example)


# -- row 25: types are checked against the schema, every violation in one message ----------------

def test_every_schema_violation_in_one_message(example):
    data = _data(example, python=5, starting_code=5, limits={"iterations": "five", "seconds": None})
    with pytest.raises(TaskError) as info:
        task_from_dict(data, base=example)
    message = str(info.value)
    for field in ("python", "starting_code", "limits.iterations", "limits.seconds"):
        assert field in message, message
    assert "Traceback" not in message


# -- rows 3 and 4: the tests run fenced, with no secrets ------------------------------------------

def _spy_test(example: Path, marker: Path) -> None:
    (example / "tests" / "test_spy.py").write_text(
        "import os\n\n"
        "def test_spy():\n"
        f"    try:\n        open({str(marker)!r}, 'w').write('written from the tests')\n"
        "    except OSError:\n        pass\n"
        "    assert False, 'ENV=' + repr(dict(os.environ))\n")


def test_tests_see_an_allow_listed_environment_and_write_nothing_outside(example, tmp_path, monkeypatch):
    secrets = {"CODEGRAPH_API_KEY": "sk-codegraph-1", "OPENAI_API_KEY": "sk-openai-2",
               "MY_SERVICE_TOKEN": "tok-3", "DB_SECRET": "sec-4", "AWS_ACCESS_KEY": "ak-5"}
    for key, value in secrets.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SHOWN_ON_REQUEST", "visible-6")
    marker = tmp_path / "marker.txt"
    _spy_test(example, marker)
    data = _data(example, starting_code=GOOD, tests=["tests/test_spy.py"], pass_env=["SHOWN_ON_REQUEST"],
                 env={"FEATURE_FLAG": "on"}, limits={"iterations": 1})
    result = refine(task_from_dict(data, base=example))
    output = result.iterations[-1].tests["output"]
    assert "ENV=" in output
    for value in secrets.values():
        assert value not in output
    assert "visible-6" in output and "'FEATURE_FLAG': 'on'" in output
    home = output.split("'HOME': '")[1].split("'")[0]
    assert "codegraph-refine-" in home and not Path(home).exists()  # inside the scratch copy, now removed
    assert result.isolation in ("sandbox", "no-network", "rlimits")
    if result.isolation == "sandbox":
        assert not marker.exists()


def test_auto_isolation_takes_the_strongest_level_here(example):
    from codegraph.refine.sandbox import available

    result = refine(task_from_dict(_data(example), base=example))
    expected = next(level for level in ("sandbox", "no-network", "rlimits") if available(level))
    assert result.isolation == expected


def _sandbox_available() -> bool:
    try:
        from codegraph.refine.sandbox import available
    except ImportError:
        return True  # an older codegraph: let the test show what it lacks
    return available("sandbox")


@pytest.mark.skipif(not _sandbox_available(), reason="bubblewrap is not usable here")
def test_sandbox_has_no_network_a_read_only_filesystem_and_no_home(example, tmp_path, monkeypatch):
    # outside /tmp (the sandbox's /tmp is a private tmpfs: what is written there never reaches the host)
    marker = Path("/var/tmp") / f"codegraph-escape-{os.getpid()}-{tmp_path.name}.txt"
    in_tmp = tmp_path / "escape.txt"
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("aws_secret_access_key = wJalrXUtnFEMI\n")
    monkeypatch.setenv("HOME", str(home))
    (example / "tests" / "test_fence.py").write_text(
        "import socket\n\n"
        "def test_fence():\n"
        "    s = socket.socket()\n"
        "    s.settimeout(2)\n"
        "    try:\n        s.connect(('1.1.1.1', 53))\n        net = 'network'\n"
        "    except OSError:\n        net = 'no network'\n"
        f"    try:\n        open({str(marker)!r}, 'w').write('x')\n        fs = 'wrote'\n"
        "    except OSError:\n        fs = 'read-only'\n"
        f"    try:\n        secret = open({str(home / '.aws' / 'credentials')!r}).read()\n"
        "    except OSError:\n        secret = 'hidden'\n"
        f"    open({str(in_tmp)!r}, 'w').write('x')\n"
        "    assert False, net + ' / ' + fs + ' / ' + secret\n")
    data = _data(example, starting_code=GOOD, tests=["tests/test_fence.py"], isolation="sandbox",
                 limits={"iterations": 1})
    result = refine(task_from_dict(data, base=example))
    assert result.isolation == "sandbox"
    assert "no network / read-only / hidden" in result.iterations[-1].tests["output"]
    assert "wJalrXUtnFEMI" not in result.iterations[-1].tests["output"]
    assert not marker.exists() and not in_tmp.exists()


def test_a_test_run_that_forks_a_sleeper_is_bounded_and_its_group_killed(example):
    import uuid

    tag = f"codegraph-sleeper-{uuid.uuid4().hex}"
    (example / "tests" / "test_hang.py").write_text(
        "import subprocess, sys, time\n\n"
        "def test_hang():\n"
        f"    subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', {tag!r}])\n"
        "    time.sleep(300)\n")
    data = _data(example, starting_code=GOOD, tests=["tests/test_hang.py"],
                 limits={"iterations": 1, "test_seconds": 3})
    started = time.monotonic()
    result = refine(task_from_dict(data, base=example))
    assert time.monotonic() - started < 30
    assert not result.success and "did not finish within 3 s" in result.iterations[-1].tests["output"]
    time.sleep(0.5)
    survivors = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline_has(p, tag)]
    assert survivors == []


def _cmdline_has(proc: Path, tag: str) -> bool:
    try:
        return tag.encode() in (proc / "cmdline").read_bytes()
    except OSError:
        return False


# -- row 5: nothing is written into the repository without --apply ------------------------------

def test_refine_without_apply_writes_nothing_into_the_repository(example):
    from codegraph.indexer import index_repository

    index_repository(example, jobs=1)  # a database with embeddings, as users have
    before = _snapshot(example)
    model = ScriptedModel([f"```python\n{GOOD.replace('apply_discount', 'apply_discnt')}```", f"```python\n{GOOD}```"])
    result = refine(task_from_dict(_data(example, starting_code=None), base=example), model)
    assert result.success
    assert _snapshot(example) == before
    assert sorted(p.name for p in (example / ".codegraph").iterdir()) == sorted(
        p.name for p in before if p.parent.name == ".codegraph")


# -- rows 6, 7, 16: a hostile or broken endpoint --------------------------------------------------

def _task_for_model(example: Path, seconds: float, iterations: int = 2) -> Task:
    return task_from_dict(_data(example, starting_code=None, limits={"iterations": iterations, "seconds": seconds}),
                          base=example)


@pytest.mark.parametrize("action", ["trickle", "stall"])
def test_a_trickling_or_stalled_endpoint_cannot_outlast_the_run(example, action):
    with FakeOpenAI(script=[action] * 4, trickle_s=0.5) as server:
        model = OpenAIChat("tiny", server.base_url, "k", timeout_s=2, retries=0)
        started = time.monotonic()
        result = refine(_task_for_model(example, seconds=5, iterations=20), model)
        elapsed = time.monotonic() - started
    assert elapsed < 5 + 6, elapsed  # the run's limit plus setup, never the server's pace
    assert not result.success and result.stop_reason.startswith("time limit")
    errors = [it.error for it in result.iterations if it.error]
    assert errors and all("\n" not in e and server.base_url in e for e in errors)


def test_a_huge_answer_is_refused_before_lint(example):
    huge = "```python\ndef summarize(cart, rate=0.1):\n" + "    x = 1\n" * 300_000 + "    return ''\n```"  # 3 MB: read, then refused
    with FakeOpenAI(answers=[huge, f"```python\n{GOOD}```"]) as server:
        model = OpenAIChat("tiny", server.base_url, "k")
        started = time.monotonic()
        result = refine(_task_for_model(example, seconds=120), model)
    assert time.monotonic() - started < 60
    assert result.success and len(result.iterations) == 2
    second_prompt = server.requests[1]["body"]["messages"][-1]["content"]
    assert "over the 200 kB limit" in second_prompt


def test_an_html_page_is_one_line_and_a_failed_iteration(example):
    with FakeOpenAI(script=["html"], answers=[f"```python\n{GOOD}```"]) as server:
        model = OpenAIChat("tiny", server.base_url, "k")
        result = refine(_task_for_model(example, seconds=120), model)
    first = result.iterations[0]
    assert first.error and "did not answer with a chat completion" in first.error and "\n" not in first.error
    assert server.base_url in first.error
    assert result.success  # the next iteration asked again


def test_cli_prints_one_line_for_an_endpoint_that_refuses_the_key(example):
    with FakeOpenAI(script=["401"]) as server:
        result = CliRunner().invoke(main, ["refine", "--task", str(example / "task.json"), "--model", "tiny",
                                           "--base-url", server.base_url, "--api-key", "bad"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "refused the API key" in result.output


def test_code_written_to_escape_the_scratch_copy_stays_inside_where_fenced(example, tmp_path):
    marker = tmp_path / "pwned.txt"
    evil = GOOD.replace('    net = apply_discount', f'    open({str(marker)!r}, "w").write("pwned")\n'
                                                    '    net = apply_discount')
    with FakeOpenAI(answers=[f"```python\n{evil}```"]) as server:
        model = OpenAIChat("tiny", server.base_url, "k")
        result = refine(_task_for_model(example, seconds=120, iterations=1), model)
    assert result.iterations[-1].tests is not None  # the code ran
    if result.isolation == "sandbox":
        assert not marker.exists()


# -- row 8: a truncated answer is cut back in linear time ----------------------------------------

def test_an_unterminated_100_kb_block_is_trimmed_quickly():
    body = "".join(f"    value_{i} = compute({i}, [1, 2, 3])\n" for i in range(2500))
    answer = "```python\ndef f(x):\n    y = 1\n    z = (y,\n" + body  # a bracket left open early
    assert len(answer) > 100_000
    started = time.monotonic()
    code = code_from_answer(answer, "f")
    assert time.monotonic() - started < 5
    assert code == "def f(x):\n    y = 1\n"


# -- row 18: nothing is left behind ---------------------------------------------------------------

def test_no_temporary_files_are_left_behind(example, tmp_path, monkeypatch):
    private = tmp_path / "private-tmp"
    private.mkdir()
    monkeypatch.setenv("TMPDIR", str(private))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    result = refine(task_from_dict(_data(example), base=example))
    assert result.success
    assert list(private.iterdir()) == []


def test_sigterm_removes_the_scratch_copy(example, tmp_path):
    private = tmp_path / "private-tmp"
    private.mkdir()
    with FakeOpenAI(script=["stall"]) as server:
        env = {**os.environ, "TMPDIR": str(private)}
        proc = subprocess.Popen([sys.executable, "-m", "codegraph.cli", "refine", "--task",
                                 str(example / "task.json"), "--model", "tiny", "--base-url", server.base_url],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not server.requests:  # it is waiting for the model
            time.sleep(0.1)
        assert server.requests, proc.stderr.read() if proc.poll() is not None else "no request"
        assert any(p.name.startswith("codegraph-refine-") for p in private.iterdir())
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert not any(p.name.startswith("codegraph-refine-") for p in private.iterdir()), list(private.iterdir())


def test_a_timeout_in_the_lexical_search_does_not_end_the_run(example, monkeypatch):
    """issue 10, row 21: retrieval failures fall back and are recorded, never fatal."""
    from codegraph.errors import QueryTimeout
    from codegraph.retrieval.engine import Retriever

    real = Retriever.run_template

    def flaky(self, name, params):
        if name == "lexical":
            raise QueryTimeout("query stopped after the 2 s time limit")
        return real(self, name, params)

    monkeypatch.setattr(Retriever, "run_template", flaky)
    result = refine(task_from_dict(_data(example), base=example))
    assert result.success


def test_an_endpoint_that_floods_an_endless_body_is_cut_off_by_bytes(example):
    """issue 27, row 8: a body streamed without end grew memory to 1.27 GB before the deadline."""
    import resource

    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with FakeOpenAI(script=["flood"] * 8, answers=[f"```python\n{GOOD}```"]) as server:
        model = OpenAIChat("tiny", server.base_url, "k", retries=1)
        started = time.monotonic()
        result = refine(_task_for_model(example, seconds=120, iterations=3), model)
        elapsed = time.monotonic() - started
        flooded = server.flooded
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    errors = [it.error for it in result.iterations if it.error]
    assert errors and all("sent more than 8 MB for one answer" in e and "\n" not in e for e in errors), errors
    assert elapsed < 60 and grown_mb < 200, (elapsed, grown_mb)
    assert flooded < 200 << 20  # the client stopped reading; the server did not get to write 4 GB

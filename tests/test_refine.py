"""The refinement loop, its models and its parsing, end to end on the shipped example."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from codegraph.cli import main
from codegraph.languages.python.splice import code_from_answer, splice
from codegraph.refine.loop import refine
from codegraph.llm import ModelError, OpenAIChat, ReplayModel, ScriptedModel
from codegraph.refine.task import TaskError, load_task, task_from_dict
from openai_server import FakeOpenAI


GOOD = '''from shop.pricing import apply_discount, round_money


def summarize(cart: Cart, rate: float = 0.1) -> str:
    net = apply_discount(sum(i.price for i in cart.items), rate)
    return f"{cart.count()} items, {round_money(net)}"
'''
HALLUCINATED = GOOD.replace("apply_discount", "apply_discnt")


def _task(repo: Path, **changes):
    data = json.loads((repo / "task.json").read_text())
    data.update(changes)
    return task_from_dict(data, base=repo)


def test_offline_generator_repairs_the_example_and_leaves_the_repo_alone(example):
    before = {p: p.read_bytes() for p in example.rglob("*") if p.is_file()}
    result = refine(load_task(example / "task.json"))
    assert result.success and result.lint_clean and result.tests_passed
    assert "apply_discount(gross, rate=rate)" in result.code
    assert [len(it.diagnostics) for it in result.iterations] == [4, 2, 0]
    first = result.iterations[0].retrievals
    assert {r["source"] for r in first} == {"rule"} and all(r["sql"] for r in first)
    assert "+from shop.pricing import round_money" in result.diff
    assert {p: p.read_bytes() for p in example.rglob("*") if p.is_file()} == before


def test_apply_writes_the_result_only_on_success(example):
    result = refine(load_task(example / "task.json"), apply=True)
    assert result.applied
    assert "def summarize" in (example / "shop" / "report.py").read_text()
    assert "NotImplementedError" not in (example / "shop" / "report.py").read_text()


def test_scripted_model_gets_lint_feedback_with_sql_context(example):
    model = ScriptedModel([f"Sure, here it is:\n```python\n{HALLUCINATED}```\nHope it helps!",
                           f"```python\n{GOOD}```"])
    result = refine(_task(example, starting_code=None), model)
    assert result.success and len(result.iterations) == 2
    second_prompt = model.calls[1][-1]["content"]
    assert "apply_discnt" in second_prompt and "shop.pricing.apply_discount" in second_prompt
    assert result.prompt_tokens > 0 and result.completion_tokens > 0


def test_test_failures_are_fed_back(example):
    wrong = GOOD.replace('f"{cart.count()} items', 'f"{cart.count()} things')
    model = ScriptedModel([f"```python\n{wrong}```", f"```python\n{GOOD}```"])
    result = refine(_task(example, starting_code=None), model)
    assert result.success
    assert result.iterations[0].tests["passed"] is False
    assert "things" in model.calls[1][-1]["content"] and "The tests failed" in model.calls[1][-1]["content"]


@pytest.mark.parametrize("mode,iterations,has_context", [("direct", 1, False), ("naive-rag", 1, True),
                                                         ("reflexion", 2, False), ("repocoder", 2, True)])
def test_modes_switch_parts_of_the_loop(example, mode, iterations, has_context):
    model = ScriptedModel([f"```python\n{HALLUCINATED}```", f"```python\n{GOOD}```"])
    result = refine(_task(example, starting_code=None, mode=mode), model)
    assert len(result.iterations) == iterations
    assert ("Relevant project code" in model.calls[0][-1]["content"]) == has_context
    assert all(not it.retrievals for it in result.iterations)  # only cocogen/rrr run SQL per error
    assert result.success == (iterations == 2)


def test_empty_and_prose_only_answers_do_not_crash(example):
    model = ScriptedModel(["", "I cannot help with that.", f"```python\n{GOOD}```"])
    result = refine(_task(example, starting_code=None), model)
    assert result.success and result.iterations[0].code == ""


def test_an_empty_last_answer_keeps_the_last_real_attempt(example):
    model = ScriptedModel([f"```python\n{HALLUCINATED}```", "I give up."])
    result = refine(_task(example, starting_code=None), model)
    assert not result.success and result.iterations[-1].code == ""
    assert "apply_discnt" in result.code and "apply_discnt" in result.diff


def test_offline_generator_needs_starting_code(example):
    with pytest.raises(Exception, match="starting_code"):
        refine(_task(example, starting_code=None))


def test_code_from_answer_is_robust():
    assert code_from_answer("", "f") is None
    assert code_from_answer("no code here", "f") is None
    two = "First a helper:\n```python\ndef g():\n    return 1\n```\nThen:\n```python\ndef f():\n    return g()\n```"
    assert code_from_answer(two, "f").startswith("def f():")
    truncated = "```python\ndef f(x):\n    y = x + 1\n    return (y,\n"
    assert code_from_answer(truncated, "f") == "def f(x):\n    y = x + 1\n"
    bare = "Here:\ndef f():\n    return 2\n"
    assert code_from_answer(bare, "f") == "def f():\n    return 2\n"


def test_splice_replaces_methods_adds_functions_and_imports():
    source = '"""Doc."""\n\nimport os\n\n\nclass A:\n    def m(self):\n        return 1\n\n\ndef g():\n    pass\n'
    out = splice(source, "A.m", "import json\n\ndef m(self):\n    return json.dumps(2)\n")
    assert "import os\nimport json" in out.text and "        return json.dumps(2)" in out.text
    assert out.import_lines == (4,)
    assert out.text.split("\n")[out.first_line - 1].strip() == "def m(self):"
    added = splice(source, "h", "def h():\n    return 3\n")
    assert added.text.rstrip().endswith("def h():\n    return 3") and "def g" in added.text
    new_method = splice(source, "A.n", "def n(self):\n    return 4\n")
    assert "    def n(self):" in new_method.text
    with pytest.raises(ValueError, match="not in the target file"):
        splice(source, "B.n", "def n(self): pass\n")


def test_task_validation_says_what_is_wrong(example):
    with pytest.raises(TaskError, match="'target_file' is a required property"):
        task_from_dict({"repo": "."}, base=example)
    with pytest.raises(TaskError, match="Additional properties are not allowed"):
        task_from_dict({"repo": ".", "target_file": "shop/report.py", "symbol": "f", "description": "d",
                        "colour": 1}, base=example)
    with pytest.raises(TaskError, match="not a file"):
        task_from_dict({"repo": ".", "target_file": "nope.py", "symbol": "f", "description": "d"}, base=example)
    with pytest.raises(TaskError, match="mode"):
        _task(example, mode="magic")


def test_replay_model(tmp_path, example):
    recording = tmp_path / "answers.json"
    recording.write_text(json.dumps({"completions": [f"```python\n{GOOD}```"]}))
    result = refine(_task(example, starting_code=None), ReplayModel(str(recording)))
    assert result.success and result.model.startswith("replay:")


def test_openai_client_answers_retries_and_reports(example):
    with FakeOpenAI(script=["429", "ok"], answers=[f"```python\n{GOOD}```"]) as server:
        model = OpenAIChat("tiny", server.base_url, "sk-test")
        result = refine(_task(example, starting_code=None), model)
    assert result.success
    chats = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert len(chats) == 2 and chats[0]["body"]["model"] == "tiny"
    assert result.prompt_tokens == 11 and result.completion_tokens == 7


def test_openai_client_retries_a_timeout_and_reports_malformed_json_in_one_line():
    with FakeOpenAI(script=["timeout", "ok", "malformed"], answers=["```python\ndef f():\n    return 1\n```"],
                    delay_s=1.5) as server:
        model = OpenAIChat("tiny", server.base_url, "k", timeout_s=0.5)
        completion = model.complete([{"role": "user", "content": "hi"}])
        assert "def f" in completion.text
        assert len(server.requests) == 2  # the timed-out attempt was retried by the client
        with pytest.raises(ModelError, match=f"{server.base_url} sent an answer that could not be used"):
            model.complete([{"role": "user", "content": "hi"}])


@pytest.mark.parametrize("status,message", [("401", "API key"), ("404", "does not know model")])
def test_openai_client_fails_fast_on_bad_key_or_model(status, message):
    with FakeOpenAI(script=[status]) as server:
        model = OpenAIChat("tiny", server.base_url, "bad")
        with pytest.raises(ModelError, match=message):
            model.complete([{"role": "user", "content": "hi"}])
        assert len(server.requests) == 1


def test_cli_refine_exit_codes_and_json(example):
    runner = CliRunner()
    ok = runner.invoke(main, ["refine", "--task", str(example / "task.json"), "--json"])
    assert ok.exit_code == 0, ok.output
    trace = json.loads(ok.output)
    assert trace["success"] and len(trace["iterations"]) == 3 and trace["iterations"][0]["retrievals"]
    stuck = runner.invoke(main, ["refine", "--task", str(example / "task.json"), "--iterations", "1"])
    assert stuck.exit_code == 1
    bad = runner.invoke(main, ["refine", "--task", str(example / "missing.json")])
    assert bad.exit_code == 2 and "no task file" in bad.output


def test_rrr_mode_adds_class_info_for_classes_the_description_names(example):
    model = ScriptedModel([f"```python\n{GOOD}```"])
    result = refine(_task(example, starting_code=None, mode="rrr",
                          description="Summarize a Cart in one line: item count and discounted total."), model)
    assert result.success
    prompt = model.calls[0][-1]["content"]
    assert "class shop.models.Cart" in prompt and "count(self) -> int" in prompt


def test_a_syntax_error_the_candidate_causes_below_itself_is_not_lint_clean(example):
    broken = 'def summarize(cart: Cart, rate: float = 0.1) -> str:\n    """Summarize the cart\n'
    model = ScriptedModel([f"```python\n{broken}```", f"```python\n{GOOD}```"])
    result = refine(_task(example, starting_code=None), model)
    first = result.iterations[0]
    assert not first.lint_clean and any(d["symbol"] == "syntax-error" for d in first.diagnostics)
    assert result.success and len(result.iterations) == 2


def test_an_import_the_repository_already_makes_elsewhere_is_not_held_against_the_candidate(example):
    (example / "shop" / "optional.py").write_text("def speedup():\n    import ujson_accel\n    return ujson_accel\n")
    body = "    if rate < 0:  # never in the tests\n        import ujson_accel  # optional, as elsewhere in the project\n"
    good_with_optional = GOOD.replace("    net = ", body + "    net = ")
    model = ScriptedModel([f"```python\n{good_with_optional}```"])
    result = refine(_task(example, starting_code=None), model)
    assert result.success and result.iterations[0].diagnostics == []
    hallucinated = GOOD.replace("    net = ", "    if rate < 0:\n        import ujson_acel\n    net = ")
    result = refine(_task(example, starting_code=None), ScriptedModel([f"```python\n{hallucinated}```"] * 4))
    assert any(d["symbol"] == "import-error" for d in result.iterations[0].diagnostics)


def test_offline_generator_renames_only_to_near_miss_names():
    from codegraph.refine.offline import OfflineRepairer
    from codegraph.retrieval.engine import Retrieval
    from codegraph.languages import Diagnostic, language

    lines = ["def f(stream):", "    return stream.mode, self.totl()"]
    no_member = Diagnostic("no-member", "E1101", "Instance of 'TextIOWrapper' has no 'mode' member", 2, 11)
    far = Retrieval(no_member, "lexical", rows=[{"qualname": "t.test_docstring_context", "name": "test_docstring_context"}])
    assert OfflineRepairer().repair(lines, [far], (1, 2), 0, language("python")) == (lines, [])
    typo = Diagnostic("no-member", "E1101", "Instance of 'Cart' has no 'totl' member", 2, 24)
    near = Retrieval(typo, "rule", rows=[{"qualname": "shop.Cart.total", "name": "total"}])
    repaired, done = OfflineRepairer().repair(lines, [near], (1, 2), 0, language("python"))
    assert repaired[1] == "    return stream.mode, self.total()" and done == ["line 2: .totl -> .total"]


# -- issue 10, row 17: retries are the client's own, shared by chat and embeddings ----------------

def test_a_400_is_not_retried_and_the_error_names_the_endpoint():
    with FakeOpenAI(script=["400"]) as server:
        model = OpenAIChat("tiny", server.base_url, "k")
        with pytest.raises(ModelError, match=f"{server.base_url} rejected the request \\(400\\)") as info:
            model.complete([{"role": "user", "content": "hi"}])
    assert len(server.requests) == 1 and not info.value.retryable


def test_retry_after_is_honoured():
    with FakeOpenAI(script=["retry-after"], answers=["```python\ndef f():\n    return 1\n```"]) as server:
        model = OpenAIChat("tiny", server.base_url, "k")
        completion = model.complete([{"role": "user", "content": "hi"}])
    assert "def f" in completion.text and len(server.requests) == 2
    assert server.request_times[1] - server.request_times[0] >= 0.95  # the server asked for 1 s


def test_chat_and_embeddings_share_one_endpoint_implementation():
    from codegraph.llm import OpenAIEndpoint
    from codegraph.semantic.models import get_model as get_embedding_model

    chat = OpenAIChat("tiny", "http://127.0.0.1:9/v1", "k")
    embeddings = get_embedding_model("openai", model="e", base_url="http://127.0.0.1:9/v1", api_key="k")
    assert isinstance(chat.endpoint, OpenAIEndpoint) and isinstance(embeddings.endpoint, OpenAIEndpoint)

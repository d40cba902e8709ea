"""Opt-in: the loop against a real model on an OpenAI-compatible server (see docs/refine.md).

Runs only when CODEGRAPH_E2E_BASE_URL and CODEGRAPH_E2E_MODEL are set, e.g. for SmolLM2-135M
served by llama-cpp-python. It checks robustness, not quality: the loop completes, every
iteration is recorded, the model's SQL is validated (rejected or run), and nothing crashes.
"""

import json
import os

import pytest

from codegraph.refine.loop import refine
from codegraph.llm import OpenAIChat
from codegraph.refine.task import load_task
from conftest import EXAMPLE

BASE_URL = os.environ.get("CODEGRAPH_E2E_BASE_URL")
MODEL = os.environ.get("CODEGRAPH_E2E_MODEL")

pytestmark = pytest.mark.skipif(not (BASE_URL and MODEL), reason="opt-in: set CODEGRAPH_E2E_BASE_URL and _MODEL")


def test_loop_survives_a_real_small_model(tmp_path):
    task = load_task(EXAMPLE / "task.json")
    task.starting_code = None  # the model writes it from the description
    task.limits.iterations = 3
    result = refine(task, OpenAIChat(MODEL, BASE_URL, "not-needed", timeout_s=300))
    assert 1 <= len(result.iterations) <= 3
    assert result.prompt_tokens > 0
    for it in result.iterations:
        for r in it.retrievals:
            assert r["source"] in {"rule", "llm", "hybrid", "local", "none"}
            for attempt in r["attempts"]:
                assert attempt["error"] is None or attempt["error"]  # rejected with a reason, or ran
    (tmp_path / "trace.json").write_text(json.dumps(result.to_dict(), default=str))

"""The benchmark report regenerates from results files alone, and the committed one is current."""

import json
from pathlib import Path

import pytest

from benchmarks import report
from benchmarks.runner import ResultStore

ROOT = Path(__file__).parent.parent


def _sample(success, success_at, rate):
    return {"success": success, "success_at": success_at, "lint_clean": success, "test_rate": rate, "dir": 0.5,
            "iterations": 3, "seconds": 1.5, "prompt_tokens": 50, "completion_tokens": 5,
            "stop_reason": "lint clean and tests pass" if success else "iterations", "note": None}


def _results(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    sanity = ResultStore(results / "repoclassbench" / "sanity")
    for task, sane, removed in (("acme__lib-1_Widget", True, 0), ("acme__lib-1_Gadget", False, 3)):
        sanity.write(task, {"task_id": task, "repo": "acme/lib", "commit": "0123456789ab", "environment": "e1",
                            "install_seconds": 12.5, "venv_mb": 80, "sane": sane,
                            "mapping": {"flipped": task.split("_")[-1].swapcase(), "class": task.split("_")[-1],
                                        "file": "lib/x.py", "body_similarity": 1.0, "tests": "3 ids for 3 expected"},
                            "ground_truth": {"passed": 3, "failed": 0, "skipped": 0, "expected": 3, "tail": ["3 passed"]},
                            "removed": {"passed": removed, "failed": 3 - removed, "skipped": 0, "expected": 3}})
    (results / "repoclassbench" / "not_run.json").write_text(json.dumps({"big/repo": {"tasks": 4, "why": "too big"}}))
    runs = ResultStore(results / "repoclassbench" / "runs" / "replay-cocogen")
    runs.write("acme__lib-1_Widget", {"task_id": "acme__lib-1_Widget", "repo": "acme/lib",
                                      "samples": [_sample(True, 1, 1.0)]})
    repair = ResultStore(results / "repair" / "offline-cocogen")
    for i, ok in enumerate((True, True, False, False)):
        repair.write(f"p:{i}", {"task_id": f"p:{i}", "category": "typo" if i % 2 else "import", "corpus": "proj",
                                "samples": [_sample(ok, 2 if ok else None, None)]})
    return results


def test_the_report_and_plots_come_from_the_results_files(tmp_path):
    out = tmp_path / "docs"
    report.main(["--results", str(_results(tmp_path)), "--out", str(out)])
    text = (out / "report.md").read_text()
    assert "| acme/lib | 2 | 1 | 0 | 1 | 12.5 | 80 |  |" in text
    assert "| big/repo | 4 | 0 |" in text and "not run: too big" in text
    assert "acme__lib-1_Gadget" in text.split("Tasks that are not sane")[1].split("###")[0]
    assert "| replay-cocogen | 1 | 1 | 1 |" in text
    assert "| offline-cocogen | 4 | 4 | 0.5 |" in text and "0 → 0.5 → 0.5" in text
    for name in report.PLOTS:
        assert (out / "img" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(not (ROOT / "benchmarks" / "results").is_dir(), reason="no results in this checkout")
def test_the_committed_report_is_current():
    current = report.render_markdown(report.collect(ROOT / "benchmarks" / "results"))
    assert (ROOT / "docs" / "report.md").read_text() == current, "run: python -m benchmarks.report"

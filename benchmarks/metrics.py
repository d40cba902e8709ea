"""Metrics shared by the repair benchmark and RepoClassBench.

A *sample* is one refine run on one task (one model answer and its repairs); a *task record*
holds all samples of a task. Every figure the report prints is computed here from those records,
so a results directory always yields the same numbers.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from math import comb


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): the chance that at least one of k samples drawn without
    replacement from n, of which c are correct, is correct: 1 - C(n-c, k) / C(n, k)."""
    if not 0 <= c <= n or k < 1:
        raise ValueError(f"pass@k needs 0 <= c <= n and k >= 1, got n={n} c={c} k={k}")
    if k > n:
        raise ValueError(f"pass@{k} needs at least {k} samples per task, got {n}")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def dependency_invocation_rate(provided: Iterable[str], code: str) -> float | None:
    """RepoExec's DIR: the share of the repository definitions the reference uses (qualnames) that
    the candidate invokes, matched by their last name followed by a call or attribute access."""
    provided = set(provided)
    if not provided:
        return None
    used = {q for q in provided if re.search(rf"\b{re.escape(q.rpartition('.')[2])}\b\s*[(.]", code)}
    return len(used) / len(provided)


def reference_dependencies(db_path, qualname: str, *, with_members: bool = False) -> set[str]:
    """The project definitions the reference `qualname` calls by name, from the graph (DIR's
    denominator, as its numerator reads the code): not what Python runs for it (`C()`'s __init__,
    len(x)'s __len__, a property's getter) nor what a call may reach through a parameter or an
    override. With `with_members` (a class), calls from its methods count and calls to its own
    members do not."""
    from codegraph.db import connect_readonly
    from codegraph.schema import PROJECT_CALL_SQL

    con = connect_readonly(db_path)
    try:
        rows = con.execute(
            f"""SELECT DISTINCT resolved_callee FROM calls
               WHERE (caller_qualname = $q OR ($members AND starts_with(caller_qualname, $q || '.')))
                 AND {PROJECT_CALL_SQL} AND resolved_callee IS NOT NULL AND kind IN ('call', 'decorator')
                 AND callee_name = split_part(resolved_callee, '.', -1)
                 AND NOT ($members AND starts_with(resolved_callee, $q || '.'))""",
            {"q": qualname, "members": with_members}).fetchall()
    finally:
        con.close()
    return {r[0] for r in rows}


def sample_from_run(run, *, test_rate: float | None = None, dir_: float | None = None) -> dict:
    """The fields a sample keeps from a refine RefineResult; `success_at` is the first iteration
    whose code passed lint and the tests, which gives the pass rate after each iteration."""
    success_at = next((it.number for it in run.iterations
                       if it.tests and it.tests.get("passed") and it.lint_clean), None)
    if success_at is None and run.success:
        success_at = run.iterations[-1].number
    return {"success": run.success, "lint_clean": run.lint_clean, "tests_passed": run.tests_passed,
            "test_rate": test_rate, "iterations": len(run.iterations), "success_at": success_at,
            "stop_reason": run.stop_reason, "seconds": round(run.seconds, 2),
            "prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens, "dir": dir_,
            "repairs": [r for it in run.iterations for r in it.repairs]}


def _mean(values: list[float]) -> float | None:
    return round(statistics.mean(values), 3) if values else None


def summarise(records: list[dict], iterations: int, ks: Iterable[int] = (1, 3, 5, 10)) -> dict:
    """Aggregate task records ({"samples": [sample, ...], ...}) into the benchmark's figures."""
    records = [r for r in records if r.get("samples")]
    if not records:
        return {"tasks": 0}
    samples = [s for r in records for s in r["samples"]]
    n_min = min(len(r["samples"]) for r in records)
    out: dict = {"tasks": len(records), "samples": len(samples)}
    for k in ks:
        if k <= n_min:
            out[f"pass@{k}"] = round(statistics.mean(
                pass_at_k(len(r["samples"]), sum(s["success"] for s in r["samples"]), k) for r in records), 3)
    test_rates = [s["test_rate"] for s in samples if s.get("test_rate") is not None]
    dirs = [s["dir"] for s in samples if s.get("dir") is not None]
    out.update({
        "test_rate": _mean(test_rates),
        "lint_clean_rate": _mean([float(s["lint_clean"]) for s in samples]),
        "dir": _mean(dirs),
        "pass_rate_after_iteration": [
            round(sum(1 for s in samples if s["success_at"] and s["success_at"] <= k) / len(samples), 3)
            for k in range(1, iterations + 1)],
        "iterations_mean": _mean([s["iterations"] for s in samples]),
        "seconds_p50": round(statistics.median(s["seconds"] for s in samples), 2),
        "seconds_total": round(sum(s["seconds"] for s in samples), 1),
        "prompt_tokens": sum(s["prompt_tokens"] for s in samples),
        "completion_tokens": sum(s["completion_tokens"] for s in samples),
    })
    return out


def group_by(records: list[dict], key: str) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(str(r.get(key)), []).append(r)
    return dict(sorted(groups.items()))

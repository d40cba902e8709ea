"""The benchmark report and its plots, regenerated from the results JSON alone.

    python -m benchmarks.report [--results benchmarks/results] [--out docs]

Writes docs/report.md and docs/img/*.png. Every number comes from benchmarks.metrics applied to
the per-task files, so rerunning a benchmark (or adding a model's run) and then this command is
all it takes to update the report. tests/test_report.py checks that docs/report.md is current.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from benchmarks.metrics import group_by, summarise
from benchmarks.runner import ResultStore

HERE = Path(__file__).parent
PLOTS = ("pass_after_iteration.png", "repoclassbench_sanity.png")


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"
    if isinstance(value, list):
        return " → ".join(_fmt(v) for v in value)
    return str(value)


def _table(header: list[str], rows: list[list], drop_empty: bool = False) -> list[str]:
    if drop_empty and rows:  # metrics no run has (pass@5 with one sample per task)
        keep = [i for i in range(len(header)) if any(row[i] is not None for row in rows)]
        header, rows = [header[i] for i in keep], [[row[i] for i in keep] for row in rows]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(_fmt(c).replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in rows]
    return out + [""]


def _runs(directory: Path) -> dict[str, list[dict]]:
    if not directory.is_dir():
        return {}
    return {d.name: ResultStore(d).load() for d in sorted(directory.iterdir()) if d.is_dir()}


def _iterations(records: list[dict]) -> int:
    """The run's iteration limit (curves stay flat after a run stops early), else the most used."""
    configured = [r["run"].get("iterations") for r in records if isinstance(r.get("run"), dict)]
    used = max((s.get("iterations", 1) for r in records for s in r.get("samples", [])), default=1)
    return max([c for c in configured if c] or [used])


SUMMARY_COLUMNS = ["tasks", "samples", "pass@1", "pass@3", "pass@5", "pass@10", "test_rate", "lint_clean_rate", "dir",
                   "pass_rate_after_iteration", "iterations_mean", "seconds_p50", "prompt_tokens",
                   "completion_tokens"]


def _summary_rows(runs: dict[str, list[dict]], key: str | None = None) -> list[list]:
    rows = []
    for name, records in runs.items():
        groups = group_by(records, key) if key else {"all": records}
        for group, members in groups.items():
            s = summarise(members, _iterations(records))
            rows.append([name, *([group] if key else []), *(s.get(c) for c in SUMMARY_COLUMNS)])
    return rows


def collect(results: Path) -> dict:
    rcb = results / "repoclassbench"
    not_run = json.loads((rcb / "not_run.json").read_text()) if (rcb / "not_run.json").is_file() else {}
    return {"sanity": ResultStore(rcb / "sanity").load(), "not_run": not_run,
            "rcb_runs": _runs(rcb / "runs"), "repair_runs": _runs(results / "repair"),
            "repair_projects": {p.name.removesuffix(".projects.json"): json.loads(p.read_text())
                                for p in sorted((results / "repair").glob("*.projects.json"))}}


def _sanity_section(data: dict) -> list[str]:
    lines = ["## RepoClassBench: does the harness measure what it claims?", "",
             "Per task: the upstream class passes the expected tests (`ground truth`), and replacing it with "
             "`class X: pass` makes some of them fail (`removed`). Install time and disk are per virtualenv "
             "(one per worker and commit).", ""]
    rows = []
    for repo, records in group_by(data["sanity"], "repo").items():
        envs = {r["environment"]: r for r in records if "install_seconds" in r}
        errors = sorted({r["error"].splitlines()[0] for r in records if r.get("error")})
        rows.append([repo, len(records), sum(bool(r.get("sane")) for r in records),
                     sum(1 for r in records if r.get("ground_truth", {}).get("failed")),
                     sum(1 for r in records if r.get("removed") and r["removed"]["passed"] >= r["ground_truth"]["passed"]
                         and not r["ground_truth"]["failed"]),
                     max((e["install_seconds"] for e in envs.values()), default=None),
                     max((e["venv_mb"] for e in envs.values()), default=None), "; ".join(errors) or ""])
    for repo, reason in sorted(data["not_run"].items()):
        rows.append([repo, reason.get("tasks"), 0, None, None, None, None, f"not run: {reason['why']}"])
    lines += _table(["repository", "tasks", "sane", "ground truth fails", "removal still passes",
                     "install s", "venv MB", "notes"], rows)
    lines += ["Tasks that are not sane:", ""]
    bad = [[r["task_id"], _fmt(r.get("ground_truth", {}).get("passed")) + "/" + _fmt(r.get("ground_truth", {}).get("expected")),
            _fmt(r.get("removed", {}).get("passed")), "; ".join(r.get("ground_truth", {}).get("tail", [])[-1:])
            or (r.get("error") or "").splitlines()[0]] for r in data["sanity"] if not r.get("sane")]
    lines += _table(["task", "ground truth passed", "removed passed", "last line"], bad) if bad else ["none", ""]
    mapping = [[r["task_id"], r["mapping"]["flipped"], r["mapping"]["class"], r["mapping"]["file"],
                r["mapping"]["body_similarity"], r["mapping"]["tests"], r["commit"][:10]]
               for r in data["sanity"] if r.get("mapping")]
    lines += ["### Case-flipped names mapped to upstream", "",
              "`body similarity` compares the upstream class with the data's ground truth, case-insensitively "
              "(1 = identical).", ""]
    lines += _table(["task", "flipped", "upstream class", "file", "body similarity", "test ids", "commit"], mapping)
    return lines


def render_markdown(data: dict) -> str:
    lines = ["# Benchmark report", "",
             "Generated by `python -m benchmarks.report` from `benchmarks/results/`; do not edit by hand. "
             "The commands that produced the results are in [benchmarks.md](benchmarks.md).", "",
             "Metrics: pass@k is the unbiased estimator over each task's samples; test rate is the share of "
             "expected tests that pass; DIR is the share of the project definitions the reference uses that "
             "the candidate calls; `pass after iteration` is the share of samples lint-clean and passing "
             "after refine iteration 1, 2, ...", ""]
    if data["sanity"] or data["not_run"]:
        lines += _sanity_section(data)
    header = ["run", *SUMMARY_COLUMNS]
    if data["rcb_runs"]:
        lines += ["## RepoClassBench: refine runs", ""]
        lines += _table(header, _summary_rows(data["rcb_runs"]), drop_empty=True)
        lines += _table(["run", "repo", *SUMMARY_COLUMNS], _summary_rows(data["rcb_runs"], "repo"), drop_empty=True)
        for name, records in data["rcb_runs"].items():
            lines += [f"### {name}", ""]
            rows = []
            for r in records:
                samples = r.get("samples", [])
                rows.append([r["task_id"], r.get("error", "").splitlines()[0] if r.get("error") else "",
                             " ".join("✓" if s["success"] else "✗" for s in samples),
                             [s["test_rate"] for s in samples], [s.get("dir") for s in samples],
                             "; ".join(s.get("note") or "" for s in samples[:1]),
                             "; ".join(s["stop_reason"] for s in samples[:1])])
            lines += _table(["task", "error", "success", "test rate", "DIR", "input", "stop"], rows)
    if data["repair_runs"]:
        lines += ["## Repair benchmark", ""]
        lines += _table(header, _summary_rows(data["repair_runs"]), drop_empty=True)
        lines += ["By category:", ""] + _table(["run", "category", *SUMMARY_COLUMNS],
                                                _summary_rows(data["repair_runs"], "category"), drop_empty=True)
        lines += ["By project:", ""] + _table(["run", "project", *SUMMARY_COLUMNS],
                                               _summary_rows(data["repair_runs"], "corpus"), drop_empty=True)
        for name, projects in data["repair_projects"].items():
            lines += [f"Projects of {name}:", ""]
            lines += _table(["project", "requirement", "own suite passes", "suite", "files", "cases"],
                            [[k, p["requirement"], p["suite_passes"], "; ".join(p["suite_tail"]), p.get("files"),
                              p.get("cases")] for k, p in projects.items()])
    lines += ["## Plots", "", *(f"![{p}](img/{p})" for p in PLOTS), ""]
    return "\n".join(lines)


def plot(data: dict, out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = []
    fig, ax = plt.subplots(figsize=(7, 4))
    for prefix, runs in (("repair", data["repair_runs"]), ("repoclassbench", data["rcb_runs"])):
        for name, records in runs.items():
            curve = summarise(records, _iterations(records)).get("pass_rate_after_iteration")
            if curve:
                ax.plot(range(1, len(curve) + 1), curve, marker="o", label=f"{prefix}: {name}")
    ax.set(xlabel="refine iteration", ylabel="pass rate (lint-clean and tests pass)", ylim=(0, 1.02),
           title="Pass rate after each refine iteration, per run and mode")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.grid(alpha=0.3)
    if ax.lines:
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    written.append(out / PLOTS[0])
    fig.savefig(written[-1], dpi=110, metadata={"Software": None})
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 3.5))
    groups = group_by(data["sanity"], "repo")
    names = list(groups) + sorted(data["not_run"])
    sane = [sum(bool(r.get("sane")) for r in groups.get(n, [])) for n in names]
    other = [len(groups[n]) - s if n in groups else data["not_run"][n].get("tasks", 0) for n, s in zip(names, sane)]
    ax.barh(names, sane, color="tab:green", label="sane")
    ax.barh(names, other, left=sane, color="tab:gray", label="not sane or not run")
    ax.set(xlabel="tasks", title="RepoClassBench sanity per repository")
    ax.legend(fontsize=7)
    fig.tight_layout()
    written.append(out / PLOTS[1])
    fig.savefig(written[-1], dpi=110, metadata={"Software": None})
    plt.close(fig)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=HERE / "results")
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs")
    args = parser.parse_args(argv)
    data = collect(args.results)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text(render_markdown(data), encoding="utf-8")
    for path in plot(data, args.out / "img"):
        print(f"wrote {path}")
    print(f"wrote {args.out / 'report.md'}")


if __name__ == "__main__":
    main()

"""Answer mined name fixes with whatever codegraph this interpreter has (benchmarks/name_fixes.py).

    python benchmarks/name_fixes_eval.py CASES.json ROOT DB OUT.json

ROOT is the repository at the cases' parent commit; it is indexed into DB with the defaults (the
library layer and the embeddings, as `codegraph index` builds it). Each case's message is
answered as `codegraph diagnose` answers it (the cards: what the rules found for the diagnostic
on that line), and the task context of the enclosing function is built from its docstring and
place, its own body left out. Uses only what every codegraph version has: index_repository,
diagnose, render and task_context.
"""

import json
import re
import sys
from pathlib import Path


_HEADER = re.compile(r"^lines? [\d, ]+: ")  # the diagnostic itself: pylint's words, not the graph's


def _code(text: str) -> str:
    """What the model is shown of the graph: names, signatures, import lines; not the message
    (pylint's `maybe 'path'?`), nor file paths, docstrings or why a line was chosen."""
    kept = []
    for line in (text or "").splitlines():
        stripped = line.strip()
        if _HEADER.match(line) or stripped.startswith(('"""', "(found by")):
            continue
        kept.append(line.split("  # ", 1)[0])
    return "\n".join(kept)


def _has(text: str, names: list[str]) -> bool:
    code = _code(text)
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", code) for n in names)


def main(cases_path, root, db_path, out_path):
    from codegraph.indexer import index_repository
    from codegraph.retrieval.context import render
    from codegraph.retrieval.diagnose import diagnose
    from codegraph.retrieval.engine import Retriever
    from codegraph.retrieval.task_context import task_context

    root, db_path = Path(root), Path(db_path)
    index_repository(root, db_path)
    retriever = Retriever(db_path)
    out = []
    try:
        for case in json.loads(Path(cases_path).read_text()):
            answer = {key: case[key] for key in ("repo", "commit", "path", "line", "message_id", "names")}
            try:
                report = diagnose(root / case["path"], db_path, lines=(case["line"], case["line"]),
                                  retriever=retriever)
                mine = [r for r in report.retrievals
                        if r.diagnostic.line == case["line"] and r.diagnostic.symbol == case["symbol"]]
                cards = render(mine, 1500) if mine else ""
            except Exception as exc:  # noqa: BLE001 - a case the tool cannot answer is a miss, with why
                mine, cards, answer["error"] = [], "", f"{type(exc).__name__}: {exc}"[:300]
            context = ""
            function = case.get("function")
            if function:
                words = " ".join(re.findall(r"[A-Za-z]+", function["symbol"].rpartition(".")[2]))
                try:
                    context = task_context(db_path, function["docstring"] or words, case["path"],
                                           function["symbol"], budget_tokens=2000).text
                except Exception as exc:  # noqa: BLE001
                    answer["context_error"] = f"{type(exc).__name__}: {exc}"[:300]
            answer.update(answered=bool(mine), in_cards=_has(cards, case["names"]),
                          in_context=_has(context, case["names"]), cards_tokens=(len(cards) + 3) // 4)
            out.append(answer)
    finally:
        retriever.close()
    Path(out_path).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])

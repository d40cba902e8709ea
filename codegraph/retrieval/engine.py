"""Diagnostics in, project context out: rules first, then LLM-written SQL, then lexical search."""

from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

import duckdb
import numpy as np

from ..db import check_schema, connect_readonly, get_meta, run_query
from ..query_worker import QueryWorker
from ..errors import CodegraphError, QueryError, QueryTimeout
from ..llm import ChatModel
from ..semantic.search import search
from ..semantic.models import EmbeddingError
from ..semantic.store import model_from_meta
from .candidate import Candidate, GraphNames
from ..languages import Diagnostic, RuleContext
from .rules import load_template
from .sqlguard import Schema, run_untrusted

_IDENT_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = {"self", "cls", "the", "a", "an", "of", "in", "for", "to", "is", "and", "or", "not", "no", "has",
         "def", "return", "import", "from", "with", "value", "call", "function", "method", "member",
         "instance", "module", "variable", "undefined", "argument", "none", "true", "false"}


def query_terms(*texts: str, limit: int = 12) -> list[str]:
    """Lower-case identifier parts of free text: `parseFloat self.parse_float` -> parse, float."""
    out: list[str] = []
    for text in texts:
        for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text or ""):
            for part in [word.lower(), *(p.lower() for chunk in word.split("_") for p in _IDENT_PARTS.findall(chunk))]:
                if len(part) > 2 and part not in _STOP and part not in out:
                    out.append(part)
    return out[:limit]


@dataclass
class Retrieval:
    diagnostic: Diagnostic
    source: str  # rule | llm | hybrid | local | none
    rule: str | None = None
    sql: str | None = None
    params: dict = field(default_factory=dict)
    columns: list[str] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    attempts: list[dict] = field(default_factory=list)  # LLM SQL tried, with why it failed
    error: str | None = None
    elapsed_ms: float = 0.0
    local_context: str | None = None

    def to_dict(self) -> dict:
        data = asdict(self)
        data["diagnostic"] = self.diagnostic.to_dict()
        return data


MAX_RETRIEVED = 60  # diagnostics looked up per file and round (retrieve_all)
# Templates that return a scope (a class's members, a module's names): more rows, ranked by rank().
# import_error stays in its SQL order: a module path that does not exist is a spelling question,
# and the line's meaning pulled the parent package (`urllib` for `urllib.erorr`) to the top.
SCOPE_TEMPLATES = frozenset({"members_like", "names_in_module_like", "undefined_name", "class_members",
                             "named_definitions", "java_members_like", "java_names"})
SCOPE_LIMIT = 40

LLM_SYSTEM = """You write one DuckDB SELECT statement over a code-graph database of a Python repository.
Return only the SQL, in a ```sql block. Read-only: no files, no settings, one statement.

Tables (columns):
{schema}

Table macros: members_of(cls) (inherited members included; columns class, name, kind, signature,
defined_in, mro_position, qualname, ...), ancestors_of(cls), subclasses_of(cls), names_in_module(mod),
definitions_named(name), signature_of(qualname), callers_of(qualname), callees_of(qualname),
import_candidates(name). Rank near-miss names with jaro_winkler_similarity(a, b) or levenshtein(a, b).

Examples:
-- "Instance of 'Cart' has no 'ad' member"
SELECT qualname, kind, signature FROM members_of('Cart') ORDER BY jaro_winkler_similarity(name, 'ad') DESC LIMIT 5;
-- "Undefined variable 'JSONDecoder'"
SELECT import_line, qualname FROM import_candidates('JSONDecoder') LIMIT 5;
-- "method already defined line 12" for def parse in class Item
SELECT qualname, signature, start_line FROM symbols WHERE class_qualname LIKE '%.Item' AND name = 'parse';
"""

LLM_USER = """Pylint reported on the candidate code:
{symbol} ({msg_id}) line {line}: {message}

The candidate's lines around it:
{excerpt}

Write the SQL that fetches the project definitions needed to fix this."""

_SQL_BLOCK = re.compile(r"```(?:sql)?\s*\n(.*?)```", re.S | re.I)


def extract_sql(text: str) -> str:
    """The SQL in a model's answer: a fenced block if there is one, else the text from SELECT/WITH."""
    blocks = _SQL_BLOCK.findall(text or "")
    if blocks:
        return blocks[0].strip()
    m = re.search(r"\b(SELECT|WITH)\b.*", text or "", re.S | re.I)
    return m.group(0).strip() if m else (text or "").strip()


class Retriever:
    """Holds one read-only connection to the graph; answers diagnostics for candidates.

    Every diagnostic goes down one fallback chain (the rules for its message, LLM-written SQL,
    lexical search), and every step that fails or finds nothing is recorded in `attempts` while
    the chain goes on: a broken template or a timeout never ends the search."""

    def __init__(self, db_path: str | Path, *, model: ChatModel | None = None, limit: int = 5,
                 llm_retries: int = 2, timeout_s: float = 2.0) -> None:
        self.db_path = Path(db_path)
        self.con = connect_readonly(self.db_path)
        try:
            check_schema(self.con, self.db_path)
        except CodegraphError:
            self.con.close()
            raise
        self.graph = GraphNames(self.con)
        self.model = model
        self.limit = limit
        self.llm_retries = llm_retries
        self.timeout_s = timeout_s
        self.deadline: float | None = None
        self.description: str | None = None
        self._embedder = None
        self._schema: Schema | None = None
        self._templates: dict[str, str] = {}
        self._worker: QueryWorker | None = None

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
        self.con.close()

    def __enter__(self) -> "Retriever":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def schema(self) -> Schema:
        if self._schema is None:
            self._schema = Schema.from_connection(self.con)
        return self._schema

    def schema_text(self) -> str:
        rows = self.con.execute(
            "SELECT table_name, string_agg(column_name, ', ' ORDER BY ordinal_position) FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_name NOT IN ('meta', 'skipped_files') GROUP BY 1 ORDER BY 1"
        ).fetchall()
        return "\n".join(f"{t}({c})" for t, c in rows)

    def _template(self, name: str) -> str:
        if name not in self._templates:
            self._templates[name] = load_template(name)
        return self._templates[name]

    def _time_left(self) -> float:
        """Seconds a query may take: the per-query limit, or less when the caller's deadline is near."""
        if self.deadline is None:
            return self.timeout_s
        left = self.deadline - time.monotonic()
        if left <= 0.05:
            raise QueryTimeout("no time left for retrieval")
        return min(self.timeout_s, left)

    def run_template(self, name: str, params: dict) -> tuple[list[str], list[dict]]:
        limit = SCOPE_LIMIT if name in SCOPE_TEMPLATES else self.limit
        result = run_query(self.con, self._template(name), {**params, "limit": limit},
                           max_rows=limit, timeout_s=self._time_left())
        return result.columns, [dict(zip(result.columns, row)) for row in result.rows]

    # -- ranking inside a scope ----------------------------------------------------------------------
    def _model(self):
        if self._embedder is None:
            meta = get_meta(self.con)
            model_id = meta.get("embedding_model") or ""  # a model that runs here; never a network call per diagnostic
            try:
                self._embedder = model_from_meta(meta) if model_id and not model_id.startswith("openai:") else False
            except EmbeddingError:  # the learned model the vectors come from is not installed here
                self._embedder = False
        return self._embedder or None

    def rank(self, rows: list[dict], d: Diagnostic, candidate: Candidate) -> list[dict]:
        """A scope's rows (a class's members, a module's names) by a blend: spelling (the SQL's
        score), the meaning of the offending line and the task next to each row's text (the
        embedding), and graph proximity (the candidate's own class and module first)."""
        if len(rows) < 2:
            return rows
        line = candidate.line_at(d.line)
        meaning = self._meaning(rows, f"{d.message} {line} {self.description or ''}")
        klass = candidate.enclosing_class(d.line) or ""
        for row, similar in zip(rows, meaning):
            qualname = row.get("qualname") or ""
            near = 1.0 if (klass and qualname.startswith(klass + ".")) or qualname.startswith(candidate.module + ".") \
                else 0.5 if row.get("defined_in") else 0.0
            spelling = float(row.get("score") or 0)
            # a near-identical spelling (a typo, Jaro-Winkler >= 0.92) outweighs any meaning
            typo = 0.3 if spelling >= 0.92 else 0.0
            row["rank"] = round(0.55 * min(spelling, 1.0) + 0.3 * similar + 0.15 * near + typo, 4)
        exact = [r for r in rows if r.get("match") == "exact"]
        rest = sorted((r for r in rows if r.get("match") != "exact"), key=lambda r: -r["rank"])
        return exact + rest

    def _meaning(self, rows: list[dict], text: str) -> list[float]:
        model = self._model()
        qualnames = [r.get("qualname") for r in rows]
        if model is None:
            return [0.0] * len(rows)
        found = dict(self.con.execute("""
            SELECT s.qualname, e.vector FROM symbols s JOIN embeddings e USING (id)
            WHERE list_contains($q, s.qualname)""", {"q": [q for q in qualnames if q]}).fetchall())
        query = model.embed([text])[0]
        scores = [float(np.dot(query, np.asarray(found[q], np.float32))) if q in found else 0.0 for q in qualnames]
        top = max(scores, default=0.0) or 1.0
        return [max(0.0, s) / top for s in scores]

    def known_import(self, module: str) -> bool:
        """Does the repository import this module elsewhere (queries/known_import.sql)? Then a
        checker that cannot find it misses a dependency, the candidate did not make it up."""
        try:
            return bool(self.run_template("known_import", {"module": module})[1])
        except QueryError:
            return False

    def retrieve_all(self, candidate: Candidate, diagnostics: Iterable[Diagnostic],
                     deadline: float | None = None, description: str | None = None) -> list[Retrieval]:
        """Every diagnostic's retrieval, the first MAX_RETRIEVED of them looked up (a context of a
        few thousand tokens shows a few dozen; a file with thousands of errors would take minutes);
        `description` (the task's) helps rank what a scope offers."""
        self.deadline, self.description = deadline, description
        try:
            return [self.retrieve(candidate, d) if i < MAX_RETRIEVED else
                    Retrieval(d, "none", error=f"not looked up: the first {MAX_RETRIEVED} messages fill the context")
                    for i, d in enumerate(diagnostics)]
        finally:
            self.deadline = self.description = None

    def retrieve(self, candidate: Candidate, diagnostic: Diagnostic) -> Retrieval:
        started = time.perf_counter()
        result = self._retrieve(candidate, diagnostic)
        result.elapsed_ms = (time.perf_counter() - started) * 1000
        return result

    def _retrieve(self, candidate: Candidate, d: Diagnostic) -> Retrieval:
        ctx = RuleContext(candidate, self.graph)
        attempts: list[dict] = []
        for rule in candidate.language.rules_for(d.symbol) if candidate.language else ():
            try:
                params = rule.params(d, ctx)
            except (duckdb.Error, CodegraphError) as exc:
                attempts.append({"rule": rule.template, "error": f"parameters: {exc}"})
                continue
            if params is None:
                continue
            if rule.template is None:
                return Retrieval(d, "local", rule.symbol, params=params, attempts=attempts,
                                 local_context=candidate.excerpt(d.line))
            try:
                columns, rows = self.run_template(rule.template, params)
            except (QueryError, OSError) as exc:
                attempts.append({"rule": rule.template, "params": params, "error": str(exc)})
                continue
            if rows:
                if rule.template in SCOPE_TEMPLATES:
                    rows = self.rank(rows, d, candidate)
                return Retrieval(d, "rule", rule.template, self._template(rule.template), params, columns, rows,
                                 attempts)
            attempts.append({"rule": rule.template, "params": params, "error": None, "rows": 0})
        if self.model is not None:
            found = self._llm(candidate, d)
            attempts += found.attempts
            if found.rows:
                found.attempts = attempts
                return found
        lexical = self._lexical(candidate, d)
        lexical.attempts = attempts + lexical.attempts
        return lexical

    def _llm(self, candidate: Candidate, d: Diagnostic) -> Retrieval:
        messages = [
            {"role": "system", "content": LLM_SYSTEM.format(schema=self.schema_text())},
            {"role": "user", "content": LLM_USER.format(symbol=d.symbol, msg_id=d.msg_id, line=d.line,
                                                         message=d.message, excerpt=candidate.excerpt(d.line))},
        ]
        attempts: list[dict] = []
        for _ in range(1 + self.llm_retries):
            try:
                deadline = None if self.deadline is None else self.deadline
                answer = self.model.complete(messages, max_tokens=400, deadline=deadline)
            except CodegraphError as exc:  # the endpoint failed: record it and fall back
                attempts.append({"sql": None, "error": f"model: {exc}"})
                break
            sql = extract_sql(answer.text)
            try:
                if self._worker is None:
                    self._worker = QueryWorker(self.db_path)
                result = run_untrusted(self._worker, sql, self.schema, max_rows=self.limit,
                                       timeout_s=self._time_left())
            except QueryError as exc:
                attempts.append({"sql": sql[:2000], "error": str(exc)})
                messages += [{"role": "assistant", "content": answer.text[:4000]},
                             {"role": "user", "content": f"That SQL failed: {exc}\nSend a corrected SELECT."}]
                continue
            attempts.append({"sql": sql, "error": None, "rows": len(result.rows)})
            rows = [dict(zip(result.columns, row)) for row in result.rows]
            if rows:
                return Retrieval(d, "llm", None, sql, {}, result.columns, rows, attempts)
            messages += [{"role": "assistant", "content": answer.text[:4000]},
                         {"role": "user", "content": "That SQL returned no rows. Try a broader query."}]
        return Retrieval(d, "none", attempts=attempts)

    def _lexical(self, candidate: Candidate, d: Diagnostic) -> Retrieval:
        """The last resort: hybrid search (BM25 and the embedding, public code first) over the
        message's names, the offending line and the task, nudged towards the candidate's module
        and what it imports; each row says why it came."""
        line = candidate.line_at(d.line)
        quoted = " ".join(re.findall(r"'([^']+)'", d.message))
        query = " ".join(filter(None, [quoted, line.strip(), self.description]))
        if not query_terms(query):
            return Retrieval(d, "none")
        try:
            hits = search(self.con, self.db_path, query, 3 * self.limit)
        except (CodegraphError, duckdb.Error) as exc:
            return Retrieval(d, "none", "hybrid", attempts=[{"rule": "hybrid", "error": str(exc)}], error=str(exc))
        imported = {r[0] for r in self.con.execute(
            "SELECT DISTINCT resolved_module FROM imports WHERE module = $m AND resolved_module IS NOT NULL",
            {"m": candidate.module}).fetchall()}
        rows = []
        for hit in hits:
            module = hit["qualname"].rpartition(".")[0]
            near = module == candidate.module or module in imported or \
                any(hit["qualname"].startswith(m + ".") for m in imported | {candidate.module})
            name = hit["name"]
            rows.append({**hit, "name": name, "score": round(hit["score"] * (1.2 if near else 1.0), 4),
                         "match": "hybrid", "import_line": None,
                         "reason": f"search: {hit['why']}" + ("; in or imported by the candidate's module" if near else "")})
        rows.sort(key=lambda r: -r["score"])
        return Retrieval(d, "hybrid" if rows else "none", "hybrid", None, {"query": query}, list(rows[0]) if rows else [],
                         rows[: self.limit])

"""What the MCP tools do, without MCP: one graph, its index, the limits, and four safe operations.

:class:`GraphService` holds an open engine and answers the four tools of
``cypherturn mcp`` with pydantic results. Every failure an assistant can cause
(unknown label, unknown key, a write, an engine error) raises
:class:`ToolInputError` with one message naming what went wrong and what the
graph has instead; the MCP layer turns it into a tool error result. Nothing
here writes to the graph: ``read_cypher`` goes through
:meth:`~cypherturn.graph.GraphEngine.execute` (the tokenizer write guard, then
the engine's read-only mode) and ``ask`` through :func:`cypherturn.api.ask`.
"""

from __future__ import annotations

import difflib
import threading
from typing import Any

from pydantic import BaseModel, Field

from cypherturn import api
from cypherturn.errors import CypherTurnError, QueryError, WriteRefusedError
from cypherturn.graph import (
    DEFAULT_ROW_CAP,
    DEFAULT_TIMEOUT_S,
    GraphEngine,
    GraphSchema,
    QueryResult,
    find_write_clause,
    render_schema_prompt,
)
from cypherturn.grounding import (
    Finding,
    GraphIndex,
    check_query,
    error_hint,
    graph_index,
    ground_values,
    repair_query,
)
from cypherturn.models import ChatModel
from cypherturn.strategies import Attempt, StrategyResult

ASK_STRATEGY = "ras+"
"""The strategy of the ``ask`` tool: RAS grounded in the schema and stored values."""


class ToolInputError(CypherTurnError):
    """A tool call the graph cannot serve: bad arguments, a write, an engine refusal.

    The message is written for the assistant that made the call: it names the
    offending argument or clause and, where it can, what the graph has instead.
    """


class LabelView(BaseModel):
    """One node label: how many nodes carry it and every property key with its type."""

    label: str
    count: int
    properties: dict[str, str] = Field(description="Property key -> value type (STRING, ...).")


class RelationshipTypeView(BaseModel):
    """One relationship type: how many relationships and every property key with its type."""

    type: str
    count: int
    properties: dict[str, str]


class PatternView(BaseModel):
    """A ``(source)-[:TYPE]->(target)`` pattern that occurs in the graph."""

    source: str
    type: str
    target: str


class SchemaView(BaseModel):
    """The graph's schema, whole or projected on some labels.

    Attributes:
        graph: the graph's name on the engine.
        labels: the labels shown (all, or those asked for).
        relationship_types: types that occur in a shown pattern (all types when not projected).
        patterns: patterns with a shown label at either end.
        text: the same schema as the compact prompt text Text2Cypher models are given.
        projected: only some labels are shown.
    """

    graph: str
    labels: list[LabelView]
    relationship_types: list[RelationshipTypeView]
    patterns: list[PatternView]
    text: str
    projected: bool


class StoredValue(BaseModel):
    """A stored value of a property, and where it is stored."""

    owner: str = Field(description="The label or relationship type holding it.")
    key: str
    value: str


class ValueMatches(BaseModel):
    """The stored values of one ``owner.key`` nearest to the searched text, best first."""

    owner: str
    key: str
    exact: bool = Field(description="Some entity stores the text exactly.")
    values: list[str]


class SearchResult(BaseModel):
    """The answer of ``search_values``.

    Attributes:
        key: the property key searched.
        text: the text searched for.
        matches: per label or type holding ``key``, the nearest stored values.
        elsewhere: other listed properties storing the text (ignoring case).
    """

    key: str
    text: str
    matches: list[ValueMatches]
    elsewhere: list[StoredValue]


class FindingView(BaseModel):
    """One schema or value check finding on a query."""

    code: str
    message: str
    suggestions: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, finding: Finding) -> FindingView:
        """The view of a grounding :class:`~cypherturn.grounding.Finding`."""
        return cls(code=finding.code, message=finding.message, suggestions=finding.suggestions)


class ReadResult(BaseModel):
    """The answer of ``read_cypher``.

    Attributes:
        query: the query that ran (``submitted`` after the repairs).
        submitted: the query as the caller sent it.
        repairs: deterministic repairs applied, each with why it is unambiguous.
        findings: what the schema and value checks still find in ``query``.
        columns / rows: the result, plain JSON values.
        row_count: rows returned (after the row cap).
        truncated: the row cap cut the result.
        elapsed_ms: the engine's wall time, milliseconds.
    """

    query: str
    submitted: str
    repairs: list[FindingView]
    findings: list[FindingView]
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    elapsed_ms: float


class AskAttempt(BaseModel):
    """One attempt of the ``ask`` tool's strategy, summarised."""

    index: int
    query: str
    outcome: str = Field(description="ok: the engine executed it; error: it did not.")
    error_class: str | None = None
    error_message: str | None = None
    row_count: int | None = None
    verdict: str | None = None
    repairs: list[str] = Field(default_factory=list, description="Repair codes applied.")
    findings: list[str] = Field(default_factory=list, description="Finding messages.")

    @classmethod
    def of(cls, attempt: Attempt) -> AskAttempt:
        """The summary of a strategy :class:`~cypherturn.strategies.Attempt`."""
        return cls(
            index=attempt.index,
            query=attempt.query,
            outcome=attempt.outcome,
            error_class=attempt.error_class.value if attempt.error_class else None,
            error_message=attempt.error_message,
            row_count=attempt.row_count,
            verdict=attempt.verdict,
            repairs=[r.code for r in attempt.repairs],
            findings=[f.message for f in attempt.findings],
        )


class AskResult(BaseModel):
    """The answer of ``ask``: the chosen query, its rows, and the trace summary.

    Attributes:
        question: the question asked.
        query: the final query (the selected attempt's).
        success: the final query executed.
        columns / rows: its result (empty when it did not execute).
        truncated: the row cap cut the rows.
        strategy / model / budget: how it was generated.
        attempts_used: attempts made.
        selected_attempt: the attempt the query comes from.
        attempts: every attempt, summarised.
    """

    question: str
    query: str
    success: bool
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool
    strategy: str
    model: str
    budget: int
    attempts_used: int
    selected_attempt: int | None
    attempts: list[AskAttempt]

    @classmethod
    def of(cls, result: StrategyResult) -> AskResult:
        """The tool's view of a :class:`~cypherturn.strategies.StrategyResult`."""
        final = result.final_result
        return cls(
            question=result.question,
            query=result.final_query,
            success=result.success,
            columns=final.columns if final is not None else [],
            rows=final.rows if final is not None else [],
            truncated=final.truncated if final is not None else False,
            strategy=result.strategy,
            model=result.model,
            budget=result.budget,
            attempts_used=result.attempts_used,
            selected_attempt=result.selected_attempt,
            attempts=[AskAttempt.of(a) for a in result.attempts],
        )


class GraphService:
    """The four safe operations of ``cypherturn mcp`` on one open graph.

    Calls are serialised by one lock: the MCP SDK runs each synchronous tool on
    a worker thread, and a llama.cpp model must not decode two prompts at once.

    Args:
        engine: an open engine on a loaded graph (closed by the caller).
        model: the chat model of ``ask``, or ``None`` (``ask`` then refuses).
        engine_url: the URL ``engine`` was opened from (``ask`` reopens the graph by it).
        timeout_s: the longest a query may run, seconds; a call may ask for less.
        row_cap: the most rows a query returns; a call may ask for fewer.
        budget: the default budget T of ``ask``.
    """

    def __init__(
        self,
        engine: GraphEngine,
        *,
        model: ChatModel | None = None,
        engine_url: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        row_cap: int = DEFAULT_ROW_CAP,
        budget: int = 5,
    ) -> None:
        self.engine = engine
        self.model = model
        self.engine_url = engine_url
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.budget = budget
        self._lock = threading.Lock()

    def index(self) -> GraphIndex:
        """The graph's :class:`~cypherturn.grounding.GraphIndex` (built once, then cached)."""
        return graph_index(self.engine)

    # ------------------------------------------------------------------ get_schema

    def get_schema(self, labels: list[str] | None = None) -> SchemaView:
        """The schema with every property key, optionally projected on ``labels``.

        A projection keeps the named labels, the patterns with one of them at
        either end, and the relationship types of those patterns; the prompt
        text is rendered from the projection.

        Args:
            labels: labels to keep; ``None`` or empty for the whole schema.

        Returns:
            The schema view.

        Raises:
            ToolInputError: a label the graph does not have (the message lists close ones).
        """
        with self._lock:
            schema = self.index().complete_schema()
        projected = bool(labels)
        if labels:
            known = {label.label for label in schema.labels}
            unknown = [label for label in labels if label not in known]
            if unknown:
                raise ToolInputError(
                    f"the graph has no label {', '.join(repr(u) for u in unknown)}; "
                    f"its labels are {', '.join(sorted(known))}"
                )
            schema = _project(schema, set(labels))
        return SchemaView(
            graph=self.engine.graph,
            labels=[
                LabelView(label=label.label, count=label.count, properties=label.properties)
                for label in schema.labels
            ],
            relationship_types=[
                RelationshipTypeView(type=rel.type, count=rel.count, properties=rel.properties)
                for rel in schema.relationship_types
            ],
            patterns=[
                PatternView(source=p.source, type=p.type, target=p.target) for p in schema.patterns
            ],
            text=render_schema_prompt(schema),
            projected=projected,
        )

    # ------------------------------------------------------------------ search_values

    def search_values(
        self, key: str, text: str, label: str | None = None, limit: int = 5
    ) -> SearchResult:
        """The stored values of property ``key`` nearest to ``text``.

        Nearness is :meth:`~cypherturn.grounding.GraphIndex.nearest_values`'s:
        equal ignoring case, prefix, containment, then edit distance (looked
        up on the engine for properties with many values).

        Args:
            key: a property key.
            text: the text to look for.
            label: only this label (or relationship type); default every owner of ``key``.
            limit: most values per owner, 1 to 50.

        Returns:
            The matches per owner, and where else the text is stored.

        Raises:
            ToolInputError: an unknown key or label, a key the label does not
                have, an empty text, a limit out of range.
        """
        if not text:
            raise ToolInputError("text must not be empty")
        if not 1 <= limit <= 50:
            raise ToolInputError(f"limit must be between 1 and 50, got {limit}")
        with self._lock:
            index = self.index()
            owners = index.owners_of(key)
            if not owners:
                close = _close(key, index.all_keys)
                raise ToolInputError(
                    f"no label or relationship type has a property {key!r}"
                    + (f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "")
                )
            if label is not None:
                if label not in index.labels and label not in index.types:
                    raise ToolInputError(
                        f"the graph has no label or relationship type {label!r}; "
                        f"labels: {', '.join(sorted(index.labels))}"
                    )
                if label not in owners:
                    raise ToolInputError(
                        f"{label} has no property {key!r}; it is held by {', '.join(owners)}"
                    )
                owners = [label]
            matches = [
                ValueMatches(
                    owner=owner,
                    key=key,
                    exact=bool(index.value_exists(owner, key, text)),
                    values=index.nearest_values(owner, key, text, limit=limit),
                )
                for owner in owners
            ]
            elsewhere = [
                StoredValue(owner=o, key=k, value=v)
                for o, k, v in index.properties_with_value(text)
                if not (k == key and o in owners)
            ]
        return SearchResult(key=key, text=text, matches=matches, elsewhere=elsewhere)

    # ------------------------------------------------------------------ read_cypher

    def read_cypher(
        self,
        query: str,
        params: dict[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        row_cap: int | None = None,
        repair: bool = True,
    ) -> ReadResult:
        """Check, repair and run one query read-only, under the timeout and the row cap.

        Steps: a write is refused before anything runs; the schema check
        (:func:`~cypherturn.grounding.check_query`) runs and, with ``repair``,
        its unambiguous edits are applied
        (:func:`~cypherturn.grounding.repair_query`, up to three rounds); the query runs
        read-only; a result that answers nothing (no rows, or only 0 and nulls:
        :func:`~cypherturn.grounding.looks_empty`) has its compared literals checked against
        the stored values (:func:`~cypherturn.grounding.check_values`) and a
        case-only mismatch repaired and rerun. Every repair is reported.

        Args:
            query: Cypher text.
            params: query parameters.
            timeout_s: time limit, seconds, at most the server's.
            row_cap: rows kept, at most the server's.
            repair: apply the deterministic repairs.

        Returns:
            The rows, the repairs and the remaining findings.

        Raises:
            ToolInputError: an empty query, a limit above the server's, a write
                (nothing ran), or an engine refusal (its class, message, a hint
                and the check's findings).
        """
        submitted = query.strip()
        if not submitted:
            raise ToolInputError("query must not be empty")
        timeout = self._limit("timeout_s", timeout_s, self.timeout_s)
        cap = int(self._limit("row_cap", row_cap, self.row_cap))
        clause = find_write_clause(submitted)
        if clause is not None:
            raise ToolInputError(
                f"refused: {clause} writes to the graph, and this server only reads; "
                "nothing was run and the graph is unchanged"
            )
        with self._lock:
            index = self.index()
            current = submitted
            repairs: list[Finding] = []
            if repair:
                current, repairs, report = repair_query(current, index)
            else:
                report = check_query(current, index)
            findings = list(report.findings)
            result = self._run(current, params, timeout, cap, findings)
            grounded = ground_values(
                current,
                result,
                index,
                run=lambda query: self._run(query, params, timeout, cap, findings),
                result_of=lambda outcome: outcome,
                repair=repair,
            )
            current, result = grounded.query, grounded.outcome
            repairs += grounded.repairs
            findings += grounded.findings
        return ReadResult(
            query=current,
            submitted=submitted,
            repairs=[FindingView.of(f) for f in repairs],
            findings=[FindingView.of(f) for f in findings],
            columns=result.columns,
            rows=result.rows,
            row_count=result.row_count,
            truncated=result.truncated,
            elapsed_ms=result.elapsed_ms,
        )

    def _limit(self, name: str, asked: float | None, most: float) -> float:
        if asked is None:
            return most
        if not 0 < asked <= most:
            raise ToolInputError(
                f"{name} must be > 0 and at most the server's {most:g}, got {asked:g}"
            )
        return asked

    def _run(
        self,
        query: str,
        params: dict[str, Any] | None,
        timeout_s: float,
        row_cap: int,
        findings: list[Finding],
    ) -> QueryResult:
        try:
            return self.engine.execute(query, params, timeout_s=timeout_s, row_cap=row_cap)
        except WriteRefusedError as e:
            raise ToolInputError(
                f"refused: {e.clause} writes to the graph, and this server only reads; "
                "nothing was run and the graph is unchanged"
            ) from e
        except QueryError as e:
            lines = [f"the engine refused the query ({e.error_class.value}): {e.engine_message}"]
            hint = error_hint(e.engine_message)
            if hint:
                lines.append(f"hint: {hint}")
            lines += [f"check: {f.message}" for f in findings]
            raise ToolInputError("\n".join(lines)) from e

    # ------------------------------------------------------------------ ask

    def ask(self, question: str, budget: int | None = None) -> AskResult:
        """Answer a question with generated Cypher: :func:`cypherturn.api.ask` with ``ras+``.

        Args:
            question: the question, in plain language.
            budget: the most attempts (default the server's), 1 to 10.

        Returns:
            The chosen query, its rows and every attempt summarised.

        Raises:
            ToolInputError: no model configured, an empty question, a budget out of range.
            ModelError: the model failed (the MCP layer reports it as a tool error).
        """
        if self.model is None:
            raise ToolInputError("this server has no model: start it with --model to enable ask")
        if not question.strip():
            raise ToolInputError("question must not be empty")
        chosen = self.budget if budget is None else budget
        if not 1 <= chosen <= 10:
            raise ToolInputError(f"budget must be between 1 and 10, got {chosen}")
        with self._lock:
            result = api.ask(
                question,
                graph=self.engine.graph,
                engine_url=self.engine_url,
                strategy=ASK_STRATEGY,
                budget=chosen,
                model=self.model,
                timeout_s=self.timeout_s,
                row_cap=self.row_cap,
            )
        return AskResult.of(result)


def _project(schema: GraphSchema, keep: set[str]) -> GraphSchema:
    patterns = [p for p in schema.patterns if p.source in keep or p.target in keep]
    types = {p.type for p in patterns}
    return schema.model_copy(
        update={
            "labels": [label for label in schema.labels if label.label in keep],
            "relationship_types": [r for r in schema.relationship_types if r.type in types],
            "patterns": patterns,
        }
    )


def _close(name: str, candidates: frozenset[str]) -> list[str]:
    folded = {c.lower(): c for c in candidates}
    return [folded[c] for c in difflib.get_close_matches(name.lower(), list(folded), n=3)]

"""What the MCP tools do, without MCP: one graph, its index, the limits, and four safe operations.

:class:`GraphService` holds an open engine and answers the four tools of
``cypherturn mcp`` with pydantic results. Every failure an assistant can cause
(unknown label, unknown key, a write, an engine error) raises
:class:`ToolInputError` with one message naming what went wrong and what the
graph has instead; the MCP layer turns it into a tool error result. Nothing
here writes to the graph: ``read_cypher`` goes through
:meth:`~cypherturn.graph.GraphEngine.execute` (the tokenizer write guard, then
the engine's read-only mode) and ``ask`` through :func:`cypherturn.api.ask`.

Calls run side by side: each read borrows an engine connection of its own from
an :class:`~cypherturn.mcp_server._pool.EnginePool`, and only ``ask`` is
serialised, because a llama.cpp model must not decode two prompts at once.
Every input is capped (:mod:`cypherturn.mcp_server._limits`) and every read
runs under the call's time limit, so no call keeps the server busy outside a
timeout. Rows are cut to a byte budget, with a note saying how many were shown.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
    open_engine,
    render_schema_prompt,
)
from cypherturn.graph._guard import NUL, find_parameter_problem
from cypherturn.grounding import (
    Finding,
    GraphIndex,
    check_query,
    error_hint,
    graph_index,
    ground_values,
    repair_query,
)
from cypherturn.mcp_server._limits import (
    DEFAULT_CONNECTIONS,
    DEFAULT_RESULT_BYTES,
    MAX_LABELS,
    MAX_NAME_CHARS,
    MAX_PARAMS_BYTES,
    MAX_QUERY_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TEXT_CHARS,
    fit_rows,
    json_size,
)
from cypherturn.mcp_server._pool import EnginePool
from cypherturn.models import ChatModel
from cypherturn.strategies import Attempt, StrategyResult

ASK_STRATEGY = "ras+"
"""The strategy of the ``ask`` tool: RAS grounded in the schema and stored values."""


class ToolInputError(CypherTurnError):
    """A tool call the graph cannot serve: bad arguments, a write, an engine refusal.

    The message is written for the assistant that made the call: it names the
    offending argument or clause and, where it can, what the graph has instead.
    """


class ToolResult(BaseModel):
    """What a tool returns: sent once as structured content, with :meth:`summary` as its text."""

    def summary(self) -> str:
        """A short text for clients that read only the text content (not the result again)."""
        raise NotImplementedError(type(self).__name__)


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


class SchemaView(ToolResult):
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

    def summary(self) -> str:
        """The text content: the schema as the compact prompt text."""
        return self.text


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


class SearchResult(ToolResult):
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

    def summary(self) -> str:
        """The text content: per owner, whether the text is stored and the nearest values."""
        lines = [
            f"{m.owner}.{m.key}: {'stored exactly' if m.exact else 'not stored exactly'}; "
            f"nearest: {', '.join(repr(v) for v in m.values) or 'none'}"
            for m in self.matches
        ]
        lines += [f"also stored as {e.owner}.{e.key} = {e.value!r}" for e in self.elsewhere]
        return "\n".join(lines)


class FindingView(BaseModel):
    """One schema or value check finding on a query."""

    code: str
    message: str
    suggestions: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, finding: Finding) -> FindingView:
        """The view of a grounding :class:`~cypherturn.grounding.Finding`."""
        return cls(code=finding.code, message=finding.message, suggestions=finding.suggestions)


class ReadResult(ToolResult):
    """The answer of ``read_cypher``.

    Attributes:
        query: the query that ran (``submitted`` after the repairs), with ``params``:
            exactly what the engine executed (it also appends ``LIMIT row_cap + 1``
            where that keeps the rows the same).
        submitted: the query as the caller sent it.
        params: the parameters it ran with.
        repairs: deterministic repairs applied, each with why it is unambiguous.
        findings: what the schema and value checks still find in ``query``.
        columns / rows: the result, plain JSON values (the rows shown).
        row_count: rows shown in ``rows``.
        total_rows: rows the query returned (after the row cap); more than
            ``row_count`` when the result's byte budget cut them.
        truncated: the row cap cut the result.
        note: what was cut and what to do about it, or ``None``.
        elapsed_ms: the engine's wall time, milliseconds.
    """

    query: str
    submitted: str
    params: dict[str, Any] = Field(default_factory=dict)
    repairs: list[FindingView]
    findings: list[FindingView]
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    total_rows: int
    truncated: bool
    note: str | None = None
    elapsed_ms: float

    def summary(self) -> str:
        """A few lines for the text content: what ran, the shape of the result, the first rows."""
        lines = [
            f"{self.row_count:,} row(s) of {', '.join(self.columns) or 'no columns'} "
            f"in {self.elapsed_ms:.0f} ms from: {_clip(self.query, 300)}"
        ]
        if self.repairs:
            lines.append("repaired: " + "; ".join(r.message for r in self.repairs))
        if self.note:
            lines.append(self.note)
        lines.append(_preview(self.rows))
        return "\n".join(lines)


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


class AskResult(ToolResult):
    """The answer of ``ask``: the chosen query, its rows, and the trace summary.

    Attributes:
        question: the question asked.
        query: the final query (the selected attempt's).
        success: the final query executed.
        columns / rows: its result (empty when it did not execute), the rows shown.
        total_rows: rows the query returned; more than ``rows`` when the
            result's byte budget cut them.
        truncated: the row cap cut the rows.
        note: what was cut and what to do about it, or ``None``.
        strategy / model / budget: how it was generated.
        attempts_used: attempts made.
        selected_attempt: the attempt the query comes from.
        attempts: every attempt, summarised.
        stop_reason: why the strategy stopped before its budget (its wall-clock
            budget was spent), or ``None``.
    """

    question: str
    query: str
    success: bool
    columns: list[str]
    rows: list[list[Any]]
    total_rows: int = 0
    truncated: bool
    note: str | None = None
    strategy: str
    model: str
    budget: int
    attempts_used: int
    selected_attempt: int | None
    attempts: list[AskAttempt]
    stop_reason: str | None = None

    @classmethod
    def of(cls, result: StrategyResult, *, result_bytes: int = DEFAULT_RESULT_BYTES) -> AskResult:
        """The tool's view of a :class:`~cypherturn.strategies.StrategyResult`, rows cut to ``result_bytes``."""
        final = result.final_result
        rows = final.rows if final is not None else []
        shown = fit_rows(rows, result_bytes)
        return cls(
            question=result.question,
            query=result.final_query,
            success=result.success,
            columns=final.columns if final is not None else [],
            rows=shown,
            total_rows=len(rows),
            note=_cut_note(len(shown), len(rows), result_bytes),
            truncated=final.truncated if final is not None else False,
            strategy=result.strategy,
            model=result.model,
            budget=result.budget,
            attempts_used=result.attempts_used,
            selected_attempt=result.selected_attempt,
            attempts=[AskAttempt.of(a) for a in result.attempts],
            stop_reason=result.stop_reason,
        )

    def summary(self) -> str:
        """A few lines for the text content: the answer's query, its shape and first rows."""
        outcome = "answered" if self.success else "no query executed"
        lines = [
            f"{outcome} with {self.attempts_used} attempt(s) of {self.strategy}: "
            f"{_clip(self.query, 300) or '(no query)'}",
            f"{len(self.rows):,} row(s) of {', '.join(self.columns) or 'no columns'}",
        ]
        if self.stop_reason:
            lines.append(f"stopped early: {self.stop_reason}")
        if self.note:
            lines.append(self.note)
        lines.append(_preview(self.rows))
        return "\n".join(lines)


class GraphService:
    """The four safe operations of ``cypherturn mcp`` on one open graph.

    Safe to call from many threads at once: the MCP layer runs each call on a
    worker thread. A read borrows an engine of its own from a pool of
    ``connections`` (one engine object is never shared between threads), so a
    slow query holds one connection while the others keep answering; ``ask``
    is serialised by a lock, because a llama.cpp model must not decode two
    prompts at once.

    Args:
        engine: an open engine on a loaded graph (closed by the caller).
        model: the chat model of ``ask``, or ``None`` (``ask`` then refuses).
        engine_url: the URL ``engine`` was opened from (``ask`` reopens the
            graph by it, and the pool opens its connections by it; ``None``:
            by ``engine.spec``).
        timeout_s: the longest a call's queries may run, seconds; a call may ask for less.
        row_cap: the most rows a query returns; a call may ask for fewer.
        budget: the default budget T of ``ask``.
        max_seconds: the wall-clock budget of one ``ask`` answer, seconds
            (:data:`cypherturn.api.DEFAULT_MAX_SECONDS`; ``None``: none). Once
            spent, the best verified query so far is returned, or none with the reason.
        connections: engine connections, hence reads running at once.
        result_bytes: the most bytes of JSON the rows of one result may take.
        open_connection: opens another engine on the graph (default: reopen
            ``engine_url`` or ``engine.spec`` with the service's limits).
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
        max_seconds: float | None = api.DEFAULT_MAX_SECONDS,
        connections: int = DEFAULT_CONNECTIONS,
        result_bytes: int = DEFAULT_RESULT_BYTES,
        open_connection: Callable[[], GraphEngine] | None = None,
    ) -> None:
        self.engine = engine
        self.model = model
        self.engine_url = engine_url
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.budget = budget
        self.max_seconds = max_seconds
        self.result_bytes = result_bytes
        if open_connection is None:

            def open_connection() -> GraphEngine:
                return open_engine(
                    engine_url if engine_url is not None else engine.spec,
                    engine.graph,
                    timeout_s=timeout_s,
                    row_cap=row_cap,
                )

        self._pool = EnginePool(engine, open_connection, connections)
        self._model_lock = threading.Lock()

    @property
    def connections(self) -> int:
        """The most engine connections, hence reads running at once."""
        return self._pool.size

    def close(self) -> None:
        """Close the connections the service opened (``engine`` stays open: its owner closes it)."""
        self._pool.close()

    def index(self) -> GraphIndex:
        """The graph's :class:`~cypherturn.grounding.GraphIndex` (built once, then cached)."""
        return graph_index(self.engine)

    @contextmanager
    def _borrow(self, deadline: float) -> Iterator[tuple[GraphEngine, GraphIndex]]:
        """An engine of this call's own, and the index with its lookups on that engine.

        The index is shared by every call (and rebuilt by ``graph_index`` when the
        graph's counts change); each call gets a shallow copy whose lookups run on
        its own engine, never on one another thread is using.
        """
        try:
            engine = self._pool.acquire(deadline - time.monotonic())
        except TimeoutError as e:
            raise ToolInputError(
                f"the server is busy: {e} until this call's time limit; try again shortly"
            ) from e
        try:
            yield engine, dataclasses.replace(graph_index(engine), engine=engine)
        finally:
            self._pool.release(engine)

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
            ToolInputError: a label the graph does not have (the message lists
                close ones), more than :data:`MAX_LABELS` labels or a label name
                longer than :data:`MAX_NAME_CHARS`.
        """
        if labels:
            if len(labels) > MAX_LABELS:
                raise ToolInputError(
                    f"labels names {len(labels):,} labels; this server takes at most {MAX_LABELS}"
                )
            for label in labels:
                _check_length("a label in labels", label, MAX_NAME_CHARS)
        with self._borrow(time.monotonic() + self.timeout_s) as (_, index):
            schema = index.complete_schema()
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
                have, an empty text, a limit out of range, a text longer than
                :data:`MAX_TEXT_CHARS` (edit distances grow with its square) or a
                name longer than :data:`MAX_NAME_CHARS`.
        """
        if not text:
            raise ToolInputError("text must not be empty")
        _check_length("text", text, MAX_TEXT_CHARS)
        _check_length("key", key, MAX_NAME_CHARS)
        if label is not None:
            _check_length("label", label, MAX_NAME_CHARS)
        if not 1 <= limit <= 50:
            raise ToolInputError(f"limit must be between 1 and 50, got {limit}")
        with self._borrow(time.monotonic() + self.timeout_s) as (_, index):
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

        Steps: the query and its parameters are checked (lengths, parameter
        names and values, :func:`~cypherturn.graph._guard.find_parameter_problem`);
        a write is refused before anything runs; the schema check
        (:func:`~cypherturn.grounding.check_query`) runs and, with ``repair``,
        its unambiguous edits are applied
        (:func:`~cypherturn.grounding.repair_query`, up to three rounds); the query runs
        read-only; a result that answers nothing (no rows, or only 0 and nulls:
        :func:`~cypherturn.grounding.looks_empty`) has its compared literals checked against
        the stored values (:func:`~cypherturn.grounding.check_values`) and a
        case-only mismatch repaired and rerun. Every repair is reported. All of
        it runs under one deadline, ``timeout_s`` from the call's start: a rerun
        gets what is left. Rows beyond the result's byte budget are cut, and
        the result says how many were shown.

        Args:
            query: Cypher text.
            params: query parameters.
            timeout_s: time limit, seconds, at most the server's.
            row_cap: rows kept, at most the server's.
            repair: apply the deterministic repairs.

        Returns:
            The rows, the repairs and the remaining findings.

        Raises:
            ToolInputError: an empty or too long query, parameters that are too
                large, a parameter name that is not an identifier or a value the
                engine cannot take (naming the parameter), a limit above the
                server's, a write (nothing ran), the time limit passed, or an
                engine refusal (its class, message, a hint and the check's findings).
        """
        submitted = query.strip()
        if not submitted:
            raise ToolInputError("query must not be empty")
        _check_length("query", submitted, MAX_QUERY_CHARS)
        if NUL in submitted:
            raise ToolInputError(
                f"query holds a NUL character at offset {submitted.index(NUL)}; "
                "the engine would read only the text before it"
            )
        values = _checked_params(params)
        timeout = self._limit("timeout_s", timeout_s, self.timeout_s)
        cap = int(self._limit("row_cap", row_cap, self.row_cap))
        deadline = time.monotonic() + timeout
        clause = find_write_clause(submitted)
        if clause is not None:
            raise ToolInputError(
                f"refused: {clause} writes to the graph, and this server only reads; "
                "nothing was run and the graph is unchanged"
            )
        with self._borrow(deadline) as (engine, index):
            current = submitted
            repairs: list[Finding] = []
            if repair:
                current, repairs, report = repair_query(current, index)
            else:
                report = check_query(current, index)
            findings = list(report.findings)

            def run(text: str) -> QueryResult:
                return self._run(engine, text, values, deadline, timeout, cap, findings)

            result = run(current)
            grounded = ground_values(
                current,
                result,
                index,
                run=run,
                result_of=lambda outcome: outcome,
                repair=repair,
            )
            current, result = grounded.query, grounded.outcome
            repairs += grounded.repairs
            findings += grounded.findings
        shown = fit_rows(result.rows, self.result_bytes)
        return ReadResult(
            query=current,
            submitted=submitted,
            params=values,
            repairs=[FindingView.of(f) for f in repairs],
            findings=[FindingView.of(f) for f in findings],
            columns=result.columns,
            rows=shown,
            row_count=len(shown),
            total_rows=result.row_count,
            truncated=result.truncated,
            note=_cut_note(len(shown), result.row_count, self.result_bytes),
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
        engine: GraphEngine,
        query: str,
        params: dict[str, Any],
        deadline: float,
        timeout_s: float,
        row_cap: int,
        findings: list[Finding],
    ) -> QueryResult:
        left = deadline - time.monotonic()
        if left <= 0:
            raise ToolInputError(
                f"read_cypher ran past its time limit of {timeout_s:g} s before the query "
                "could run (again); narrow the query or raise timeout_s"
            )
        try:
            return engine.execute(query, params, timeout_s=left, row_cap=row_cap)
        except WriteRefusedError as e:
            what = (
                f"{e.clause} writes to the graph"
                if e.clause
                else f"the engine's read-only mode refused it as a write ({e.engine_message})"
            )
            raise ToolInputError(
                f"refused: {what}, and this server only reads; "
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
            The chosen query, its rows (cut to the byte budget) and every attempt summarised.

        Raises:
            ToolInputError: no model configured, an empty or too long question,
                a budget out of range.
            ModelError: the model failed (the MCP layer reports it as a tool error).
        """
        if self.model is None:
            raise ToolInputError("this server has no model: start it with --model to enable ask")
        if not question.strip():
            raise ToolInputError("question must not be empty")
        _check_length("question", question, MAX_QUESTION_CHARS)
        chosen = self.budget if budget is None else budget
        if not 1 <= chosen <= 10:
            raise ToolInputError(f"budget must be between 1 and 10, got {chosen}")
        with self._model_lock:
            result = api.ask(
                question,
                graph=self.engine.graph,
                engine_url=self.engine_url,
                strategy=ASK_STRATEGY,
                budget=chosen,
                model=self.model,
                timeout_s=self.timeout_s,
                row_cap=self.row_cap,
                max_seconds=self.max_seconds,
            )
        return AskResult.of(result, result_bytes=self.result_bytes)


def _check_length(name: str, value: str, most: int) -> None:
    if len(value) > most:
        raise ToolInputError(
            f"{name} is {len(value):,} characters long; this server takes at most {most:,}"
        )


def _checked_params(params: dict[str, Any] | None) -> dict[str, Any]:
    """``params`` if the engine can take them as given, else a ToolInputError naming the parameter."""
    if not params:
        return {}
    try:
        size = json_size(params)
    except ValueError as e:  # a value JSON cannot hold (only from Python callers)
        raise ToolInputError(f"params cannot be written as JSON: {e}") from e
    if size > MAX_PARAMS_BYTES:
        raise ToolInputError(
            f"params take {size:,} bytes as JSON; this server takes at most {MAX_PARAMS_BYTES:,}"
        )
    problem = find_parameter_problem(params)
    if problem is not None:
        raise ToolInputError(f"params: {problem}")
    return dict(params)


def _cut_note(shown: int, total: int, budget_bytes: int) -> str | None:
    if shown >= total:
        return None
    return (
        f"{shown:,} of {total:,} rows shown; narrow the query (a result may take at most "
        f"{budget_bytes:,} bytes of rows)"
    )


def _clip(text: str, most: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= most else flat[: most - 1] + "…"


def _preview(rows: list[list[Any]], most_rows: int = 5, most_chars: int = 1_000) -> str:
    """The first rows as JSON lines, for clients that read only the text content."""
    if not rows:
        return "no rows"
    lines = [json.dumps(row, ensure_ascii=False, default=str) for row in rows[:most_rows]]
    text = _clip_lines(lines, most_chars)
    more = len(rows) - most_rows
    return (
        "first rows:\n" + text + (f"\n... {more:,} more in structuredContent" if more > 0 else "")
    )


def _clip_lines(lines: list[str], most_chars: int) -> str:
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) > most_chars:
            kept.append(line[: max(most_chars - used, 0)] + "…")
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept)


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

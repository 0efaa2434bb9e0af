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
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from cypherturn import api
from cypherturn.errors import QueryError, WriteRefusedError
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
from cypherturn.grounding import (
    Finding,
    GraphIndex,
    check_query,
    error_hint,
    graph_index,
    ground_values,
    repair_query,
)
from cypherturn.mcp_server._inputs import (
    ToolInputError,
    check_length,
    checked_params,
    checked_query,
)
from cypherturn.mcp_server._limits import (
    DEFAULT_CONNECTIONS,
    DEFAULT_RESULT_BYTES,
    MAX_LABELS,
    MAX_NAME_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TEXT_CHARS,
    fit_rows,
)
from cypherturn.mcp_server._pool import EnginePool
from cypherturn.mcp_server._results import (
    AskResult,
    FindingView,
    LabelView,
    PatternView,
    ReadResult,
    RelationshipTypeView,
    SchemaView,
    SearchResult,
    StoredValue,
    ValueMatches,
    cut_note,
)
from cypherturn.models import ChatModel
from cypherturn.strategies import get_strategy, prefix_context, warm_prefix

ASK_STRATEGY = "ras+"
"""The strategy of the ``ask`` tool: RAS grounded in the schema and stored values."""


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
                check_length("a label in labels", label, MAX_NAME_CHARS)
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
        check_length("text", text, MAX_TEXT_CHARS)
        check_length("key", key, MAX_NAME_CHARS)
        if label is not None:
            check_length("label", label, MAX_NAME_CHARS)
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
        submitted = checked_query(query)
        values = checked_params(params)
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

            def execute(text: str, findings: list[Finding]) -> QueryResult:
                return self._run(engine, text, values, deadline, timeout, cap, findings)

            current, result, repairs, findings = self._read(index, submitted, repair, execute)
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
            note=cut_note(len(shown), result.row_count, self.result_bytes),
            elapsed_ms=result.elapsed_ms,
        )

    @staticmethod
    def _read(
        index: GraphIndex,
        submitted: str,
        repair: bool,
        execute: Callable[[str, list[Finding]], QueryResult],
    ) -> tuple[str, QueryResult, list[Finding], list[Finding]]:
        """The schema check and its repairs, the run, and value grounding after it.

        Args:
            index: the graph's index, for the checks.
            submitted: the checked query.
            repair: apply the deterministic repairs.
            execute: runs a query on the borrowed connection under the call's
                deadline; the findings it is given go into an engine refusal's message.

        Returns:
            The query that ran last, its result, the repairs applied and the
            remaining findings.
        """
        current = submitted
        repairs: list[Finding] = []
        if repair:
            current, repairs, report = repair_query(current, index)
        else:
            report = check_query(current, index)
        findings = list(report.findings)

        def run(text: str) -> QueryResult:
            return execute(text, findings)

        result = run(current)
        grounded = ground_values(
            current, result, index, run=run, result_of=lambda outcome: outcome, repair=repair
        )
        repairs += grounded.repairs
        findings += grounded.findings
        return grounded.query, grounded.outcome, repairs, findings

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

    def warm(self) -> int:
        """Bring the ``ask`` tool's prompt prefix into the model, so the first question skips it.

        :func:`~cypherturn.strategies.warm_prefix` with the tool's strategy, on a
        pooled engine. ``cypherturn mcp`` calls it in the background at start.

        Returns:
            Prompt tokens the model now holds evaluated (0: no model, or one
            without a prefix cache).

        Raises:
            ModelError: the model cannot be loaded.
            CallAbandoned: the caller's call limits stopped it.
        """
        if self.model is None:
            return 0
        # the engine is needed for the context only: the model's seconds hold no connection
        with self._borrow(time.monotonic() + self.timeout_s) as (engine, _):
            context = prefix_context(get_strategy(ASK_STRATEGY), engine)
        return warm_prefix(self.model, context)

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
        check_length("question", question, MAX_QUESTION_CHARS)
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

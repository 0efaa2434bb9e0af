"""Executing the four environment actions and rendering what the model observes (CypherTurn App. D.5).

EXECUTE_CYPHER runs read-only under the 120 s hard timeout and shows at most 20
rows; INSPECT_SCHEMA lists every label with its typed properties and every
relationship type with its source and target labels; SEARCH_VALUES returns up
to 10 stored values found by the cascade CONTAINS -> STARTS WITH -> per-word
CONTAINS (all case-insensitive).

With :class:`~cypherturn.agent.AgentGrounding` parts on, EXECUTE_CYPHER and
SUBMIT_ANSWER also go through ``ras+``'s schema check, repairs and value
grounding; the observation then says in plain words what was repaired and found.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cypherturn.agent._grounding import AgentGrounding, TurnContext
from cypherturn.errors import ErrorClass, QueryError
from cypherturn.graph import GraphEngine, GraphSchema, QueryResult, cypher_name
from cypherturn.grounding import (
    CheckReport,
    Finding,
    GraphIndex,
    check_query,
    error_hint,
    graph_index,
    ground_values,
    question_repairs,
    repair_query,
)

__all__ = [
    "CURRENT_TURN_ROWS",
    "EXECUTE_TIMEOUT_S",
    "SEARCH_LIMIT",
    "ActionExecutor",
    "Observation",
    "render_rows",
    "render_schema",
]

EXECUTE_TIMEOUT_S = 120.0
"""Hard timeout of EXECUTE_CYPHER, seconds (App. D.5)."""
CURRENT_TURN_ROWS = 20
"""Rows of a current-turn result shown to the model (App. D.5)."""
SEARCH_LIMIT = 10
"""Values SEARCH_VALUES returns at most (App. D.5)."""


class Observation(BaseModel):
    """What an action returned to the model.

    Attributes:
        text: the observation as the model reads it.
        ok: the action did what was asked (a query ran, a search parsed).
        error_class: the query's failure class when EXECUTE_CYPHER failed.
        rows: rows the query or search returned (before truncation).
        latency_s: wall time of the engine work, seconds.
        query: the query that ran or was submitted, when grounding repaired the
            model's (``None``: the model's own).
        repairs: the grounding repairs applied, in order (each finding with its edit).
        findings: what the schema and value checks found in the final query.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    ok: bool = True
    error_class: ErrorClass | None = None
    rows: int | None = None
    latency_s: float = 0.0
    query: str | None = None
    repairs: list[Finding] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def render_rows(columns: list[str], rows: list[list[Any]], limit: int | None) -> str:
    """Render a result as a header line and one line per row, cells separated by `` | ``.

    Args:
        columns: column names.
        rows: the rows.
        limit: rows shown at most (``None``: all); a note says how many were cut.

    Returns:
        The text, e.g. ``"name | age\\nAda | 36\\n(2 rows)"``.
    """
    shown = rows if limit is None else rows[:limit]
    lines = [" | ".join(columns)]
    lines.extend(" | ".join(_cell(v) for v in row) for row in shown)
    if len(shown) < len(rows):
        lines.append(f"({len(rows)} rows, first {len(shown)} shown)")
    else:
        lines.append(f"({len(rows)} rows)")
    return "\n".join(lines)


def render_schema(schema: GraphSchema) -> str:
    """The INSPECT_SCHEMA text: labels with typed properties, relationship types with endpoints.

    Args:
        schema: the graph's schema.

    Returns:
        Lines ``(:Label {key: TYPE, ...})`` then ``(:Source)-[:TYPE {key: TYPE}]->(:Target)``;
        names that are not plain identifiers are backtick-quoted.
    """
    lines = ["Node labels:"]
    for label in schema.labels:
        props = ", ".join(f"{cypher_name(k)}: {v}" for k, v in label.properties.items())
        lines.append(f"  (:{cypher_name(label.label)} {{{props}}})")
    lines.append("Relationship types:")
    props_of = {r.type: r.properties for r in schema.relationship_types}
    for pattern in schema.patterns:
        items = props_of.get(pattern.type, {}).items()
        props = ", ".join(f"{cypher_name(k)}: {v}" for k, v in items)
        body = f" {{{props}}}" if props else ""
        source, target = cypher_name(pattern.source), cypher_name(pattern.target)
        lines.append(f"  (:{source})-[:{cypher_name(pattern.type)}{body}]->(:{target})")
    return "\n".join(lines)


NOTE_REPLACEMENT_CHARS = 80
"""A repair's replacement text longer than this is not quoted in the observation's note (the
repaired query follows it): under the agentic protocol every note stays in the history, and a
bound list of 30 names quoted three times ran Qwen2.5-Coder-1.5B's 4,096-token context out."""


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class ActionExecutor:
    """Runs EXECUTE_CYPHER, INSPECT_SCHEMA and SEARCH_VALUES against one graph.

    Args:
        engine: the session's graph engine.
        timeout_s: EXECUTE_CYPHER timeout, seconds.
        row_limit: rows shown per EXECUTE_CYPHER observation.
        schema: the schema, when already known (otherwise introspected on first use).
    """

    def __init__(
        self,
        engine: GraphEngine,
        *,
        timeout_s: float = EXECUTE_TIMEOUT_S,
        row_limit: int = CURRENT_TURN_ROWS,
        schema: GraphSchema | None = None,
    ) -> None:
        self._engine = engine
        self._timeout_s = timeout_s
        self._row_limit = row_limit
        self._schema = schema
        self._index: GraphIndex | None = None

    @property
    def schema(self) -> GraphSchema:
        """The graph schema (introspected once, then cached)."""
        if self._schema is None:
            self._schema = self._engine.schema()
        return self._schema

    @property
    def index(self) -> GraphIndex:
        """The grounding index of the graph (:func:`~cypherturn.grounding.graph_index`, cached)."""
        if self._index is None:
            self._index = graph_index(self._engine)
        return self._index

    def execute_cypher(
        self,
        query: str,
        grounding: AgentGrounding | None = None,
        context: TurnContext | None = None,
    ) -> Observation:
        """Run a query read-only and render its first rows, or the engine's error.

        Args:
            query: the Cypher text.
            grounding: the grounding parts to apply (``None`` or all off: the
                paper's action, the query run as written).
            context: the turn's question and previous result, which the ``question``
                and ``reference`` parts read (``None``: those parts do nothing).

        Returns:
            The observation; a failed query gives ``ok=False`` with the engine's
            own message and its :class:`ErrorClass`. With grounding, the repairs
            and findings follow the result in the text and are kept in the fields.

        Raises:
            EngineConnectionError: the engine is unreachable (an infrastructure fault).
        """
        if grounding is None or not grounding.active:
            started = time.perf_counter()
            result, error = self._run(query)
            return self._observed(result, error, time.perf_counter() - started)
        return self._grounded(query, grounding, context, submit=False)

    def submit_answer(
        self,
        query: str,
        grounding: AgentGrounding | None = None,
        context: TurnContext | None = None,
    ) -> Observation:
        """SUBMIT_ANSWER: the submission as the prediction, grounded like EXECUTE_CYPHER.

        Without grounding nothing runs (the paper's action). With ``check`` or
        ``repair`` the submission is checked and repaired; with ``values`` it is
        also run, and an empty result gets the value check (and, with
        ``repair``, a substituted stored value when the repaired query runs).

        Args:
            query: the submitted Cypher text.
            grounding: the grounding parts to apply.
            context: the turn's question and previous result (see :meth:`execute_cypher`).

        Returns:
            ``Submitted.`` and, with grounding, what was repaired and found;
            :attr:`Observation.query` is the submission to score when it was repaired.

        Raises:
            EngineConnectionError: the engine is unreachable.
        """
        if grounding is None or not grounding.active:
            return Observation(text="Submitted.")
        return self._grounded(query, grounding, context, submit=True)

    def result(self, query: str) -> QueryResult | None:
        """Run ``query`` read-only under the action timeout; ``None`` when the engine rejects it.

        Raises:
            EngineConnectionError: the engine is unreachable.
        """
        return self._run(query)[0]

    def _run(self, query: str) -> tuple[QueryResult | None, QueryError | None]:
        try:
            return self._engine.execute(query, timeout_s=self._timeout_s), None
        except QueryError as e:
            return None, e

    def _observed(
        self, result: QueryResult | None, error: QueryError | None, latency_s: float
    ) -> Observation:
        if result is None:
            assert error is not None
            return Observation(
                text=f"Error: {error.engine_message}",
                ok=False,
                error_class=error.error_class,
                latency_s=latency_s,
            )
        return Observation(
            text=render_rows(result.columns, result.rows, self._row_limit),
            rows=len(result.rows),
            latency_s=latency_s,
        )

    def _grounded(
        self,
        query: str,
        grounding: AgentGrounding,
        context: TurnContext | None,
        *,
        submit: bool,
    ) -> Observation:
        """The ``ras+`` attempt logic (strategies/_grounded.py) applied to one action's query.

        Runs the query unless it is a submission without ``values``; a submission's
        observation is ``Submitted.`` with the notes (the turn ends, nothing to show).
        """
        started = time.perf_counter()
        original, index = query, self.index
        repairs: list[Finding] = []
        if grounding.repair:
            query, repairs, report = repair_query(query, index)
        else:
            report = check_query(query, index) if grounding.check else CheckReport(parsed=True)
        findings = list(report.findings) if grounding.check else []
        if context is not None and (grounding.question or grounding.reference) and query:
            before = query
            query, applied, asked = question_repairs(
                query,
                context.question,
                index,
                repair=grounding.repair,
                previous=context.previous,
                asked=grounding.question,
                reference=grounding.reference,
            )
            repairs += applied
            if grounding.check and query != before:
                findings = list(check_query(query, index).findings)
            findings += asked
        hint: str | None = None
        observed = Observation(text="Submitted.")
        if not submit or grounding.values:
            result, error = self._run(query)
            if grounding.values:
                grounded = ground_values(
                    query,
                    (result, error),
                    index,
                    run=self._run,
                    result_of=lambda outcome: outcome[0],
                    repair=grounding.repair,
                )
                query, (result, error) = grounded.query, grounded.outcome
                repairs += grounded.repairs
                findings += grounded.findings
            if error is not None and grounding.check:
                hint = error_hint(_engine_message(error.engine_message))
            if not submit:
                observed = self._observed(result, error, 0.0)
        notes = _grounding_notes(original, query, repairs, findings, hint, submit=submit)
        return observed.model_copy(
            update={
                "text": observed.text + ("\n" + notes if notes else ""),
                "latency_s": time.perf_counter() - started,
                "query": query if query != original else None,
                "repairs": repairs,
                "findings": findings,
            }
        )

    def inspect_schema(self) -> Observation:
        """Render the full schema (always succeeds)."""
        started = time.perf_counter()
        text = render_schema(self.schema)
        return Observation(text=text, latency_s=time.perf_counter() - started)

    def search_values(self, payload: str) -> Observation:
        """Fuzzy-search stored values of one property of one label (App. D.5 cascade).

        The stages, in order, each tried only when the previous found nothing:
        1. ``toLower(value) CONTAINS toLower(query)``;
        2. ``toLower(value) STARTS WITH`` the query's prefix (its first half,
           at least 3 characters), which catches misspelt or over-long endings;
        3. for a multi-word query, ``CONTAINS`` of any single word (of 3+ characters).

        Args:
            payload: a JSON object ``{"label": ..., "property": ..., "query": ...}``.

        Returns:
            Up to 10 distinct values and the stage that found them; ``ok=False``
            with a parse-error message on malformed JSON, missing keys, or a
            label or property key the graph does not have.
        """
        started = time.perf_counter()
        try:
            spec = json.loads(payload)
        except json.JSONDecodeError as e:
            return Observation(
                text=f"Parse error: SEARCH_VALUES input is not JSON ({e}).", ok=False
            )
        if not isinstance(spec, dict) or not all(
            isinstance(spec.get(k), str) and spec.get(k) for k in ("label", "property", "query")
        ):
            return Observation(
                text="Parse error: SEARCH_VALUES needs a JSON object with string keys "
                '"label", "property" and "query".',
                ok=False,
            )
        label, prop, query = spec["label"], spec["property"], spec["query"].strip()
        known = {entry.label: entry for entry in self.schema.labels}
        if label not in known:
            return Observation(text=f"Unknown label {label!r}.", ok=False)
        if prop not in known[label].properties:
            return Observation(text=f"Label {label!r} has no property {prop!r}.", ok=False)
        target = f"toLower(toString(n.{_quote(prop)}))"
        base = f"MATCH (n:{_quote(label)}) WHERE n.{_quote(prop)} IS NOT NULL AND "
        tail = f" RETURN DISTINCT n.{_quote(prop)} AS value LIMIT {SEARCH_LIMIT}"
        words = [w for w in query.split() if len(w) >= 3]
        stages: list[tuple[str, str, dict[str, Any]]] = [
            ("contains", f"{target} CONTAINS toLower($q)", {"q": query}),
            (
                "prefix",
                f"{target} STARTS WITH toLower($q)",
                {"q": query[: max(3, len(query) // 2)]},
            ),
        ]
        if len(words) > 1:
            ors = " OR ".join(f"{target} CONTAINS toLower($w{i})" for i in range(len(words)))
            stages.append(("word", f"({ors})", {f"w{i}": w for i, w in enumerate(words)}))
        for stage, condition, params in stages:
            try:
                result = self._engine.execute(
                    base + condition + tail, params, timeout_s=self._timeout_s
                )
            except QueryError as e:
                return Observation(text=f"Error: {e.engine_message}", ok=False)
            if result.rows:
                values = [row[0] for row in result.rows]
                return Observation(
                    text=f"Matches ({stage}): "
                    + json.dumps(values, ensure_ascii=False, default=str),
                    rows=len(values),
                    latency_s=time.perf_counter() - started,
                )
        return Observation(
            text="No matching values.", rows=0, latency_s=time.perf_counter() - started
        )


def _engine_message(message: str) -> str:
    """The engine's message without the echo of the query (FalkorDB's ``errCtx``)."""
    return message.split(" errCtx:", 1)[0].removeprefix("errMsg: ").strip()


def _grounding_notes(
    original: str,
    query: str,
    repairs: list[Finding],
    findings: list[Finding],
    hint: str | None,
    *,
    submit: bool,
) -> str:
    """What grounding did to one query, in plain words ("" when it did nothing)."""
    lines: list[str] = []
    if repairs:
        done = "submitting" if submit else "running"
        lines.append(f"The harness repaired your query before {done} it:")
        for finding in repairs:
            assert finding.edit is not None
            change = finding.edit.replacement
            # a long replacement (a list of names) is in the query shown below: once is enough
            shown = f" (changed to {change!r})" if len(change) <= NOTE_REPLACEMENT_CHARS else ""
            lines.append(f"- {finding.message}{shown}")
        if query != original:
            lines.append(f"The query {'submitted' if submit else 'that ran'}: {query}")
    if hint:
        lines.append(f"Hint: {hint}")
    if findings:
        lines.append("Checking the query against the graph's schema and stored values found:")
        lines.extend(f"- {finding.message}" for finding in findings)
    return "\n".join(lines)

"""What the MCP tools return: pydantic results sent as structured content, each with a short text.

Rows are cut to a byte budget (:func:`~cypherturn.mcp_server._limits.fit_rows`)
and the result says how many were shown (:func:`cut_note`); :meth:`ToolResult.summary`
is the text for clients that read only the text content.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field

from cypherturn.grounding import Finding
from cypherturn.mcp_server._limits import DEFAULT_RESULT_BYTES, fit_rows
from cypherturn.strategies import Attempt, StrategyResult

__all__ = [
    "AskAttempt",
    "AskResult",
    "FindingView",
    "LabelView",
    "PatternView",
    "ReadResult",
    "RelationshipTypeView",
    "SchemaView",
    "SearchResult",
    "StoredValue",
    "ToolResult",
    "ValueMatches",
    "cut_note",
]


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
            note=cut_note(len(shown), len(rows), result_bytes),
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


def cut_note(shown: int, total: int, budget_bytes: int) -> str | None:
    """The note of a result cut to ``budget_bytes`` of rows (``None``: every row shown)."""
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

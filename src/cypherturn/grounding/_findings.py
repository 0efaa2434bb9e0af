"""The vocabulary of grounding: findings, edits, codes, and the context a check reads.

A check (:mod:`._check` holds the table of them) reads one query through a
:class:`CheckContext` and reports :class:`Finding` objects; a finding whose
fix is unambiguous carries an :class:`Edit`, and :func:`apply_edits` applies
the edits that do not overlap. The helpers at the end are shared by the checks:
name suggestions, quoting, and attaching an edit to a finding.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from cypherturn.cypher import Token, bracket_depths
from cypherturn.grounding._facts import QueryFacts, Span
from cypherturn.grounding._index import GraphIndex

__all__ = [
    "FINDING_CODES",
    "CheckContext",
    "CheckReport",
    "Edit",
    "Finding",
    "FindingCode",
    "apply_edits",
    "close_names",
    "give_edit",
    "name_finding",
    "quoted_name",
    "string_literal",
]

FindingCode = Literal[
    "unknown_label",
    "unknown_relationship_type",
    "unknown_property",
    "property_not_on_label",
    "reversed_direction",
    "wrong_endpoints",
    "undefined_variable",
    "sql_habit",
    "value_not_found",
    "engine_pitfall",
    "literal_type",
    "question_threshold",
    "answer_shape",
    "unbound_reference",
    "missing_label",
]
FINDING_CODES: tuple[str, ...] = FindingCode.__args__  # type: ignore[attr-defined]
"""Every finding code, in the order the check reports them."""


class Edit(BaseModel):
    """A deterministic textual repair: replace ``query[start:end]`` with ``replacement``.

    Attributes:
        start / end: source offsets in the query the finding was made on.
        replacement: the new text.
        reason: one line saying why the fix is unambiguous.
    """

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    replacement: str
    reason: str


class Finding(BaseModel):
    """One defect of a query, visible from the schema or the stored data.

    Attributes:
        code: the defect class (:data:`FINDING_CODES`).
        message: one sentence for the model and the user, naming what the graph has instead.
        span: ``[start, end)`` offsets of the offending text, when one token is to blame.
        suggestions: names or stored values the query probably meant, best first.
        edit: the deterministic repair, when the fix is unambiguous.
    """

    code: FindingCode
    message: str
    span: tuple[int, int] | None = None
    suggestions: list[str] = Field(default_factory=list)
    edit: Edit | None = None


class CheckReport(BaseModel):
    """The verdict of :func:`check_query` on one query.

    Attributes:
        parsed: cypherturn's parser read the query; False means no verdict.
        parse_error: the parser's message when it could not.
        findings: the defects found (SQL-habit hints are kept even without a parse).
    """

    parsed: bool
    parse_error: str | None = None
    findings: list[Finding] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the query parsed and nothing was found."""
        return self.parsed and not self.findings


def close_names(name: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` of ``candidates`` close to ``name``: equal ignoring case first, then by spelling."""
    pool = sorted(set(candidates))
    same_case = [c for c in pool if c.lower() == name.lower()]
    close = difflib.get_close_matches(name, pool, n=limit, cutoff=0.6)
    folded = {c.lower(): c for c in pool}
    close += [
        folded[c]
        for c in difflib.get_close_matches(name.lower(), list(folded), n=limit, cutoff=0.6)
    ]
    out: list[str] = []
    for c in [*same_case, *close]:
        if c not in out:
            out.append(c)
    return out[:limit]


def quoted_name(name: str) -> str:
    """``name`` as Cypher source: itself when a plain identifier, else in backticks."""
    if name.replace("_", "a").isalnum() and not name[0].isdigit():
        return name
    return "`" + name.replace("`", "``") + "`"


def name_finding(
    code: FindingCode, kind: str, name: str, span: Span, known: Iterable[str]
) -> Finding:
    """A finding for a name the graph does not have, repaired when one known name equals it but for case."""
    suggestions = close_names(name, known)
    same_case = [s for s in suggestions if s.lower() == name.lower()]
    edit = None
    if len(same_case) == 1:
        edit = Edit(
            start=span.start,
            end=span.end,
            replacement=quoted_name(same_case[0]),
            reason=f"the graph's only {kind} equal to {name!r} ignoring case",
        )
    hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
    return Finding(
        code=code,
        message=f"the graph has no {kind} {name!r}{hint}",
        span=(span.start, span.end),
        suggestions=suggestions,
        edit=edit,
    )


@dataclass
class CheckContext:
    """What every check reads of one query: its text, its tokens (tokenized once) and the graph.

    Attributes:
        query: the Cypher text.
        tokens: ``tokenize(query)``.
        index: the graph's index.
        facts: the query's facts; ``None`` when the parser could not read it.
        depths: bracket depth before each token (lenient: the tokens may not balance).
    """

    query: str
    tokens: Sequence[Token]
    index: GraphIndex
    facts: QueryFacts | None = None
    depths: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self.depths = bracket_depths(self.tokens, lenient=True)


def give_edit(finding: Finding, edit: Edit, note: str) -> None:
    """Attach ``edit`` to ``finding``: its replacement becomes the first suggestion, ``note`` ends the message."""
    finding.message += f"; {note}"
    finding.suggestions = [edit.replacement, *finding.suggestions]
    finding.edit = edit


def string_literal(value: str, quote: str) -> str:
    """``value`` as a Cypher string literal in ``quote`` quotes."""
    escaped = value.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return f"{quote}{escaped}{quote}"


def apply_edits(query: str, findings: Sequence[Finding]) -> tuple[str, list[Finding]]:
    """Apply the edits of ``findings`` that do not overlap, right to left.

    Args:
        query: the text the findings' offsets refer to.
        findings: findings, some carrying an :class:`Edit`.

    Returns:
        The repaired query and the findings whose edits were applied, in source order.
    """
    chosen: list[Finding] = []
    taken: list[tuple[int, int]] = []
    # (start, end): an insertion at the start of a replaced span goes first, so that it
    # is applied after the replacement and lands in front of its text
    edited = (f for f in findings if f.edit is not None)
    for finding in sorted(edited, key=lambda f: (f.edit.start, f.edit.end)):  # type: ignore[union-attr]
        edit = finding.edit
        assert edit is not None
        if any(edit.start < end and start < edit.end for start, end in taken):
            continue
        taken.append((edit.start, edit.end))
        chosen.append(finding)
    repaired = query
    for finding in reversed(chosen):
        edit = finding.edit
        assert edit is not None
        repaired = repaired[: edit.start] + edit.replacement + repaired[edit.end :]
    return repaired, chosen

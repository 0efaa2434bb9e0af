"""Check-and-repair rounds: the schema check and its deterministic repairs until nothing changes.

One repair can expose another (a flipped arrow makes a property check
possible), so edits are applied in rounds, each on the query the previous round
produced, with a fresh check after each. Shared by the ``ras+`` strategy and
the agent's grounded EXECUTE_CYPHER / SUBMIT_ANSWER.

After a query ran, :func:`ground_values` checks the literals of a result that
answers nothing (:func:`looks_empty`) against the stored values and reruns a
case-repaired query: one procedure for ``ras+``, the agent and the MCP server's
``read_cypher``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from cypherturn.graph import QueryResult
from cypherturn.grounding._check import check_query
from cypherturn.grounding._findings import CheckReport, Finding, apply_edits
from cypherturn.grounding._index import GraphIndex
from cypherturn.grounding._question import check_question
from cypherturn.grounding._reference import PreviousResult, bind_reference
from cypherturn.grounding._values import check_values

__all__ = [
    "MAX_REPAIR_ROUNDS",
    "ValueGrounding",
    "ground_values",
    "looks_empty",
    "question_repairs",
    "repair_query",
]

R = TypeVar("R")

MAX_REPAIR_ROUNDS = 3
"""Check-and-repair rounds at most; in practice a second round is rare and a third never changes more."""


def repair_query(
    query: str, index: GraphIndex, *, rounds: int = MAX_REPAIR_ROUNDS
) -> tuple[str, list[Finding], CheckReport]:
    """Check ``query`` and apply the unambiguous repairs, up to ``rounds`` rounds.

    Args:
        query: the Cypher text (an empty text is returned unchanged, unparsed).
        index: the graph's :class:`GraphIndex`.
        rounds: rounds at most (each: apply every non-overlapping edit, check again).

    Returns:
        ``(repaired query, repairs applied in order, check report of the repaired query)``;
        each repair is the :class:`Finding` whose :class:`Edit` was applied, with offsets
        into the query of its round.
    """
    if not query:
        return query, [], CheckReport(parsed=False)
    report = check_query(query, index)
    repairs: list[Finding] = []
    for _ in range(rounds):
        repaired, applied = apply_edits(query, report.findings)
        if not applied:
            break
        repairs += applied
        query = repaired
        report = check_query(query, index)
    return query, repairs, report


def _asked(
    question: str,
    query: str,
    index: GraphIndex,
    previous: PreviousResult | None,
    *,
    asked: bool,
    reference: bool,
    earlier: Sequence[str],
) -> list[Finding]:
    findings = check_question(question, query, index, earlier=earlier) if asked else []
    bound = bind_reference(question, query, previous, index) if reference else None
    return [*findings, bound] if bound is not None else findings


def question_repairs(
    query: str,
    question: str,
    index: GraphIndex,
    *,
    repair: bool = True,
    previous: PreviousResult | None = None,
    asked: bool = True,
    reference: bool = False,
    earlier: Sequence[str] = (),
) -> tuple[str, list[Finding], list[Finding]]:
    """The checks of a query against its question, and their repairs, then a fresh schema repair round.

    With ``asked``, :func:`~cypherturn.grounding.check_question` (a threshold the
    query does not compare, a count where the question asks for no number) and, with
    ``reference``, :func:`~cypherturn.grounding.bind_reference` (a follow-up that
    refers to the previous result, a query that does not). With ``repair``
    their edits are applied and the result goes through :func:`repair_query`.

    Args:
        query: the candidate Cypher (already through :func:`repair_query`).
        question: the question it answers.
        index: the graph's index.
        repair: apply the edits (False: findings only).
        previous: the previous turn's result, when it listed names of one label.
        asked: run :func:`~cypherturn.grounding.check_question`.
        reference: run the reference check.
        earlier: a conversation's earlier questions (for the answer-shape check).

    Returns:
        ``(query, repairs applied in order, findings left on the final query)``.
    """
    found = _asked(
        question, query, index, previous, asked=asked, reference=reference, earlier=earlier
    )
    if not repair:
        return query, [], found
    repaired, applied = apply_edits(query, found)
    if not applied:
        return query, [], found
    final, more, _ = repair_query(repaired, index)
    left = _asked(
        question, final, index, previous, asked=asked, reference=reference, earlier=earlier
    )
    return final, [*applied, *more], left


def looks_empty(result: QueryResult) -> bool:
    """True for no rows, or rows whose every value is null, 0, an empty list or string.

    ``count(...)`` over a pattern that matched nothing returns one row holding 0,
    the same non-answer as no rows, so both get the value check.
    """
    return all(value in (None, 0, "", []) for row in result.rows for value in row)


@dataclass(frozen=True, slots=True)
class ValueGrounding(Generic[R]):
    """What :func:`ground_values` made of one run.

    Attributes:
        query: the query whose outcome ``outcome`` is (the repaired one when a
            repair was applied and its rerun executed).
        outcome: the caller's run outcome for ``query``.
        repairs: the value findings whose edits were applied (empty: none).
        findings: the value findings that remain (literals no stored value matches).
    """

    query: str
    outcome: R
    repairs: list[Finding] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def ground_values(
    query: str,
    outcome: R,
    index: GraphIndex,
    *,
    run: Callable[[str], R],
    result_of: Callable[[R], QueryResult | None],
    repair: bool,
) -> ValueGrounding[R]:
    """Check an empty-looking result's literals against the stored values; rerun a repair.

    When ``result_of(outcome)`` executed and :func:`looks_empty`, every compared
    literal is looked up (:func:`~cypherturn.grounding.check_values`); with
    ``repair``, the unique case-insensitive substitutions are applied and the
    query is run again through ``run``. The rerun is kept when it executed, and
    its literals are checked again only if it is still empty.

    Args:
        query: the query that ran.
        outcome: what running it gave, in the caller's terms.
        index: the graph's index (its engine answers the lookups).
        run: runs a query and returns the caller's outcome (may raise).
        result_of: the :class:`QueryResult` of an outcome, ``None`` when it failed.
        repair: apply the value repairs.

    Returns:
        The :class:`ValueGrounding`; ``query`` and ``outcome`` unchanged with no
        findings when the result did not look empty or did not execute.
    """
    result = result_of(outcome)
    if result is None or not looks_empty(result):
        return ValueGrounding(query, outcome)
    findings = check_values(query, index)
    if repair:
        repaired, applied = apply_edits(query, findings)
        if applied:
            rerun = run(repaired)
            rerun_result = result_of(rerun)
            if rerun_result is not None:
                remaining = check_values(repaired, index) if looks_empty(rerun_result) else []
                return ValueGrounding(repaired, rerun, applied, remaining)
    return ValueGrounding(query, outcome, [], findings)

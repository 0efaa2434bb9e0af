"""Re-verification of stored sessions on a graph: every audit, from the file alone.

:func:`verify_session` is what a reader of a benchmark file can run to convince
itself that every gold is sound on its own engine: it re-executes each gold
and compares with the stored result, re-runs the text audits and the tie
probes, recomposes golds from their skeletons, and performs the perturbation
check without any generator state: it reads the member ids of the set a turn
builds on from the engine, removes members one at a time (and all but one),
recomposes the turn's gold on each changed set and requires at least one
result to change.
"""

from __future__ import annotations

from collections.abc import Sequence

from cypherturn.errors import DatasetError, QueryError
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.sessions._audit import (
    MAX_ROWS,
    AuditCode,
    AuditFinding,
    TieProbe,
    audit_agg_label,
    audit_consecutive_aggregation,
    audit_contrast_type,
    audit_duplicate_gold,
    audit_size,
    audit_ties,
    normalize_cypher,
)
from cypherturn.sessions._compare import compare_results
from cypherturn.sessions._compose import (
    ComposedTurn,
    compose_session,
    compose_turn,
    exclude_members,
)
from cypherturn.sessions._divergence import DivergenceAuditor
from cypherturn.sessions._format import Session, Turn
from cypherturn.sessions._vocab import Phenomenon, is_chain_dependent

__all__ = ["verify_session"]

_SINGLE_EXCLUSIONS = 12
_KEEP_ONE = 3


def _composed(session: Session) -> list[ComposedTurn] | None:
    skeletons = [t.skeleton for t in session.turns]
    if any(s is None for s in skeletons):
        return None
    try:
        return compose_session([s for s in skeletons if s is not None])
    except DatasetError:
        return None


def _depends(
    turn: Turn, composed: list[ComposedTurn], engine: GraphEngine, timeout_s: float
) -> AuditFinding | None:
    """None when removing members of the depends-on set changes the turn's executed result."""
    assert turn.depends_on is not None and turn.skeleton is not None
    focus = composed[turn.depends_on - 1].focus
    probe = "\n".join([*focus.clauses(), f"RETURN DISTINCT id({focus.var}) AS id"])
    members = sorted(row[0] for row in engine.execute(probe, timeout_s=timeout_s).rows)
    options: list[list[int]] = [[m] for m in members[:_SINGLE_EXCLUSIONS]]
    if len(members) > 1:
        options += [[x for x in members if x != m] for m in members[:_KEEP_ONE]]
    focuses = [c.focus for c in composed[: turn.turn_index - 1]]
    for excluded in options:
        changed = list(focuses)
        changed[turn.depends_on - 1] = exclude_members(focuses[turn.depends_on - 1], excluded)
        query = compose_turn(changed, turn.skeleton, turn.turn_index).gold
        result = engine.execute(query, timeout_s=timeout_s)
        if compare_results(turn.gold_result, result) is not None:
            return None
    return AuditFinding(
        turn.turn_index,
        AuditCode.NOT_CHAIN_DEPENDENT,
        f"the result did not change when members of turn {turn.depends_on}'s set were removed "
        f"({len(options)} perturbations tried)",
    )


def _stored_matches(turn: Turn, result: QueryResult) -> AuditFinding | None:
    why = compare_results(turn.gold_result, result)
    if why is None:
        return None
    return AuditFinding(
        turn.turn_index, AuditCode.RESULT_MISMATCH, f"stored gold result not reproduced: {why}"
    )


def verify_session(
    session: Session,
    engine: GraphEngine,
    *,
    timeout_s: float = 10.0,
    max_rows: int = MAX_ROWS,
    perturb: bool = True,
    divergence: DivergenceAuditor | None = None,
) -> list[AuditFinding]:
    """Run every audit on a stored session against the graph it was built on.

    Args:
        session: the session (generated or imported; skeleton-based checks are
            skipped for turns without skeletons).
        engine: an engine on the session's world graph.
        timeout_s: limit per query, seconds.
        max_rows: largest acceptable gold result.
        perturb: run the perturbation check on chain-dependent turns.
        divergence: the engine-divergence auditor to use (its probes are cached per
            graph; default: a new one on ``engine``).

    Returns:
        Every finding; an empty list means the session passes.
    """
    findings: list[AuditFinding] = []
    composed = _composed(session)
    ties: dict[str, TieProbe] = {}
    auditor = divergence or DivergenceAuditor(engine, timeout_s)
    turns: Sequence[Turn] = session.turns
    by_index = {t.turn_index: t for t in turns}
    previous: Turn | None = None
    for turn in turns:
        index = turn.turn_index
        prior = by_index.get(turn.depends_on) if turn.depends_on is not None else None
        findings += _text_findings(turn, previous, prior, composed)
        previous = turn
        try:
            result = engine.execute(turn.gold_cypher, timeout_s=timeout_s, row_cap=max_rows + 1)
        except QueryError as e:
            findings.append(AuditFinding(index, AuditCode.EXECUTION_ERROR, e.engine_message))
            continue
        findings += audit_size(index, len(result.rows), max_rows)
        mismatch = _stored_matches(turn, result)
        if mismatch is not None:
            findings.append(mismatch)
        findings += audit_ties(index, turn.gold_cypher, engine, timeout_s=timeout_s, cache=ties)
        try:
            findings += auditor.findings(index, turn.gold_cypher, turn.gold_result)
        except QueryError as e:
            findings.append(
                AuditFinding(index, AuditCode.EXECUTION_ERROR, f"probe failed: {e.engine_message}")
            )
        dependent = turn.depends_on is not None and is_chain_dependent(turn.chain_mode)
        if perturb and dependent and composed is not None and turn.skeleton is not None:
            try:
                finding = _depends(turn, composed, engine, timeout_s)
            except QueryError as e:
                finding = AuditFinding(
                    index, AuditCode.EXECUTION_ERROR, f"perturbation failed: {e.engine_message}"
                )
            if finding is not None:
                findings.append(finding)
    return findings


def _text_findings(
    turn: Turn, previous: Turn | None, prior: Turn | None, composed: list[ComposedTurn] | None
) -> list[AuditFinding]:
    """The audits of a turn's gold that read its text, without running it.

    Args:
        turn: the audited turn.
        previous: the turn before it (``None`` for the first).
        prior: the turn it depends on (``None`` when independent).
        composed: the session's skeletons composed, one per turn (``None``: no skeletons).
    """
    index = turn.turn_index
    findings = audit_agg_label(index, turn.phenomena, turn.gold_cypher)
    findings += audit_duplicate_gold(
        index, turn.gold_cypher, previous.gold_cypher if previous else None
    )
    findings += audit_consecutive_aggregation(
        index, turn.phenomena, previous.phenomena if previous else None
    )
    if Phenomenon.CONTRAST in turn.phenomena and prior is not None:
        findings += audit_contrast_type(index, turn.gold_cypher, prior.gold_cypher)
    if composed is not None and normalize_cypher(composed[index - 1].gold) != normalize_cypher(
        turn.gold_cypher
    ):
        findings.append(
            AuditFinding(
                index, AuditCode.SKELETON_MISMATCH, "gold differs from its skeleton's composition"
            )
        )
    return findings

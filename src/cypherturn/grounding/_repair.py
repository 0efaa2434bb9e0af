"""Check-and-repair rounds: the schema check and its deterministic repairs until nothing changes.

One repair can expose another (a flipped arrow makes a property check
possible), so edits are applied in rounds, each on the query the previous round
produced, with a fresh check after each. Shared by the ``ras+`` strategy and
the agent's grounded EXECUTE_CYPHER / SUBMIT_ANSWER.
"""

from __future__ import annotations

from cypherturn.grounding._check import CheckReport, Finding, apply_edits, check_query
from cypherturn.grounding._index import GraphIndex

__all__ = ["MAX_REPAIR_ROUNDS", "repair_query"]

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

"""A stratified subset of a benchmark: the same number of sessions per world, balanced.

CypherTurn's full benchmark (721 sessions here, 1,200 in the paper) is out of reach
for a local model on a small machine, and the first sessions of each world are
not a fair sample (a world's sessions are built persona by persona). The
subset takes ``per_world`` sessions of every world, chosen greedily so that the
personas are used as evenly as possible across the whole subset and, among the
sessions of an equally used persona, the one whose phenomena the subset has
seen least is taken. Deterministic: the same benchmark gives the same subset, in
every process. The novelty of a session is summed exactly (as fractions): a float
sum over a set of phenomenon names depends on the set's iteration order, which
follows Python's hash seed, so near-ties broke differently from one process to
the next.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

from cypherturn.errors import ConfigError
from cypherturn.sessions import Session

__all__ = ["STRATIFIED_PATTERN", "stratified_sessions"]

STRATIFIED_PATTERN = re.compile(r"stratified:(\d+)")
"""A ``--sessions`` term asking for a stratified subset: ``stratified:K``, K sessions per world."""


def stratified_sessions(sessions: Sequence[Session], per_world: int) -> list[Session]:
    """``per_world`` sessions of every world, personas and phenomena balanced.

    Args:
        sessions: the pool, in benchmark order.
        per_world: sessions taken from each world (all of a world's when it has fewer).

    Returns:
        The chosen sessions, in benchmark order.

    Raises:
        ConfigError: ``per_world`` < 1.
    """
    if per_world < 1:
        raise ConfigError(
            f"a stratified subset needs at least 1 session per world, got {per_world}"
        )
    worlds: dict[str, list[int]] = {}
    for position, session in enumerate(sessions):
        worlds.setdefault(session.world, []).append(position)
    personas: Counter[str] = Counter()
    phenomena: Counter[str] = Counter()
    chosen: list[int] = []
    for positions in worlds.values():
        left = list(positions)
        for _ in range(min(per_world, len(left))):

            def rank(position: int) -> tuple[int, Fraction]:
                session = sessions[position]
                seen = {str(p) for turn in session.turns for p in turn.phenomena}
                novelty = sum((Fraction(1, 1 + phenomena[p]) for p in seen), Fraction(0))
                return (-personas[str(session.persona)], novelty)

            best = max(left, key=rank)
            left.remove(best)
            chosen.append(best)
            session = sessions[best]
            personas[str(session.persona)] += 1
            phenomena.update({str(p) for turn in session.turns for p in turn.phenomena})
    return [sessions[position] for position in sorted(chosen)]

"""Benchmark statistics: sessions and turns per world, phenomenon, chain mode and persona (CypherTurn Fig. 2)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from cypherturn.sessions._format import Session
from cypherturn.sessions._vocab import ChainMode, Persona, Phenomenon, category_of

__all__ = ["BenchmarkStats", "Tally", "compute_stats"]


class Tally(BaseModel):
    """Sessions and turns of one group."""

    sessions: int = 0
    turns: int = 0


class BenchmarkStats(BaseModel):
    """The distributions of a set of sessions.

    Attributes:
        sessions / turns: totals.
        mean_turns / min_turns / max_turns: session length statistics.
        lengths: number of sessions per session length.
        worlds / personas: sessions and turns per world and per persona.
        phenomena: turns per phenomenon (a turn counts once per phenomenon it has;
            first turns have none); every phenomenon is listed, zeros included.
        categories: turns per phenomenon category.
        chain_modes: turns per chain mode, every mode listed.
        ambiguous_turns: turns carrying a disambiguation reply.
        chain_dependent_turns: turns whose query needs an earlier result.
    """

    sessions: int
    turns: int
    mean_turns: float
    min_turns: int
    max_turns: int
    lengths: dict[int, int] = Field(default_factory=dict)
    worlds: dict[str, Tally] = Field(default_factory=dict)
    personas: dict[str, Tally] = Field(default_factory=dict)
    phenomena: dict[str, int] = Field(default_factory=dict)
    categories: dict[str, int] = Field(default_factory=dict)
    chain_modes: dict[str, int] = Field(default_factory=dict)
    ambiguous_turns: int = 0
    chain_dependent_turns: int = 0


def compute_stats(sessions: Iterable[Session]) -> BenchmarkStats:
    """Count sessions and turns along every dimension of the benchmark.

    Example:
        >>> compute_stats([]).sessions
        0
    """
    worlds: dict[str, Tally] = {}
    personas: dict[str, Tally] = {p.value: Tally() for p in Persona}
    phenomena: Counter[str] = Counter({p.value: 0 for p in Phenomenon})
    modes: Counter[str] = Counter({m.value: 0 for m in ChainMode})
    categories: Counter[str] = Counter()
    lengths: Counter[int] = Counter()
    ambiguous = dependent = 0
    for session in sessions:
        n = len(session.turns)
        lengths[n] += 1
        for tally in (
            worlds.setdefault(session.world, Tally()),
            personas.setdefault(session.persona.value, Tally()),
        ):
            tally.sessions += 1
            tally.turns += n
        for turn in session.turns:
            modes[turn.chain_mode.value] += 1
            for phenomenon in turn.phenomena:
                phenomena[phenomenon.value] += 1
                categories[category_of(phenomenon).value] += 1
            ambiguous += turn.ambiguity_info is not None
            dependent += turn.depends_on is not None
    total_sessions = sum(lengths.values())
    total_turns = sum(k * v for k, v in lengths.items())
    return BenchmarkStats(
        sessions=total_sessions,
        turns=total_turns,
        mean_turns=total_turns / total_sessions if total_sessions else 0.0,
        min_turns=min(lengths, default=0),
        max_turns=max(lengths, default=0),
        lengths=dict(sorted(lengths.items())),
        worlds=worlds,
        personas=personas,
        phenomena=dict(phenomena),
        categories=dict(categories),
        chain_modes=dict(modes),
        ambiguous_turns=ambiguous,
        chain_dependent_turns=dependent,
    )

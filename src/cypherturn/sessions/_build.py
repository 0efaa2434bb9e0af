"""The benchmark build: plan sessions over the worlds, then generate and verify them (CypherTurn §2).

:func:`plan_build` fixes, from the seed alone, every session's world, persona and
length: by default 721 sessions and 5,927 turns (mean 8.2 turns per session,
2 to 12 turns), personas drawn uniformly and balanced (72 or 73 sessions each),
the sessions spread evenly over the seven worlds. :func:`build_sessions` then
loads each world once, generates its sessions with one
:class:`~._generator.SessionGenerator` (one engine, every gold executed) and
reports what the audits rejected along the way.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine, GraphSchema
from cypherturn.sessions._divergence import DIVERGENCE_CODES
from cypherturn.sessions._format import Session
from cypherturn.sessions._generator import SessionGenerator
from cypherturn.sessions._vocab import Persona

__all__ = [
    "DEFAULT_SESSIONS",
    "DEFAULT_TURNS",
    "DEFAULT_WORLDS",
    "MAX_TURNS",
    "MIN_TURNS",
    "BuildReport",
    "GraphProvider",
    "PlannedSession",
    "build_sessions",
    "plan_build",
]

log = logging.getLogger(__name__)

DEFAULT_WORLDS: tuple[str, ...] = (
    "ancient_empire",
    "magic_academy",
    "ocean_kingdom",
    "stellar_colony",
    "arcane_archive",
    "celestial_court",
    "merchant_harbor",
)
"""The seven CypherTurn worlds, in the paper's order (§2.1)."""

DEFAULT_SESSIONS = 721
"""Sessions of the released benchmark (§2, Table 1)."""

DEFAULT_TURNS = 5_927
"""Turns of the released benchmark (§2.4)."""

MIN_TURNS = 2
MAX_TURNS = 12

# Session lengths cluster around 8-10 turns with a tail of short sessions; the plan then
# nudges individual lengths until the total is exact (mean 5,927 / 721 = 8.22).
_LENGTH_WEIGHTS: dict[int, float] = {
    2: 0.02, 3: 0.02, 4: 0.03, 5: 0.05, 6: 0.07, 7: 0.12,
    8: 0.18, 9: 0.20, 10: 0.18, 11: 0.08, 12: 0.05,
}  # fmt: skip


class PlannedSession(BaseModel):
    """One session to generate: where, who, how long."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    world: str
    index: int
    persona: Persona
    length: int


def _lengths(rng: random.Random, sessions: int, turns: int) -> list[int]:
    sizes = list(_LENGTH_WEIGHTS)
    lengths = rng.choices(sizes, weights=list(_LENGTH_WEIGHTS.values()), k=sessions)
    while (excess := sum(lengths) - turns) != 0:
        step = -1 if excess > 0 else 1
        movable = [i for i, n in enumerate(lengths) if MIN_TURNS <= n + step <= MAX_TURNS]
        lengths[rng.choice(movable)] += step
    return lengths


def plan_build(
    *,
    seed: int = 0,
    worlds: Sequence[str] = DEFAULT_WORLDS,
    sessions: int = DEFAULT_SESSIONS,
    turns: int | None = None,
) -> list[PlannedSession]:
    """Plan a build: each session's world, persona and number of turns, from the seed alone.

    Args:
        seed: the build seed.
        worlds: world names; sessions are split evenly, the first worlds taking the remainder.
        sessions: number of sessions.
        turns: total number of turns; default ``round(sessions * 5927 / 721)``.

    Returns:
        The planned sessions, world by world, in world order.

    Raises:
        ConfigError: no worlds, no sessions, or a turn total no session lengths can reach.
    """
    if not worlds:
        raise ConfigError("a build needs at least one world")
    if sessions < 1:
        raise ConfigError(f"a build needs at least one session, not {sessions}")
    total = round(sessions * DEFAULT_TURNS / DEFAULT_SESSIONS) if turns is None else turns
    if not sessions * MIN_TURNS <= total <= sessions * MAX_TURNS:
        raise ConfigError(
            f"{total} turns cannot be spread over {sessions} sessions of {MIN_TURNS}-{MAX_TURNS} turns"
        )
    rng = random.Random(f"plan/{seed}")
    lengths = _lengths(rng, sessions, total)
    cycle = list(Persona)
    personas = (cycle * (sessions // len(cycle) + 1))[:sessions]
    rng.shuffle(personas)
    plan: list[PlannedSession] = []
    base, extra = divmod(sessions, len(worlds))
    for w, world in enumerate(worlds):
        for index in range(base + (1 if w < extra else 0)):
            n = len(plan)
            plan.append(
                PlannedSession(
                    session_id=f"{world}-{seed}-{index:03d}",
                    world=world,
                    index=index,
                    persona=personas[n],
                    length=lengths[n],
                )
            )
    return plan


GraphProvider = Callable[[str], tuple[GraphEngine, GraphSchema]]
"""World name -> (engine on a graph holding that world, the world's declared schema)."""


@dataclass(slots=True)
class BuildReport:
    """What a build did.

    Attributes:
        seconds: wall time of generation and verification, graph loading included.
        queries: gold, probe and perturbation queries executed.
        rejections: candidate turns dropped, by audit code (``does_not_fit``: a
            phenomenon that did not fit the conversation's state).
        world_seconds: wall time per world.
        divergence: golds written per engine-divergence class (:mod:`._divergence`),
            every class listed; each written gold is audited again once its session is
            complete, so a nonzero count is a generator defect.
    """

    seconds: float = 0.0
    queries: int = 0
    rejections: Counter[str] = field(default_factory=Counter)
    world_seconds: dict[str, float] = field(default_factory=dict)
    divergence: dict[str, int] = field(
        default_factory=lambda: {code.value: 0 for code in DIVERGENCE_CODES}
    )


def build_sessions(
    plan: Sequence[PlannedSession],
    provider: GraphProvider,
    *,
    seed: int = 0,
    graph_seed: int = 0,
    graph_scale: float = 1.0,
    on_session: Callable[[Session], None] | None = None,
) -> tuple[list[Session], BuildReport]:
    """Generate and verify the planned sessions, loading each world once.

    Args:
        plan: from :func:`plan_build`.
        provider: gives each world's engine (graph loaded) and declared schema.
        seed: the build seed (the plan's), recorded in every session.
        graph_seed / graph_scale: how the worlds were built, recorded in every session.
        on_session: called after each session (progress reporting).

    Returns:
        The sessions in plan order, and the :class:`BuildReport`.

    Raises:
        DatasetError: a world cannot be profiled or a session cannot be completed.
        GraphError: the engine failed.
    """
    report = BuildReport()
    started = time.perf_counter()
    sessions: list[Session] = []
    by_world: dict[str, list[PlannedSession]] = {}
    for entry in plan:
        by_world.setdefault(entry.world, []).append(entry)
    for world, entries in by_world.items():
        world_started = time.perf_counter()
        engine, schema = provider(world)
        generator = SessionGenerator(world, engine, schema)
        for entry in entries:
            session = generator.session(
                session_id=entry.session_id,
                persona=entry.persona,
                length=entry.length,
                seed=seed,
                key=entry.session_id,
            )
            session = session.model_copy(
                update={"graph_seed": graph_seed, "graph_scale": graph_scale}
            )
            for turn in session.turns:
                for finding in generator.divergence.findings(
                    turn.turn_index, turn.gold_cypher, turn.gold_result
                ):
                    report.divergence[finding.code.value] += 1
            sessions.append(session)
            if on_session is not None:
                on_session(session)
        report.queries += generator.queries + generator.divergence.queries
        report.rejections.update(generator.rejections)
        report.world_seconds[world] = time.perf_counter() - world_started
        log.info("%s: %d sessions in %.2f s", world, len(entries), report.world_seconds[world])
    report.seconds = time.perf_counter() - started
    return sessions, report

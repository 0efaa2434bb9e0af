"""A tiny hand-built graph and sessions over it, shared by tests/agent, tests/protocols, tests/runner.

Heroes belong to guilds; 25 recruits make results long enough to exercise the
10-row (guided history) and 20-row (current turn) truncations. The ``heroes``
and ``session`` fixtures are defined here once and imported by those conftests.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cypherturn.graph import GraphEngine
from cypherturn.sessions import (
    AmbiguityInfo,
    AmbiguityKind,
    ChainMode,
    GoldResult,
    Persona,
    Phenomenon,
    Session,
    Turn,
)

HEROES = [
    ("Ada Stormborn", 90, "Silver Hand"),
    ("Cora Nightshade", 85, "Silver Hand"),
    ("Bran Ironfist", 70, "Iron Circle"),
    ("Dain Bronzebeard", 60, "Iron Circle"),
] + [(f"Recruit {i:02d}", i, "Iron Circle") for i in range(1, 26)]

WORLD = "heroes"


def load_heroes(engine: GraphEngine) -> None:
    """Write the fixture graph into an empty engine graph."""
    engine.write(
        "CREATE (:Guild {name: 'Silver Hand', founded_year: 1201}), "
        "(:Guild {name: 'Iron Circle', founded_year: 1333})"
    )
    engine.write(
        "UNWIND $rows AS r MATCH (g:Guild {name: r[2]}) "
        "CREATE (:Hero {name: r[0], power: r[1]})-[:MEMBER_OF {since: 1400}]->(g)",
        {"rows": [list(h) for h in HEROES]},
    )


def _turn(engine: GraphEngine, index: int, utterance: str, gold: str, **extra: object) -> Turn:
    result = engine.execute(gold)
    return Turn(
        turn_index=index,
        utterance=utterance,
        gold_cypher=gold,
        gold_result=GoldResult(columns=result.columns, rows=result.rows),
        **extra,  # type: ignore[arg-type]
    )


def make_session(engine: GraphEngine, session_id: str = "heroes-1") -> Session:
    """A 4-turn session: list, CONTRAST, COUNT (ambiguous), FIRST back to turn 1."""
    turns = [
        _turn(
            engine,
            1,
            "Who is in the Iron Circle?",
            "MATCH (h:Hero)-[:MEMBER_OF]->(:Guild {name: 'Iron Circle'}) RETURN h.name AS name",
            chain_mode=ChainMode.NONE,
        ),
        _turn(
            engine,
            2,
            "And which heroes are not in it?",
            "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild) WHERE g.name <> 'Iron Circle' "
            "RETURN h.name AS name",
            chain_mode=ChainMode.CONTRAST,
            phenomena=[Phenomenon.CONTRAST],
            depends_on=1,
        ),
        _turn(
            engine,
            3,
            "How many of those are strong?",
            "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild) WHERE g.name <> 'Iron Circle' "
            "AND h.power > 80 RETURN count(h) AS n",
            chain_mode=ChainMode.AGGREGATE,
            phenomena=[Phenomenon.COUNT],
            depends_on=2,
            ambiguity_info=AmbiguityInfo(
                kind=AmbiguityKind.UNSPECIFIED,
                description="'strong' threshold",
                simulator_reply="Strong means a power above 80.",
            ),
        ),
        _turn(
            engine,
            4,
            "Back to the first list: which guild was the first one in?",
            "MATCH (h:Hero)-[:MEMBER_OF]->(g:Guild) WHERE h.name = 'Bran Ironfist' "
            "RETURN g.name AS guild",
            chain_mode=ChainMode.PIVOT,
            phenomena=[Phenomenon.FIRST],
            depends_on=1,
        ),
    ]
    return Session(session_id=session_id, world=WORLD, persona=Persona.JOURNALIST, turns=turns)


@pytest.fixture
def heroes(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """An engine on a fresh graph holding the heroes world."""
    engine = make_engine("heroes")
    load_heroes(engine)
    return engine


@pytest.fixture
def session(heroes: GraphEngine) -> Session:
    """The 4-turn heroes session, gold results computed on the engine."""
    return make_session(heroes)

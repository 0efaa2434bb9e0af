"""Benchmark statistics."""

from __future__ import annotations

from cypherturn.sessions import (
    ChainMode,
    GoldResult,
    Persona,
    Phenomenon,
    Session,
    Turn,
    compute_stats,
)


def _turn(index: int, phenomena: list[Phenomenon], mode: ChainMode, depends: int | None) -> Turn:
    return Turn(
        turn_index=index,
        utterance="u",
        phenomena=phenomena,
        chain_mode=mode,
        depends_on=depends,
        gold_cypher=f"RETURN {index}",
        gold_result=GoldResult(columns=["x"], rows=[[index]]),
    )


def test_counts_along_every_dimension() -> None:
    a = Session(
        session_id="a",
        world="w1",
        persona=Persona.STUDENT,
        turns=[
            _turn(1, [], ChainMode.NONE, None),
            _turn(2, [Phenomenon.COUNT], ChainMode.AGGREGATE, 1),
            _turn(3, [Phenomenon.TOPIC_SHIFT], ChainMode.TOPIC_SHIFT, None),
        ],
    )
    b = Session(
        session_id="b",
        world="w2",
        persona=Persona.STUDENT,
        turns=[
            _turn(1, [], ChainMode.NONE, None),
            _turn(2, [Phenomenon.FILTER], ChainMode.NARROW, 1),
        ],
    )
    stats = compute_stats([a, b])
    assert (stats.sessions, stats.turns, stats.mean_turns) == (2, 5, 2.5)
    assert (stats.min_turns, stats.max_turns, stats.lengths) == (2, 3, {2: 1, 3: 1})
    assert stats.worlds["w1"].turns == 3 and stats.worlds["w2"].sessions == 1
    assert stats.personas["student"].sessions == 2 and stats.personas["journalist"].sessions == 0
    assert (
        stats.phenomena["COUNT"] == 1
        and stats.phenomena["PIVOT"] == 0
        and len(stats.phenomena) == 13
    )
    assert stats.chain_modes == {
        "none": 2, "topic_shift": 1, "expand": 0, "pivot": 0, "agg_numeric": 0, "aggregate": 1,
        "contrast": 0, "value_narrow": 0, "narrow": 1,
    }  # fmt: skip
    assert stats.categories == {"aggregation": 1, "discourse": 1, "filtering": 1}
    assert stats.chain_dependent_turns == 2 and stats.ambiguous_turns == 0

"""The build plan and the default build: 721 sessions, 5,927 turns, the paper's distributions."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from session_graphs import WorldGraphs

from cypherturn.errors import ConfigError
from cypherturn.sessions import (
    DEFAULT_SESSIONS,
    DEFAULT_TURNS,
    DEFAULT_WORLDS,
    DIVERGENCE_CODES,
    BenchmarkStats,
    ChainMode,
    Persona,
    Phenomenon,
    Session,
    build_sessions,
    compute_stats,
    is_chain_dependent,
    plan_build,
    write_sessions,
)


def test_default_plan_matches_the_paper() -> None:
    plan = plan_build()
    assert len(plan) == DEFAULT_SESSIONS == 721
    assert sum(p.length for p in plan) == DEFAULT_TURNS == 5_927
    assert all(2 <= p.length <= 12 for p in plan)
    personas = Counter(p.persona for p in plan)
    assert set(personas) == set(Persona) and all(66 <= n <= 77 for n in personas.values())
    assert Counter(p.world for p in plan) == dict.fromkeys(DEFAULT_WORLDS, 103)
    assert len({p.session_id for p in plan}) == 721
    assert plan == plan_build(seed=0)
    assert plan != plan_build(seed=1)


def test_plan_scales_and_refuses_impossible_totals() -> None:
    small = plan_build(worlds=["magic_academy"], sessions=10)
    assert len(small) == 10 and sum(p.length for p in small) == round(10 * 5927 / 721)
    exact = plan_build(worlds=["a", "b", "c"], sessions=4, turns=20)
    assert [p.world for p in exact] == ["a", "a", "b", "c"] and sum(p.length for p in exact) == 20
    with pytest.raises(ConfigError, match="cannot be spread"):
        plan_build(sessions=3, turns=100)
    with pytest.raises(ConfigError, match="at least one world"):
        plan_build(worlds=[])


@pytest.fixture(scope="module")
def default_build(worlds: WorldGraphs) -> tuple[list[Session], BenchmarkStats]:
    sessions, report = build_sessions(plan_build(), worlds.provide)
    assert report.queries >= DEFAULT_TURNS
    # the build report's proof that no written gold depends on an engine divergence
    assert report.divergence == {code.value: 0 for code in DIVERGENCE_CODES}
    return sessions, compute_stats(sessions)


def test_default_build_distributions(default_build: tuple[list[Session], BenchmarkStats]) -> None:
    _, stats = default_build
    assert (stats.sessions, stats.turns) == (721, 5927)
    assert round(stats.mean_turns, 1) == 8.2 and stats.min_turns >= 2 and stats.max_turns <= 12
    assert set(stats.worlds) == set(DEFAULT_WORLDS)
    assert all(t.sessions == 103 for t in stats.worlds.values())
    assert all(66 <= t.sessions <= 77 for t in stats.personas.values())
    assert all(stats.phenomena[p.value] > 0 for p in Phenomenon)
    assert all(stats.chain_modes[m.value] > 0 for m in ChainMode)
    non_first = stats.turns - stats.sessions
    assert sum(stats.phenomena.values()) == non_first
    # balanced over the 13 phenomena: none below half or above twice its share
    share = non_first / len(Phenomenon)
    assert all(share / 2 <= n <= share * 2 for n in stats.phenomena.values()), stats.phenomena
    assert stats.ambiguous_turns > 100


def test_default_build_turns_are_verified_and_consistent(
    default_build: tuple[list[Session], BenchmarkStats],
) -> None:
    sessions, _ = default_build
    for session in sessions:
        assert session.graph_seed == 0 and session.graph_scale == 1.0 and session.seed == 0
        for turn in session.turns:
            assert 0 < turn.gold_result.row_count <= 1000
            if is_chain_dependent(turn.chain_mode):
                assert turn.depends_on is not None and turn.depends_on < turn.turn_index
            else:
                assert turn.depends_on is None
        aggregations = [
            bool(
                {Phenomenon.COUNT, Phenomenon.AGG_SUM, Phenomenon.AGG_AVG, Phenomenon.AGG_MAX}
                & set(t.phenomena)
            )
            for t in session.turns
        ]
        assert not any(a and b for a, b in itertools.pairwise(aggregations))


def test_build_is_byte_identical_for_a_seed(worlds: WorldGraphs, tmp_path: Path) -> None:
    plan = plan_build(seed=5, worlds=["stellar_colony", "arcane_archive"], sessions=8)
    first, _ = build_sessions(plan, worlds.provide, seed=5)
    second, _ = build_sessions(plan, worlds.provide, seed=5)
    write_sessions(tmp_path / "a.jsonl", first)
    write_sessions(tmp_path / "b.jsonl", second)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    other, _ = build_sessions(plan_build(seed=6, worlds=["stellar_colony", "arcane_archive"], sessions=8),
                              worlds.provide, seed=6)  # fmt: skip
    assert [s.to_line() for s in other] != [s.to_line() for s in first]

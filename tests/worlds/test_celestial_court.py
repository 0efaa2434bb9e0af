"""Celestial Court: SERVES_UNDER chains of arbitrary depth, rank = depth, salaries fall with rank."""

from __future__ import annotations

from statistics import mean

import pytest
from world_graphs import Indexed, built


def chain_length(g: Indexed, official: int) -> int:
    hops = 0
    while g.out["SERVES_UNDER"][official]:
        (official,) = g.out["SERVES_UNDER"][official]
        hops += 1
    return hops


@pytest.mark.parametrize(("seed", "scale"), [(0, 1.0), (4, 1.0), (0, 0.05)])
def test_hierarchy_is_a_forest_at_least_five_hops_deep(seed: int, scale: float) -> None:
    g = Indexed(built("celestial_court", seed, scale))
    officials = g.keys("Official")
    assert all(
        len(g.out["SERVES_UNDER"][o]) == (0 if g.props[o]["rank"] == 1 else 1) for o in officials
    )
    assert all(g.props[o]["rank"] == chain_length(g, o) + 1 for o in officials)
    assert max(chain_length(g, o) for o in officials) >= 5
    assert len({g.props[o]["rank"] for o in officials}) >= 6  # depths vary


def test_sovereigns_head_the_ministries_and_salaries_fall_with_rank() -> None:
    g = Indexed(built("celestial_court"))
    sovereigns = [o for o in g.keys("Official") if g.props[o]["rank"] == 1]
    assert sorted(m for o in sovereigns for m in g.out["HEADS"][o]) == sorted(g.keys("Ministry"))
    by_rank: dict[int, list[int]] = {}
    for o in g.keys("Official"):
        by_rank.setdefault(g.props[o]["rank"], []).append(g.props[o]["jade_salary"])
    means = [mean(by_rank[r]) for r in sorted(by_rank)]
    assert means == sorted(means, reverse=True)

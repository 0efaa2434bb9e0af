"""Stellar Colony: settlement tree with tiers, and ALLIED_WITH only between peer factions."""

from __future__ import annotations

import pytest
from world_graphs import Indexed, built


def depth(g: Indexed, colony: int) -> int:
    steps = 0
    while g.into["SETTLED"][colony]:
        (colony,) = g.into["SETTLED"][colony]
        steps += 1
    return steps


@pytest.mark.parametrize("seed", [0, 5])
def test_settlement_tree_and_tiers(seed: int) -> None:
    g = Indexed(built("stellar_colony", seed))
    colonies = g.keys("Colony")
    assert all(len(g.into["SETTLED"][c]) <= 1 for c in colonies)
    assert all(g.props[c]["tier"] == depth(g, c) + 1 for c in colonies)
    assert {g.props[c]["tier"] for c in colonies} == {1, 2, 3}
    assert all(len(g.into["HAS_CITY"][c]) == 1 for c in g.keys("City"))
    assert all(len(g.into["INHABITED_BY"][c]) == 1 for c in g.keys("Citizen"))


@pytest.mark.parametrize("seed", [0, 5])
def test_alliances_join_peer_factions_only(seed: int) -> None:
    data = built("stellar_colony", seed)
    g = Indexed(data)
    alliances = [r for r in data.relationships if r.type == "ALLIED_WITH"]
    assert len(alliances) >= 10
    pairs = set()
    for rel in alliances:
        assert g.label[rel.start] == g.label[rel.end] == "Faction"
        assert rel.start != rel.end
        assert g.props[rel.start]["tier"] == g.props[rel.end]["tier"]
        (home_a,) = g.out["HEADQUARTERED_IN"][rel.start]
        (home_b,) = g.out["HEADQUARTERED_IN"][rel.end]
        assert g.props[home_a]["tier"] == g.props[home_b]["tier"]
        pairs.add(frozenset((rel.start, rel.end)))
    assert len(pairs) == len(alliances)  # no pair allied twice

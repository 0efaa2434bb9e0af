"""Ocean Kingdom: a central City fanning out to three sub-graphs that reconverge (duplicate paths)."""

from __future__ import annotations

from world_graphs import Indexed, built


def test_city_reaches_a_creature_directly_and_through_a_tamer() -> None:
    g = Indexed(built("ocean_kingdom"))
    doubled = 0
    for city in g.keys("City"):
        direct = set(g.out["INHABITED_BY"][city])
        via_tamers = {c for citizen in g.into["RESIDENT_OF"][city] for c in g.out["TAMES"][citizen]}
        doubled += len(direct & via_tamers)
    assert doubled >= 5


def test_treasures_reconverge_on_their_city() -> None:
    g = Indexed(built("ocean_kingdom"))
    back_home = sum(
        1
        for t in g.keys("Treasure")
        for finder in g.into["DISCOVERED"][t]
        if set(g.out["RESIDENT_OF"][finder]) & set(g.out["STORED_IN"][t])
    )
    assert back_home >= 3


def test_city_is_the_hub_of_the_three_sub_graphs() -> None:
    g = Indexed(built("ocean_kingdom"))
    assert all(len(g.into["GOVERNS"][c]) == 1 for c in g.keys("City"))
    assert all(len(g.out["RESIDENT_OF"][c]) == 1 for c in g.keys("Citizen"))
    assert all(len(g.into["INHABITED_BY"][c]) >= 1 for c in g.keys("Creature"))
    assert all(len(g.out["STORED_IN"][t]) == 1 for t in g.keys("Treasure"))
    assert all(len(g.into["GUARDS"][a]) >= 1 for a in g.keys("Artifact"))

"""Ancient Empire: the directed 4-cycle, control structure and numeric edge properties."""

from __future__ import annotations

from collections import Counter

from world_graphs import Indexed, built

from cypherturn.worlds import PropertyType, get_world

NUMERIC = {PropertyType.INTEGER, PropertyType.FLOAT}


def test_directed_cycle_empire_province_city_legion_empire() -> None:
    g = Indexed(built("ancient_empire"))
    cycles = 0
    for empire in g.keys("Empire"):
        for province in g.out["CONTROLS"][empire]:
            for city in g.out["HAS_CITY"][province]:
                for legion in g.out["RAISES"][city]:
                    cycles += g.out["SWORN_TO"][legion].count(empire)
    assert cycles >= 1
    # Some legions swear to a rival, so following the cycle can also leave the empire.
    sworn_elsewhere = sum(
        1
        for legion in g.keys("Legion")
        for city in g.into["RAISES"][legion]
        for province in g.into["HAS_CITY"][city]
        if g.into["CONTROLS"][province] != g.out["SWORN_TO"][legion]
    )
    assert cycles + sworn_elsewhere == len(g.keys("Legion"))


def test_every_province_has_one_ruler_and_one_capital() -> None:
    data = built("ancient_empire")
    g = Indexed(data)
    assert all(len(g.into["CONTROLS"][p]) == 1 for p in g.keys("Province"))
    assert all(len(g.into["HAS_CITY"][c]) == 1 for c in g.keys("City"))
    capitals = Counter(
        r.start for r in data.relationships if r.type == "HAS_CITY" and r.properties["is_capital"]
    )
    assert set(capitals) == set(g.keys("Province")) and set(capitals.values()) == {1}


def test_annexation_date_matches_the_control_year() -> None:
    data = built("ancient_empire")
    g = Indexed(data)
    since = {r.end: r.properties["since_year"] for r in data.relationships if r.type == "CONTROLS"}
    dated = [p for p in g.keys("Province") if "annexed_on" in g.props[p]]
    assert dated and all(g.props[p]["annexed_on"].year == since[p] for p in dated)


def test_seven_labels_and_numeric_properties_on_at_least_five_relationship_types() -> None:
    spec = get_world("ancient_empire").SPEC  # type: ignore[attr-defined]
    assert len(spec.labels) == 7
    types = {r.type for r in spec.relationships}
    assert len(types) >= 7
    numeric = {r.type for r in spec.relationships if any(p.type in NUMERIC for p in r.properties)}
    assert len(numeric) >= 5

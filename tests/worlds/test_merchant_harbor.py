"""Merchant Harbor: every Invoice bridges one trader, buyer and storehouse; numeric edges everywhere."""

from __future__ import annotations

import pytest
from world_graphs import Indexed, built

from cypherturn.worlds import PropertyType, get_world


@pytest.mark.parametrize("seed", [0, 3])
def test_every_invoice_reaches_a_trader_a_buyer_and_a_storehouse(seed: int) -> None:
    g = Indexed(built("merchant_harbor", seed))
    for invoice in g.keys("Invoice"):
        assert [g.label[k] for k in g.out["ISSUED_BY"][invoice]] == ["Trader"]
        assert [g.label[k] for k in g.out["ISSUED_TO"][invoice]] == ["Buyer"]
        assert [g.label[k] for k in g.out["DISPATCHED_FROM"][invoice]] == ["Storehouse"]
        assert g.out["INCLUDES"][invoice]


def test_invoice_value_is_the_sum_of_its_lines_and_due_dates_follow_status() -> None:
    data = built("merchant_harbor")
    g = Indexed(data)
    totals: dict[int, float] = {}
    for rel in data.relationships:
        if rel.type == "INCLUDES":
            totals[rel.start] = (
                totals.get(rel.start, 0.0)
                + rel.properties["quantity"] * rel.properties["unit_price"]
            )
    for invoice in g.keys("Invoice"):
        props = g.props[invoice]
        assert abs(props["gold_value"] - totals[invoice]) <= 0.5
        assert ("due_on" in props) == (props["status"] != "paid")


def test_every_relationship_type_has_numeric_properties() -> None:
    spec = get_world("merchant_harbor").SPEC  # type: ignore[attr-defined]
    numeric = {PropertyType.INTEGER, PropertyType.FLOAT}
    assert all(sum(p.type in numeric for p in r.properties) >= 1 for r in spec.relationships)
    assert sum(len(r.properties) for r in spec.relationships) >= 18

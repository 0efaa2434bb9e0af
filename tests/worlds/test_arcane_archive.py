"""Arcane Archive: the linear chain of labels and deep REFERENCES citation chains between tomes."""

from __future__ import annotations

import functools

import pytest
from world_graphs import Indexed, built


@pytest.mark.parametrize("seed", [0, 2, 9])
def test_citation_chains_are_deep_and_point_to_older_tomes(seed: int) -> None:
    g = Indexed(built("arcane_archive", seed))

    @functools.cache
    def longest(tome: int) -> int:
        return max((1 + longest(cited) for cited in g.out["REFERENCES"][tome]), default=0)

    assert max(longest(t) for t in g.keys("Tome")) >= 4
    for tome in g.keys("Tome"):
        for cited in g.out["REFERENCES"][tome]:
            assert g.props[cited]["transcription_year"] <= g.props[tome]["transcription_year"]


def test_citation_count_is_the_number_of_incoming_references() -> None:
    g = Indexed(built("arcane_archive"))
    assert all(g.props[t]["citation_count"] == len(g.into["REFERENCES"][t]) for t in g.keys("Tome"))


def test_label_chain_sanctum_scriptorium_scholar_tome_conclave() -> None:
    data = built("arcane_archive")
    g = Indexed(data)
    chain = {(g.label[r.start], r.type, g.label[r.end]) for r in data.relationships}
    assert {
        ("Scriptorium", "AFFILIATED_WITH", "Sanctum"),
        ("Scholar", "WORKS_IN", "Scriptorium"),
        ("Scholar", "INSCRIBED", "Tome"),
        ("Tome", "PRESENTED_AT", "Conclave"),
        ("Tome", "REFERENCES", "Tome"),
    } <= chain
    assert all(g.into["INSCRIBED"][t] for t in g.keys("Tome"))

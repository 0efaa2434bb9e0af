"""Helpers for the synthetic-world tests: build once, index a GraphData, run the topology cases."""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from cypherturn.graph import GraphData, GraphEngine
from cypherturn.worlds import get_world

SEVEN = (
    "ancient_empire",
    "magic_academy",
    "ocean_kingdom",
    "stellar_colony",
    "arcane_archive",
    "celestial_court",
    "merchant_harbor",
)
SYNTHETIC = (*SEVEN, "fraud")
CASES = json.loads(
    Path(__file__).with_name("world_topology_cases.json").read_text(encoding="utf-8")
)


@functools.cache
def built(name: str, seed: int = 0, scale: float = 1.0) -> GraphData:
    """The world ``name`` built once per test session (callers must not mutate it)."""
    return get_world(name).build(seed=seed, scale=scale)


class Indexed:
    """Lookups over a GraphData: primary label, properties and typed adjacency per node key."""

    def __init__(self, data: GraphData) -> None:
        self.label = {n.key: n.labels[0] for n in data.nodes}
        self.labels = {n.key: n.labels for n in data.nodes}
        self.props = {n.key: n.properties for n in data.nodes}
        self.out: dict[str, dict[Any, list[Any]]] = defaultdict(lambda: defaultdict(list))
        self.into: dict[str, dict[Any, list[Any]]] = defaultdict(lambda: defaultdict(list))
        self.rels = data.relationships
        for rel in data.relationships:
            self.out[rel.type][rel.start].append(rel.end)
            self.into[rel.type][rel.end].append(rel.start)

    def keys(self, label: str) -> list[Any]:
        """Keys of the nodes whose primary label is ``label``."""
        return [k for k, lab in self.label.items() if lab == label]


def run_case(engine: GraphEngine, case: dict[str, Any]) -> tuple[Any, Any]:
    """Run one topology case; returns (observed first cell, expected description)."""
    result = engine.execute(case["cypher"])
    value = result.rows[0][0] if result.rows else None
    expect = case["expect"]
    if isinstance(expect, dict):
        other = engine.execute(expect["equals"]).rows[0][0]
        return value, other
    return value, expect

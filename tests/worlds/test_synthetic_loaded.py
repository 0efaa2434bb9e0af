"""Synthetic worlds loaded into the real engine: declared schema = introspected schema, topology in Cypher.

The topology checks are data: ``world_topology_cases.json`` holds, per world, a
Cypher query and what its first cell must be (``positive``, ``zero``, or equal
to another query's value); ``rows`` means the query must return rows (the RAS
paper's Table 5 fraud questions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from world_graphs import CASES, SYNTHETIC, run_case

from cypherturn.graph import GraphEngine, GraphSchema
from cypherturn.worlds import SyntheticWorld, get_world, load_world


def loaded(make_engine: Callable[..., GraphEngine], name: str) -> GraphEngine:
    engine = make_engine(name)
    world = get_world(name)
    stats = load_world(engine, world)
    assert (stats.nodes, stats.relationships) == (
        world.info.expected_nodes,
        world.info.expected_relationships,
    )
    return engine


def summary(schema: GraphSchema, primary: Callable[[str], str]) -> dict[str, Any]:
    return {
        "labels": {s.label: (s.count, s.properties) for s in schema.labels},
        "types": {s.type: (s.count, s.properties) for s in schema.relationship_types},
        "patterns": {(primary(p.source), p.type, primary(p.target)) for p in schema.patterns},
    }


@pytest.mark.parametrize("name", SYNTHETIC)
def test_loaded_schema_is_the_declared_schema_and_topology_holds(
    make_engine: Callable[..., GraphEngine], name: str
) -> None:
    engine = loaded(make_engine, name)
    world = get_world(name)
    assert isinstance(world, SyntheticWorld)
    spec = world.SPEC
    introspected = engine.schema()
    # Patterns through secondary labels (Fraud's Mule, CashIn, ...) are reported per label;
    # they must all be explained by a declared pattern between the primary labels.
    assert summary(introspected, spec.primary_of) == summary(
        world.declared_schema(), spec.primary_of
    )
    if not any(decl.secondary for decl in spec.labels):
        assert {(p.source, p.type, p.target) for p in introspected.patterns} == {
            (p.source, p.type, p.target) for p in world.declared_schema().patterns
        }
    cases = [case for case in CASES if case["world"] == name]
    assert cases
    for case in cases:
        if case["expect"] == "rows":
            assert engine.execute(case["cypher"]).row_count > 0, case["check"]
            continue
        observed, expected = run_case(engine, case)
        if expected == "positive":
            assert observed > 0, case["check"]
        elif expected == "zero":
            assert observed == 0, case["check"]
        else:
            assert observed == expected, case["check"]


def test_indexes_exist_on_identifying_properties(make_engine: Callable[..., GraphEngine]) -> None:
    engine = loaded(make_engine, "celestial_court")
    rows = engine.execute("CALL db.indexes() YIELD label, properties RETURN label, properties").rows
    indexed = {(label, prop) for label, props in rows for prop in props}
    assert {("Official", "name"), ("Decree", "name"), ("Ministry", "name")} <= indexed

"""Properties every synthetic world shares: sizes, declaration, determinism, scaling, nulls, types."""

from __future__ import annotations

import io
from collections import Counter

import pytest
from world_graphs import SEVEN, SYNTHETIC, built

from cypherturn.errors import ConfigError
from cypherturn.worlds import (
    PropertyType,
    SyntheticWorld,
    check_conformance,
    get_world,
    write_graph_jsonl,
)


def export_bytes(name: str, seed: int, scale: float = 1.0) -> bytes:
    buffer = io.StringIO()
    write_graph_jsonl(get_world(name).build(seed=seed, scale=scale), buffer)
    return buffer.getvalue().encode("utf-8")


@pytest.mark.parametrize("name", SEVEN)
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_default_size_is_that_of_the_released_graphs(name: str, seed: int) -> None:
    data = built(name, seed)
    assert 370 <= len(data.nodes) <= 490
    assert 480 <= len(data.relationships) <= 1_100


@pytest.mark.parametrize("name", SYNTHETIC)
def test_catalogue_counts_are_those_of_seed_zero(name: str) -> None:
    world = get_world(name)
    data = built(name)
    assert world.info.kind == "synthetic"
    assert (world.info.expected_nodes, world.info.expected_relationships) == (
        len(data.nodes),
        len(data.relationships),
    )
    assert world.info.description and world.info.topology


@pytest.mark.parametrize("name", SYNTHETIC)
@pytest.mark.parametrize("seed", [0, 3])
def test_graph_follows_its_declaration(name: str, seed: int) -> None:
    world = get_world(name)
    assert isinstance(world, SyntheticWorld)
    check_conformance(built(name, seed), world.SPEC)


@pytest.mark.parametrize("name", SYNTHETIC)
def test_declared_schema_describes_the_default_build(name: str) -> None:
    world = get_world(name)
    schema = world.declared_schema()
    data = built(name)
    assert {s.label: s.count for s in schema.labels} == dict(data.label_counts())
    assert {s.type: s.count for s in schema.relationship_types} == dict(data.type_counts())
    primary = {n.key: n.labels[0] for n in data.nodes}
    used = {(primary[r.start], r.type, primary[r.end]) for r in data.relationships}
    declared = {(p.source, p.type, p.target) for p in schema.patterns}
    assert used == declared  # every declared pattern occurs, nothing else does
    present: dict[str, set[str]] = {}
    for node in data.nodes:
        for label in node.labels:
            present.setdefault(label, set()).update(node.properties)
    assert {s.label: set(s.properties) for s in schema.labels} == present


@pytest.mark.parametrize("name", SYNTHETIC)
def test_same_seed_gives_identical_bytes_other_seed_differs(name: str) -> None:
    first = export_bytes(name, seed=11)
    assert first == export_bytes(name, seed=11)
    assert first != export_bytes(name, seed=12)


@pytest.mark.parametrize("name", SEVEN)
def test_scale_grows_and_shrinks_the_world(name: str) -> None:
    base = built(name)
    double = built(name, 0, 2.0)
    small = built(name, 0, 0.3)
    assert 1.8 * len(base.nodes) <= len(double.nodes) <= 2.2 * len(base.nodes)
    assert (
        1.6 * len(base.relationships) <= len(double.relationships) <= 2.4 * len(base.relationships)
    )
    assert len(small.nodes) < 0.5 * len(base.nodes)
    world = get_world(name)
    assert isinstance(world, SyntheticWorld)
    check_conformance(double, world.SPEC)
    check_conformance(small, world.SPEC)


@pytest.mark.parametrize("name", SEVEN)
def test_all_five_value_types_and_some_missing_values(name: str) -> None:
    world = get_world(name)
    assert isinstance(world, SyntheticWorld)
    declared = {p.type for decl in world.SPEC.labels for p in decl.properties}
    declared |= {p.type for rel in world.SPEC.relationships for p in rel.properties}
    assert declared == set(PropertyType)
    data = built(name)
    missing: Counter[str] = Counter()
    for node in data.nodes:
        decl = world.SPEC.label(node.labels[0])
        missing.update(
            f"{decl.label}.{p.name}" for p in decl.properties if p.name not in node.properties
        )
    assert len(missing) >= 2, "optional properties should be absent on some nodes"
    for key, count in missing.items():
        label = key.split(".")[0]
        assert count < data.label_counts()[label], f"{key} is never present"


@pytest.mark.parametrize("name", SEVEN)
def test_names_are_unique_per_label(name: str) -> None:
    data = built(name)
    seen = Counter((n.labels[0], n.properties["name"]) for n in data.nodes)
    assert max(seen.values()) == 1


@pytest.mark.parametrize("scale", [0, -1.0, float("nan"), float("inf")])
def test_bad_scale_is_a_config_error(scale: float) -> None:
    with pytest.raises(ConfigError, match="scale"):
        get_world("magic_academy").build(scale=scale)


def test_bad_seed_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="seed"):
        get_world("ocean_kingdom").build(seed="1")  # type: ignore[arg-type]

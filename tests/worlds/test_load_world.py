"""load_world: build, load, verify read-back counts, idempotence, refusal of foreign content."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.errors import DatasetError
from cypherturn.graph import (
    GraphData,
    GraphEngine,
    GraphSchema,
    NodeRecord,
    RelationshipRecord,
)
from cypherturn.worlds import WorldInfo, get_world, load_world


class _Triangle:
    """A real three-node world; ``builds`` counts calls to :meth:`build`.

    ``fixed``: a dataset, whose catalogue counts hold whatever the seed; else a
    synthetic world without catalogue counts.
    """

    def __init__(self, *, fixed: bool) -> None:
        self.builds = 0
        self._info = WorldInfo(
            name="triangle",
            title="Triangle",
            kind="dataset" if fixed else "synthetic",
            description="Three people who know each other in a cycle.",
            source="tests/worlds/test_load.py",
            expected_nodes=3 if fixed else None,
            expected_relationships=3 if fixed else None,
        )

    @property
    def info(self) -> WorldInfo:
        return self._info

    def declared_schema(self) -> GraphSchema:
        return GraphSchema()

    def build(self, *, seed: int = 0, scale: float = 1.0, path: Path | None = None) -> GraphData:
        self.builds += 1
        nodes = [NodeRecord(i, ("Person",), {"name": f"p{i}", "seed": seed}) for i in range(3)]
        rels = [RelationshipRecord(i, (i + 1) % 3, "KNOWS") for i in range(3)]
        return GraphData("triangle", nodes, rels, [("Person", "name")], "test")


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed-counts", "counts-from-build"])
def test_load_then_skip_then_replace(make_engine: Callable[..., GraphEngine], fixed: bool) -> None:
    engine = make_engine()
    world = _Triangle(fixed=fixed)

    first = load_world(engine, world, seed=7)
    assert (first.graph, first.nodes, first.relationships, first.skipped) == (
        engine.graph,
        3,
        3,
        False,
    )
    assert engine.execute("MATCH (p:Person {name: 'p1'}) RETURN p.seed").rows == [[7]]

    second = load_world(engine, world, seed=7)
    assert second.skipped and (second.nodes, second.relationships) == (3, 3)
    # a world with fixed counts is not even built to decide the skip
    assert world.builds == (1 if fixed else 2)
    assert (engine.node_count(), engine.relationship_count()) == (3, 3)

    third = load_world(engine, world, seed=8, replace=True)
    assert not third.skipped
    assert (engine.node_count(), engine.relationship_count()) == (3, 3)
    assert engine.execute("MATCH (p:Person {name: 'p1'}) RETURN p.seed").rows == [[8]]


def test_refuses_a_graph_with_other_content(make_engine: Callable[..., GraphEngine]) -> None:
    engine = make_engine()
    engine.write("CREATE (:Stranger {name: 'x'})")
    with pytest.raises(
        DatasetError, match=r"already holds 1 nodes and 0 relationships.*replace=True"
    ):
        load_world(engine, _Triangle(fixed=True))
    assert engine.node_count() == 1  # untouched
    stats = load_world(engine, _Triangle(fixed=True), replace=True)
    assert (stats.nodes, stats.relationships) == (3, 3)
    assert engine.execute("MATCH (s:Stranger) RETURN count(s)").rows == [[0]]


def test_build_errors_pass_through(make_engine: Callable[..., GraphEngine], tmp_path: Path) -> None:
    engine = make_engine()
    with pytest.raises(DatasetError, match="does not exist"):
        load_world(engine, get_world("healthcare"), path=tmp_path / "nowhere")
    assert not engine.exists()


def test_catalogue_counts_of_a_synthetic_world_hold_only_for_seed_0(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine()
    world = get_world("stellar_colony")
    other_seed = load_world(engine, world, seed=3)
    catalogue = (world.info.expected_nodes, world.info.expected_relationships)
    assert (other_seed.nodes, other_seed.relationships) != catalogue
    again = load_world(engine, world, seed=3)
    assert again.skipped and (again.nodes, again.relationships) == (
        other_seed.nodes,
        other_seed.relationships,
    )

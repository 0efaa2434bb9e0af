"""Nothing half-loaded (issue 43): a graph is visible only when complete, and a partial one is never served."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cypherturn import api
from cypherturn.errors import DatasetError, QueryError
from cypherturn.graph import (
    EmbeddedFalkorDB,
    FalkorDBEngine,
    GraphData,
    GraphEngine,
    NodeRecord,
    RelationshipRecord,
)
from cypherturn.worlds import WorldInfo, get_world, registered_world


def people(n: int) -> GraphData:
    nodes = [NodeRecord(i, ("Person",), {"name": f"P{i}"}) for i in range(n)]
    rels = [RelationshipRecord(i, i + 1, "KNOWS") for i in range(n - 1)]
    return GraphData(name="people", nodes=nodes, relationships=rels, indexes=[("Person", "name")])


def staging_graphs(server: EmbeddedFalkorDB, graph: str) -> list[str]:
    return [g for g in server.client().list_graphs() if g.startswith(f"{graph}.loading.")]


def test_a_failed_load_leaves_the_served_graph_as_it_was(
    make_engine: Callable[..., GraphEngine],
    embedded_server: EmbeddedFalkorDB,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    engine = make_engine("atomic")
    engine.load(people(3))
    writes = 0
    real = FalkorDBEngine._write_rows

    def failing(self: FalkorDBEngine, query: str, params: dict[str, Any]) -> list[list[Any]]:
        nonlocal writes
        writes += 1
        if writes == 3:
            raise QueryError("the engine went away mid-load", query)
        return real(self, query, params)

    monkeypatch.setattr(FalkorDBEngine, "_write_rows", failing)
    with pytest.raises(QueryError, match="mid-load"):
        engine.load(people(50), batch_size=10, replace=True)
    assert (engine.node_count(), engine.relationship_count()) == (3, 2)
    assert staging_graphs(embedded_server, engine.graph) == []


def test_a_replacing_load_swaps_the_whole_graph_in(
    make_engine: Callable[..., GraphEngine], embedded_server: EmbeddedFalkorDB
) -> None:
    engine = make_engine("atomic")
    engine.load(people(3))
    stats = engine.load(people(40), batch_size=7, replace=True)
    assert (stats.nodes, stats.relationships) == (40, 39)
    assert engine.execute("MATCH (p:Person {name: 'P39'}) RETURN count(p)").rows == [[1]]
    assert engine.execute("CALL db.indexes() YIELD label RETURN label").rows == [["Person"]]
    assert staging_graphs(embedded_server, engine.graph) == []


def test_a_load_killed_mid_write_is_never_served(
    embedded_server: EmbeddedFalkorDB, tmp_path: Path
) -> None:
    graph = f"killed_{uuid.uuid4().hex[:8]}"
    loader = subprocess.Popen(
        [sys.executable, "-m", "cypherturn", "load", "fraud", "--graph", graph],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    try:
        while not staging_graphs(embedded_server, graph):
            assert loader.poll() is None, "the load finished before it could be killed"
            assert time.monotonic() < deadline, "the load never started writing"
            time.sleep(0.05)
        os.kill(loader.pid, signal.SIGKILL)
        loader.wait(timeout=10)
    finally:
        if loader.poll() is None:
            loader.kill()
    assert graph not in embedded_server.client().list_graphs()
    assert staging_graphs(embedded_server, graph), "the killed loader's staging graph is left"
    engine = FalkorDBEngine(embedded_server.client(), graph, spec=f"embedded#{graph}")
    try:
        stats = api.load("fraud", graph=graph)
        info = get_world("fraud").info
        assert (stats.nodes, stats.relationships) == (
            info.expected_nodes,
            info.expected_relationships,
        )
        assert staging_graphs(embedded_server, graph) == []
    finally:
        engine.drop()
        engine.close()


class _TwoPeople:
    """A world of two people who know each other."""

    info = WorldInfo(
        name="two_people",
        title="Two people",
        kind="dataset",
        description="Two people.",
        source="tests/api/test_atomic_load.py",
        expected_nodes=2,
        expected_relationships=1,
    )

    def build(self, seed: int = 0, scale: float = 1.0, path: Path | None = None) -> GraphData:
        return people(2)


@pytest.fixture
def two_people(embedded_server: EmbeddedFalkorDB) -> Iterator[FalkorDBEngine]:
    with registered_world("two_people", lambda: _TwoPeople()):
        engine = FalkorDBEngine(embedded_server.client(), "two_people", spec="embedded#two_people")
        engine.drop()
        yield engine
        engine.drop()
        engine.close()


def test_a_partial_graph_of_a_known_world_is_refused_and_a_complete_one_served(
    two_people: FalkorDBEngine,
) -> None:
    two_people.write("CREATE (:Person {name: 'P0'})")
    refused = pytest.raises(
        DatasetError, match=r"holds 1 nodes and 0 relationships, not the 2 and 1"
    )
    with refused, api.connect("two_people"):
        pass
    two_people.drop()
    with api.connect("two_people") as engine:
        assert (engine.node_count(), engine.relationship_count()) == (2, 1)
    with api.connect("two_people") as engine:
        assert engine.node_count() == 2

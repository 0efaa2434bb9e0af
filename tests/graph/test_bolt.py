"""The Neo4j driver path, against a real Bolt server: the embedded FalkorDB with BOLT_PORT.

FalkorDB's Bolt endpoint is experimental (docs/design/engine-errors.md): it
answers EXPLAIN without a query type, so the engine must detect that and fall
back to the tokenizer gate; it routes a READ session to the graph named after
the first key of the request's metadata, which is ``mode`` (hence the graph
name used here); it sends no error text; and it crashes on temporal values, so
the fixture graph holds none.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cypherturn.errors import EngineConnectionError, QueryError, WriteRefusedError
from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine, Neo4jEngine, open_engine

GRAPH = "mode"


@pytest.fixture(scope="module")
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorDB]:
    server = EmbeddedFalkorDB(tmp_path_factory.mktemp("bolt") / "falkordb", bolt_port=0).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def falkor(bolt_server: EmbeddedFalkorDB) -> Iterator[FalkorDBEngine]:
    engine = FalkorDBEngine(bolt_server.client(), GRAPH, spec="bolt-fixture")
    engine.write(
        "CREATE (a:Person {name: 'Ann', age: 30})-[:KNOWS {since: 2001}]->"
        "(b:Person {name: 'Bob', age: 40}), (b)-[:LIVES_IN]->(:City {name: 'Oslo'})"
    )
    yield engine
    engine.drop()
    engine.close()


@pytest.fixture(scope="module")
def bolt(bolt_server: EmbeddedFalkorDB, falkor: FalkorDBEngine) -> Iterator[Neo4jEngine]:
    engine = open_engine(
        f"bolt://falkordb:{bolt_server.password}@127.0.0.1:{bolt_server.bolt_port}", GRAPH
    )
    assert isinstance(engine, Neo4jEngine)
    yield engine
    engine.close()


def test_spec_has_no_password(bolt: Neo4jEngine, bolt_server: EmbeddedFalkorDB) -> None:
    assert bolt.spec == f"bolt://falkordb@127.0.0.1:{bolt_server.bolt_port}#{GRAPH}"


def test_rows_nodes_and_paths(bolt: Neo4jEngine) -> None:
    result = bolt.execute(
        "MATCH p = (a:Person)-[:KNOWS]->(b:Person) RETURN a.name AS a, b.age AS age, b, p"
    )
    assert result.columns == ["a", "age", "b", "p"]
    name, age, node, path = result.rows[0]
    assert (name, age) == ("Ann", 40)
    assert node["_kind"] == "node" and node["labels"] == ["Person"]
    assert node["properties"] == {"name": "Bob", "age": 40}
    assert path["_kind"] == "path"
    assert [n["properties"]["name"] for n in path["nodes"]] == ["Ann", "Bob"]
    assert path["relationships"][0]["type"] == "KNOWS"
    assert path["relationships"][0]["properties"] == {"since": 2001}
    assert path["relationships"][0]["start"] == path["nodes"][0]["id"]


def test_no_explain_query_type_is_detected(bolt: Neo4jEngine) -> None:
    bolt.execute("RETURN 1")
    assert bolt.explain_checked is False


@pytest.mark.parametrize(
    "query",
    ["CREATE (:Person {name: 'Eve'})", "MATCH (n) DETACH DELETE n", "MATCH (n) SET n.x = 1"],
)
def test_writes_refused_by_tokenizer(bolt: Neo4jEngine, falkor: FalkorDBEngine, query: str) -> None:
    before = (falkor.node_count(), falkor.relationship_count())
    with pytest.raises(WriteRefusedError):
        bolt.execute(query)
    assert (falkor.node_count(), falkor.relationship_count()) == before


def test_row_cap(bolt: Neo4jEngine) -> None:
    result = bolt.execute("UNWIND range(1, 30) AS x RETURN x", row_cap=7)
    assert result.truncated and result.rows == [[x] for x in range(1, 8)]


def test_engine_error_is_a_query_error(bolt: Neo4jEngine) -> None:
    with pytest.raises(QueryError) as caught:
        bolt.execute("MATCH (n RETURN n")
    # FalkorDB's Bolt endpoint replaces every engine message by a generic one.
    assert caught.value.engine_message == "An unknown error occurred"
    assert bolt.execute("RETURN 2").rows == [[2]]


def test_schema_matches_the_redis_protocol_view(bolt: Neo4jEngine, falkor: FalkorDBEngine) -> None:
    assert bolt.schema() == falkor.schema()
    assert (bolt.node_count(), bolt.relationship_count()) == (3, 2)


def test_wrong_password(bolt_server: EmbeddedFalkorDB) -> None:
    with pytest.raises(EngineConnectionError):
        open_engine(f"bolt://falkordb:wrong@127.0.0.1:{bolt_server.bolt_port}", GRAPH)


def test_unreachable_bolt_port(tmp_path: Path) -> None:
    with pytest.raises(EngineConnectionError):
        open_engine("bolt://neo4j:pw@127.0.0.1:1", GRAPH)


def test_awaiting_indexes_works_over_bolt(bolt: Neo4jEngine, falkor: FalkorDBEngine) -> None:
    falkor.write("CREATE INDEX FOR (p:Person) ON (p.age)")
    bolt.await_indexes(timeout_s=30)
    assert bolt._pending_indexes() == 0
    status = falkor.execute("CALL db.indexes() YIELD label, status RETURN label, status").rows
    assert ["Person", "OPERATIONAL"] in status

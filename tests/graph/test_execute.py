"""Untrusted execution: read-only refusal (both gate layers), timeout, row cap."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from cypherturn.errors import ConfigError, QueryTimeoutError, WriteRefusedError
from cypherturn.graph import FalkorDBEngine, GraphEngine

WRITES = [
    ("CREATE (:Person {name: 'Eve'})", "CREATE"),
    ("MERGE (n:Person {name: 'Zed'}) RETURN n", "MERGE"),
    ("MATCH (n:Person) SET n.age = 99", "SET"),
    ("MATCH (n:Person) REMOVE n.age", "REMOVE"),
    ("MATCH (n:Person) WHERE NOT (n)--() DELETE n", "DELETE"),
    ("MATCH (n:Person) DETACH DELETE n", "DETACH DELETE"),
    ("CREATE INDEX FOR (n:Person) ON (n.age)", "CREATE"),
    (
        "CALL db.idx.fulltext.createNodeIndex('Person', 'name')",
        "CALL db.idx.fulltext.createNodeIndex",
    ),
]


@pytest.fixture
def people(make_engine: Callable[..., GraphEngine]) -> FalkorDBEngine:
    engine = make_engine("exec")
    engine.write(
        "CREATE (a:Person {name: 'Ann', age: 30})-[:KNOWS]->(b:Person {name: 'Bob', age: 40}),"
        " (:Person {name: 'Cy', age: 50})"
    )
    assert isinstance(engine, FalkorDBEngine)
    return engine


def _snapshot(engine: GraphEngine) -> tuple[int, int, list[list[object]]]:
    rows = engine.execute("MATCH (n) RETURN labels(n), properties(n) ORDER BY n.name").rows
    return engine.node_count(), engine.relationship_count(), rows


@pytest.mark.parametrize(("query", "clause"), WRITES, ids=[c for _, c in WRITES])
def test_write_refused_graph_unchanged(people: FalkorDBEngine, query: str, clause: str) -> None:
    before = _snapshot(people)
    with pytest.raises(WriteRefusedError) as caught:
        people.execute(query)
    assert caught.value.clause == clause
    assert clause in caught.value.engine_message
    assert _snapshot(people) == before


@pytest.mark.parametrize(("query", "clause"), WRITES, ids=[c for _, c in WRITES])
def test_engine_refuses_writes_behind_the_tokenizer(
    people: FalkorDBEngine, query: str, clause: str
) -> None:
    # The final guard: bypass the tokenizer and send the write to GRAPH.RO_QUERY.
    before = _snapshot(people)
    with pytest.raises(WriteRefusedError) as caught:
        people._run_read_only(query, {}, 10.0, 100)
    assert "read-only" in caught.value.engine_message
    assert _snapshot(people) == before


def test_timeout_stops_query_and_engine_keeps_serving(people: FalkorDBEngine) -> None:
    started = time.monotonic()
    with pytest.raises(QueryTimeoutError) as caught:
        people.execute(
            "UNWIND range(1, 100000) AS x UNWIND range(1, 100000) AS y RETURN count(*)",
            timeout_s=0.3,
        )
    assert time.monotonic() - started < 10
    assert caught.value.engine_message == "Query timed out"
    assert people.execute("MATCH (n:Person) RETURN count(n)").rows == [[3]]


def test_cartesian_product_times_out(people: FalkorDBEngine) -> None:
    with pytest.raises(QueryTimeoutError):
        people.execute(
            "UNWIND range(1, 3000) AS a UNWIND range(1, 3000) AS b UNWIND range(1, 3000) AS c "
            "RETURN count(*)",
            timeout_s=0.3,
        )
    assert people.execute("RETURN 1").rows == [[1]]


def test_row_cap_truncates(people: FalkorDBEngine) -> None:
    result = people.execute("UNWIND range(1, 25) AS x RETURN x", row_cap=10)
    assert result.truncated
    assert result.rows == [[x] for x in range(1, 11)]
    exact = people.execute("UNWIND range(1, 10) AS x RETURN x", row_cap=10)
    assert not exact.truncated
    assert exact.row_count == 10
    assert people.execute("UNWIND range(1, 5) AS x RETURN x", row_cap=0).rows == []


def test_params_and_columns(people: FalkorDBEngine) -> None:
    result = people.execute(
        "MATCH (n:Person) WHERE n.age >= $min AND n.name IN $names RETURN n.name AS name ORDER BY name",
        {"min": 35, "names": ["Bob", "Cy", "q'\"uote"]},
    )
    assert result.columns == ["name"]
    assert result.rows == [["Bob"], ["Cy"]]
    assert result.elapsed_ms > 0


def test_bad_limits_are_config_errors(people: FalkorDBEngine) -> None:
    with pytest.raises(ConfigError):
        people.execute("RETURN 1", timeout_s=0)
    with pytest.raises(ConfigError):
        people.execute("RETURN 1", row_cap=-1)


def test_schema_cache_follows_a_reload_by_another_client(people: FalkorDBEngine) -> None:
    # Another client rebuilds the graph with labels and keys in a different order;
    # the schema-version check must keep names right (the raw client's query() would not).
    assert people.execute("MATCH (n:Person {name: 'Ann'}) RETURN n").rows[0][0]["labels"] == [
        "Person"
    ]
    other = FalkorDBEngine(people.client, people.graph, spec="other")
    other.drop()
    other.write("CREATE (:Zebra {stripes: 7}), (:Person {name: 'Dee'})")
    rows = people.execute("MATCH (n) RETURN n ORDER BY id(n)").rows
    assert [(r[0]["labels"], r[0]["properties"]) for r in rows] == [
        (["Zebra"], {"stripes": 7}),
        (["Person"], {"name": "Dee"}),
    ]

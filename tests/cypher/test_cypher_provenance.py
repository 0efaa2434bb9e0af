"""The PSJS provenance rewrite: its text, the constructs it refuses, and on the real engine
that it keeps every result and returns the ids its MATCH patterns bind."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cypherturn.cypher import PROVENANCE_COLUMN, decode_provenance, rewrite_for_provenance
from cypherturn.errors import CypherParseError, QueryError
from cypherturn.graph import GraphEngine
from cypherturn.metrics._equivalence import canonical
from cypherturn.metrics._execute import execute_with_provenance, split_provenance

QUERIES: list[str] = json.loads(Path(__file__).with_name("rewrite_queries.json").read_text())[
    "queries"
]


def test_anonymous_elements_get_a_variable_and_the_rest_is_kept() -> None:
    rw = rewrite_for_provenance(
        "MATCH (a:P)-[:R]->(:Q), p = (a)-->(b)<--() RETURN a.x AS x ORDER BY x LIMIT 3"
    )
    assert rw.query.startswith(
        "MATCH (a:P)-[__psjs_r0:R]->(__psjs_n1:Q), p = (a)-[__psjs_r2]->(b)<-[__psjs_r3]-(__psjs_n4) "
        "RETURN a.x AS x, [id(a), -1 - id(__psjs_r0), id(__psjs_n1), id(a), -1 - id(__psjs_r2), id(b), "
        "-1 - id(__psjs_r3), id(__psjs_n4)] AS __psjs_prov ORDER BY x LIMIT 3"
    )


def test_variable_length_relationships_contribute_their_end_nodes_only() -> None:
    rw = rewrite_for_provenance("MATCH (a)-[r:K*1..2]->()-[:L]->(b) RETURN b")
    assert rw.query == (
        "MATCH (a)-[r:K*1..2]->(__psjs_n0)-[__psjs_r1:L]->(b) "
        "RETURN b, [id(a), id(__psjs_n0), -1 - id(__psjs_r1), id(b)] AS __psjs_prov"
    )


def test_aggregating_and_distinct_projections_collect_the_provenance() -> None:
    rw = rewrite_for_provenance(
        "MATCH (a) WITH DISTINCT a.k AS k MATCH (b {k: k}) RETURN k, count(b) AS c"
    )
    assert "WITH DISTINCT a.k AS k, collect([id(a)]) AS __psjs_p0 " in rw.query
    assert rw.query.endswith(f"count(b) AS c, collect([__psjs_p0, id(b)]) AS {PROVENANCE_COLUMN}")


def test_non_aggregating_projection_does_not_collect() -> None:
    rw = rewrite_for_provenance("MATCH (a) RETURN a.x")
    assert "collect(" not in rw.query


@pytest.mark.parametrize(
    "query",
    [
        "CALL { MATCH (n) RETURN n } RETURN n",
        "MATCH (n) SET n.x = 1 RETURN n",
        "MATCH (n) RETURN DISTINCT n.x ORDER BY n.y",
        "MATCH (n) WITH DISTINCT * RETURN n",
        "MATCH (n) WITH n",
        "MATCH (__psjs_x) RETURN __psjs_x",
        "LOAD CSV FROM 'f' AS row RETURN row",
        "MATCH (n RETURN n",
    ],
)
def test_refused_constructs_raise(query: str) -> None:
    with pytest.raises(CypherParseError):
        rewrite_for_provenance(query)


def test_decode_provenance_flattens_and_skips_nulls() -> None:
    assert decode_provenance([[1, [2, None]], None, [-1, -3], [[[]]]]) == {1, 2, -1, -3}
    with pytest.raises(CypherParseError):
        decode_provenance(["x"])


def _multiset(rows: list[list[object]]) -> Counter[object]:
    return Counter(tuple(canonical(v) for v in row) for row in rows)


@pytest.mark.parametrize("query", QUERIES)
def test_rewrite_keeps_the_result(query: str, fixture_engine: GraphEngine) -> None:
    engine = fixture_engine
    original = engine.execute(query)
    rewritten = execute_with_provenance(engine, query)
    assert rewritten.error is None and rewritten.result is not None
    assert rewritten.provenance is not None, rewritten.provenance_note
    assert rewritten.executions == 1
    assert rewritten.result.columns == original.columns
    assert _multiset(rewritten.result.rows) == _multiset(original.rows)


def test_provenance_ids_are_the_bound_nodes_and_relationships(fixture_engine: GraphEngine) -> None:
    engine = fixture_engine
    expected = engine.execute(
        "MATCH (a:Person {name: 'Alice'})-[r:KNOWS]->(b) RETURN id(a) AS a, id(r) AS r, id(b) AS b"
    )
    ids = {row[0] for row in expected.rows} | {row[2] for row in expected.rows}
    ids |= {-1 - row[1] for row in expected.rows}
    rw = rewrite_for_provenance("MATCH (:Person {name: 'Alice'})-[:KNOWS]->() RETURN count(*) AS c")
    raw = engine.execute(rw.query)
    result, provenance = split_provenance(raw)
    assert result.rows == [[2]]
    assert provenance == ids and len(ids) == 5


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (p:Person) RETURN q.name",
        "MATCH (p:Person) RETURN nosuchfunction(p)",
        "MATCH (p:Person RETURN p",
        "MATCH (p:Person) RETURN p.name ORDER BY",
        "MATCH (p:Person) RETURN 1 / 0",
        "MATCH (p:Person) SET p.x = 1 RETURN p",
    ],
)
def test_a_failing_query_fails_with_the_original_error_class(
    query: str, fixture_engine: GraphEngine
) -> None:
    """The error kept for a failing rewritten query has the class the original query gets."""
    engine = fixture_engine
    with pytest.raises(QueryError) as original:
        engine.execute(query)
    run = execute_with_provenance(engine, query)
    assert run.result is None and run.error is not None
    assert run.error.error_class == original.value.error_class


def test_verify_failed_rewrites_reruns_the_original(fixture_engine: GraphEngine) -> None:
    run = execute_with_provenance(
        fixture_engine, "MATCH (p:Person) RETURN q.name", verify_failed_rewrites=True
    )
    assert run.fallback and run.executions == 2
    assert run.error is not None and run.result is None

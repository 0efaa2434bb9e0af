"""Engine-divergence classes: each is demonstrated on the real FalkorDB, then caught by the audit.

Every test first runs the divergent query and the same question asked in a form
FalkorDB answers by Cypher's semantics (counting relationships with ``count(r)``,
fencing a cut with ``collect``/``UNWIND``, ``toInteger`` on a temporal component),
and asserts the two disagree: the divergence exists on the engine we ship, so the
audit is justified. Then the audit must flag the divergent gold and pass the safe one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from session_graphs import WorldGraphs

from cypherturn.graph import FALKORDB_DIALECT, GraphEngine
from cypherturn.sessions import (
    DIVERGENCE_CODES,
    AuditCode,
    DivergenceAuditor,
    GoldResult,
    build_sessions,
    plan_build,
    text_divergences,
    verify_session,
)


@pytest.fixture
def guild(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """Three people; Ada and Bram are joined by two KNOWS and one FAMILY relationship."""
    engine = make_engine("divergence")
    engine.write(
        "CREATE (a:Person {name: 'Ada', age: 30}), (b:Person {name: 'Bram', age: 41}), "
        "(c:Person {name: 'Cato', age: 25}), "
        "(a)-[:KNOWS]->(b), (a)-[:KNOWS]->(b), (a)-[:FAMILY]->(b), (b)-[:KNOWS]->(c), "
        "(:Event {name: 'Fair', held_on: date('2020-09-03'), noted_on: date('2020-09-03')}), "
        "(:Event {name: 'Moot', held_on: date('2020-08-01'), noted_on: date('2020-08-01')})"
    )
    engine.write("CREATE INDEX FOR (e:Event) ON (e.held_on)")
    # the index builds in the background; planned before it is ready, the filter scans
    # and finds the row, which is the timing the engine's own await_indexes removes
    engine.await_indexes()
    return engine


def _codes(auditor: DivergenceAuditor, gold: str, stored: GoldResult | None = None) -> set[str]:
    return {f.code.value for f in auditor.findings(1, gold, stored)}


def test_parallel_edges_count_once_per_node_pair(guild: GraphEngine) -> None:
    relationships = guild.execute("MATCH (:Person)-[r:KNOWS]->(:Person) RETURN count(r)").rows
    pattern = guild.execute("MATCH (:Person)-[:KNOWS]->(:Person) RETURN count(*)").rows
    assert relationships == [[3]] and pattern == [[2]], "FalkorDB binds the pattern once per pair"
    either = guild.execute("MATCH (:Person)-[:KNOWS|FAMILY]->(p:Person) RETURN p.name").rows
    assert sorted(either) == [["Bram"], ["Cato"]], "Neo4j gives four rows (one per relationship)"
    auditor = DivergenceAuditor(guild)
    assert _codes(auditor, "MATCH (:Person)-[:KNOWS]->(:Person) RETURN count(*) AS n") == {
        "parallel_edges"
    }
    assert _codes(auditor, "MATCH (:Person)-[:KNOWS|FAMILY]->(p:Person) RETURN p.name AS name")
    assert _codes(auditor, "MATCH (a:Person)-->(b:Person) WITH b RETURN collect(b.name) AS n")
    for safe in (
        "MATCH (:Person)-[:KNOWS]->(p:Person) RETURN DISTINCT p.name AS name",
        "MATCH (:Person)-[:KNOWS]->(p:Person) RETURN count(DISTINCT p) AS n",
        "MATCH (:Person)-[r:KNOWS]->(:Person) RETURN count(r) AS n",
        "MATCH (:Person)-[:KNOWS]->(p:Person) WITH DISTINCT p RETURN count(*) AS n",
        "MATCH (:Person)-[:KNOWS]->(p:Person) RETURN max(p.age) AS oldest",
    ):
        assert not _codes(auditor, safe), safe


def test_exists_over_a_pattern_is_always_true(guild: GraphEngine) -> None:
    assert guild.execute("MATCH ()-[r:RIVAL]->() RETURN count(r)").rows == [[0]]
    rows = guild.execute("MATCH (p:Person) RETURN exists((p)-[:RIVAL]->()) AS x").rows
    assert rows == [[True]] * 3, "true for every row on a graph without RIVAL relationships"
    gold = "MATCH (p:Person) WHERE NOT exists((p)-[:RIVAL]->()) RETURN p.name AS name"
    assert _codes(DivergenceAuditor(guild), gold) == {"exists_pattern"}
    assert not text_divergences(1, "MATCH (p:Person) WHERE p.age IS NOT NULL RETURN p.name")


def test_limit_after_union_binds_to_the_last_branch(guild: GraphEngine) -> None:
    gold = (
        "MATCH (p:Person) RETURN p.name AS name UNION ALL "
        "MATCH (e:Event) RETURN e.name AS name ORDER BY name LIMIT 1"
    )
    assert len(guild.execute(gold).rows) == 4, "three people and the first event, not one row"
    assert [f.code for f in text_divergences(3, gold)] == [AuditCode.UNION_LIMIT]
    assert not text_divergences(
        3, "MATCH (p:Person) RETURN p.name AS name UNION MATCH (e:Event) RETURN e.name AS name"
    )


def test_filter_after_order_by_limit_leaks_rows(guild: GraphEngine) -> None:
    leaky = (
        "MATCH (p:Person) WITH p ORDER BY p.name LIMIT 1\nWITH p WHERE p.name = 'Bram'\n"
        "RETURN p.name AS name"
    )
    fenced = (
        "MATCH (p:Person) WITH p ORDER BY p.name LIMIT 1\nWITH collect(p) AS kept UNWIND kept AS p\n"
        "WITH p WHERE p.name = 'Bram'\nRETURN p.name AS name"
    )
    assert guild.execute(leaky).rows == [["Bram"]], "the first person by name is Ada"
    assert guild.execute(fenced).rows == []
    assert {f.code for f in text_divergences(2, leaky)} == {AuditCode.FILTER_AFTER_LIMIT}
    assert not text_divergences(2, fenced)
    also = "MATCH (p:Person) WITH p ORDER BY p.age DESC LIMIT 2 MATCH (p) WHERE p.age < 40 RETURN p"
    assert text_divergences(2, also)
    later = (
        "MATCH (p:Person) WITH p ORDER BY p.name LIMIT 1 MATCH (p)-[:KNOWS]->(q) "
        "WHERE q.age > 30 RETURN DISTINCT q.name AS name"
    )
    assert not text_divergences(2, later), "a filter on a variable bound after the cut is exact"


def test_sum_of_integers_is_a_float(guild: GraphEngine) -> None:
    gold = "MATCH (p:Person) RETURN sum(p.age) AS sum_age"
    assert guild.execute(gold).rows == [[96.0]] and isinstance(
        guild.execute(gold).rows[0][0], float
    )
    auditor = DivergenceAuditor(guild)
    assert auditor.integer_sum_columns(gold) == [0]
    assert _codes(auditor, gold, GoldResult(columns=["sum_age"], rows=[[96.0]])) == {"integer_sum"}
    assert not _codes(auditor, gold, GoldResult(columns=["sum_age"], rows=[[96]]))
    assert auditor.integer_sum_columns("MATCH (p:Person) RETURN sum(p.age * 0.5) AS s") == []


def test_component_filter_on_an_indexed_temporal_property_matches_nothing(
    guild: GraphEngine,
) -> None:
    indexed = "MATCH (e:Event) WHERE e.held_on.month = 9 RETURN e.name AS name"
    assert guild.execute(indexed).rows == []
    assert guild.execute(
        "MATCH (e:Event) WHERE toInteger(e.held_on.month) = 9 RETURN e.name AS name"
    ).rows == [["Fair"]]
    unindexed = "MATCH (e:Event) WHERE e.noted_on.month = 9 RETURN e.name AS name"
    assert guild.execute(unindexed).rows == [["Fair"]]
    auditor = DivergenceAuditor(guild)
    assert _codes(auditor, indexed) == {"temporal_component_filter"}
    assert not _codes(auditor, unindexed)
    assert not _codes(
        auditor, "MATCH (e:Event) WHERE toInteger(e.held_on.month) = 9 RETURN e.name AS name"
    )


def test_build_report_counts_every_class_and_the_written_golds_hit_none(
    worlds: WorldGraphs,
) -> None:
    plan = plan_build(worlds=["magic_academy", "merchant_harbor"], sessions=14)
    sessions, report = build_sessions(plan, worlds.provide)
    assert report.divergence == {code.value: 0 for code in DIVERGENCE_CODES}
    summed = 0
    for session in sessions:
        engine = worlds.engine(session.world)
        found = verify_session(session, engine, perturb=False)
        assert not [f for f in found if f.code in DIVERGENCE_CODES], session.session_id
        auditor = DivergenceAuditor(engine)
        for turn in session.turns:
            for column in auditor.integer_sum_columns(turn.gold_cypher):
                summed += 1
                assert all(type(row[column]) is int for row in turn.gold_result.rows)
    assert summed, "the sample has sums of integers, stored as integers"


def test_every_divergence_class_is_a_quirk_of_the_dialect() -> None:
    audited = {quirk.audit for quirk in FALKORDB_DIALECT.quirks if quirk.audit is not None}
    assert audited == {code.value for code in DIVERGENCE_CODES}

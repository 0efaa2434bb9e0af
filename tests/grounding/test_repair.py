"""repair_query: the check-and-repair rounds shared by ras+ and the agent, on the real engine."""

from __future__ import annotations

from cypherturn.graph import GraphEngine
from cypherturn.grounding import (
    CheckReport,
    GraphIndex,
    apply_edits,
    check_query,
    repair_query,
)


def test_a_repair_that_exposes_another_is_followed_by_a_second_round(
    crime: GraphEngine, index: GraphIndex
) -> None:
    query = "MATCH (c:crime)-[:PARTY_TO]->(p:person) WHERE c.type != 'Drugs' RETURN count(p) AS n"
    first, applied = apply_edits(query, check_query(query, index).findings)
    assert applied and not check_query(first, index).ok  # one round is not enough
    repaired, repairs, report = repair_query(query, index)
    assert repaired == (
        "MATCH (c:Crime)<-[:PARTY_TO]-(p:Person) WHERE c.type <> 'Drugs' RETURN count(p) AS n"
    )
    assert report.ok
    assert {f.code for f in repairs} == {"unknown_label", "sql_habit", "reversed_direction"}
    assert crime.execute(repaired).rows == [[2]]


def test_a_query_without_an_unambiguous_fix_is_returned_with_its_findings(
    index: GraphIndex,
) -> None:
    query = "MATCH (c:Crimes) RETURN c.id"
    repaired, repairs, report = repair_query(query, index)
    assert (repaired, repairs) == (query, [])
    assert [f.code for f in report.findings] == ["unknown_label"]


def test_rounds_bound_the_repairs_and_an_empty_query_is_not_checked(index: GraphIndex) -> None:
    query = "MATCH (c:crime)-[:PARTY_TO]->(p:person) RETURN count(p) AS n"
    once, repairs, _ = repair_query(query, index, rounds=1)
    assert once == "MATCH (c:Crime)-[:PARTY_TO]->(p:Person) RETURN count(p) AS n"
    assert [f.code for f in repairs] == ["unknown_label", "unknown_label"]
    assert repair_query("", index) == ("", [], CheckReport(parsed=False))

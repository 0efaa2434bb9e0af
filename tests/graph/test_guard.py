"""The tokenizer layer of the read-only gate: data-file cases, and probes on the real engine."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cypherturn.cypher import TokenKind, tokenize
from cypherturn.errors import QueryError, WriteRefusedError
from cypherturn.graph import GraphEngine, find_plan_prefix, find_write_clause

CASES: list[dict[str, Any]] = json.loads(
    Path(__file__).with_name("guard_cases.json").read_text(encoding="utf-8")
)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["query"][:50] for c in CASES])
def test_find_write_clause(case: dict[str, Any]) -> None:
    assert find_write_clause(case["query"]) == case["clause"]


def test_guard_tokens_keep_literals_whole() -> None:
    text = "MATCH (n:`A``B`) WHERE n.s = 'x // y' /* c */ RETURN $p, 1.5"
    kinds = [(t.kind, t.text) for t in tokenize(text, lenient=True)]
    assert (TokenKind.QUOTED_NAME, "`A``B`") in kinds
    assert (TokenKind.STRING, "'x // y'") in kinds
    assert (TokenKind.PARAMETER, "$p") in kinds
    assert (TokenKind.NUMBER, "1.5") in kinds
    assert all(text != "c" for _, text in kinds)


# Reads whose variables, aliases and keys are spelled like write keywords: the guard lets
# them through and the engine's read-only mode runs them (docs/design/engine-errors.md).
KEYWORD_NAMED_READS = [
    ("MATCH (drop:Person) RETURN drop.name ORDER BY drop.name", [["Ann"], ["Bob"]]),
    ("MATCH (n:Person) RETURN n.name AS set ORDER BY set", [["Ann"], ["Bob"]]),
    ("WITH 1 AS merge RETURN merge", [[1]]),
    ("UNWIND [1, 2] AS delete RETURN delete ORDER BY delete", [[1], [2]]),
    ("WITH [1, 2] AS insert RETURN size(insert)", [[2]]),
    ("MATCH (n:Person) WITH n AS detach RETURN count(detach)", [[2]]),
    (
        "MATCH (create:Person)-[remove:KNOWS]->(foreach) RETURN create.name, foreach.name",
        [["Ann", "Bob"]],
    ),
    ("MATCH (n:Person) RETURN n.name AS drop ORDER BY drop DESC LIMIT 1", [["Bob"]]),
    ("RETURN {set: 1, create: 2}.create AS m", [[2]]),
]

# Writes, some hidden behind keyword-named variables or glued to a number.
PROBE_WRITES = [
    ("MATCH (n:Person) RETURN n LIMIT 1CREATE (m:X)", "CREATE"),
    ("MATCH (n:Person) WITH n AS set SET n.age = 1", "SET"),
    ("UNWIND [1] AS delete MATCH (n:Person) DETACH DELETE n", "DETACH DELETE"),
    ("INSERT (:Person {name: 'Eve'})", "INSERT"),
    ("MATCH (n:Person) WITH * CREATE (m:X)", "CREATE"),
    ("MATCH (n:Person) WITH n.limit AS x MERGE (m:X)", "MERGE"),
]


@pytest.fixture
def people(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("guard")
    engine.write("CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Bob'})")
    return engine


def test_keyword_named_reads_run_on_the_engine(people: GraphEngine) -> None:
    for query, rows in KEYWORD_NAMED_READS:
        assert find_write_clause(query) is None, query
        assert people.execute(query).rows == rows, query


def test_probe_writes_are_refused_and_change_nothing(people: GraphEngine) -> None:
    for query, clause in PROBE_WRITES:
        with pytest.raises(WriteRefusedError) as caught:
            people.execute(query)
        assert caught.value.clause == clause, query
    assert people.execute("MATCH (n) RETURN count(n)").rows == [[2]]
    assert people.execute("MATCH (n:Person) RETURN n.age").rows == [[None], [None]]


@pytest.mark.parametrize(
    ("query", "prefix"),
    [
        ("EXPLAIN MATCH (n:Person) RETURN n", "EXPLAIN"),
        ("profile MATCH (n:Person) RETURN n", "PROFILE"),
        ("CYPHER 5 EXPLAIN MATCH (n) RETURN n", "EXPLAIN"),
        ("CYPHER runtime = slotted PROFILE MATCH (n) RETURN n", "PROFILE"),
        ("MATCH (explain:Person) RETURN explain", None),
        ("// EXPLAIN\nMATCH (n) RETURN n", None),
    ],
)
def test_plan_prefix_found(query: str, prefix: str | None) -> None:
    assert find_plan_prefix(query) == prefix


def test_plan_prefix_refused_before_it_runs(people: GraphEngine) -> None:
    # FalkorDB's GRAPH.RO_QUERY would ignore EXPLAIN and return the rows.
    with pytest.raises(QueryError, match="EXPLAIN is not supported") as caught:
        people.execute("EXPLAIN MATCH (n:Person) RETURN n")
    assert not isinstance(caught.value, WriteRefusedError)
    with pytest.raises(QueryError, match="PROFILE is not supported"):
        people.execute("PROFILE MATCH (n:Person) RETURN n")

"""The Cypher data-script reader: tokens respect literals; CREATE/MERGE/MATCH/SET semantics."""

from __future__ import annotations

import datetime as dt

import pytest

from cypherturn.errors import DatasetError
from cypherturn.worlds import parse_cypher_script
from cypherturn.worlds._cypher_script import tokenize


def test_string_literals_hide_syntax() -> None:
    tokens = tokenize("CREATE (a {s: 'x; // (y) \\' z', t: \"q\\\"r\"}) // trailing\n/* c; */ ;")
    strings = [t.value for t in tokens if t.kind == "string"]
    assert strings == ["x; // (y) ' z", 'q"r']
    assert [t.text for t in tokens if t.kind == "punct"].count(";") == 1


def test_numbers_negatives_lists_dates_booleans_and_nulls() -> None:
    data = parse_cypher_script(
        "CREATE (:T {i: 42, n: -7, f: 2.5, e: 1e3, l: [1, 2], d: date('2024-02-29'), "
        "b: true, c: FALSE, z: null})",
        "g",
    )
    (node,) = data.nodes
    assert node.properties == {
        "i": 42,
        "n": -7,
        "f": 2.5,
        "e": 1000.0,
        "l": [1, 2],
        "d": dt.date(2024, 2, 29),
        "b": True,
        "c": False,
    }


def test_variables_span_one_statement_and_patterns_chain() -> None:
    data = parse_cypher_script(
        "CREATE (a:A {k: 1}), (b:B {k: 2}) CREATE (a)-[:R {w: 1}]->(b)<-[:S]-(c:C);"
        "CREATE (a:A {k: 3})",
        "g",
    )
    assert [n.labels for n in data.nodes] == [("A",), ("B",), ("C",), ("A",)]
    assert [(r.start, r.type, r.end, r.properties) for r in data.relationships] == [
        (0, "R", 1, {"w": 1}),
        (2, "S", 1, {}),
    ]


def test_match_binds_every_matching_node() -> None:
    data = parse_cypher_script(
        "CREATE (:P {g: 1}), (:P {g: 1}), (:P {g: 2}), (:Q);"
        "MATCH (p:P {g: 1}), (q:Q) CREATE (p)-[:R]->(q);"
        "MATCH (p:P {g: 9}), (q:Q) CREATE (p)-[:R]->(q)",
        "g",
    )
    assert sorted(r.start for r in data.relationships) == [0, 1]


def test_merge_matches_or_creates_and_on_create_set() -> None:
    data = parse_cypher_script(
        "MERGE (a:A {name: 'x'}) ON CREATE SET a.new = true ON MATCH SET a.seen = true;"
        "MERGE (a:A {name: 'x'}) ON CREATE SET a.new = false ON MATCH SET a.seen = true, a += {n: 1};"
        "MATCH (a:A {name: 'x'}) SET a:Extra;"
        "MATCH (a:A {name: 'x'}) MERGE (a)-[:SELF]->(a);"
        "MATCH (a:A {name: 'x'}) MERGE (a)-[:SELF]->(a)",
        "g",
    )
    (node,) = data.nodes
    assert node.labels == ("A", "Extra")
    assert node.properties == {"name": "x", "new": True, "seen": True, "n": 1}
    assert len(data.relationships) == 1


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ("MATCH (a) WHERE a.x = 1 RETURN a", "WHERE"),
        ("CREATE (a)-[:R]-(b)", "directed"),
        ("CREATE (a {x: $p})", "unexpected|unsupported"),
        ("CREATE (a {x: 'open})", "unterminated string"),
        ("CREATE (a:A)\nDELETE a", ":2: unsupported clause"),
        ("CREATE (a {x: toInteger('1')})", "unsupported value"),
        ("CREATE (a {x: 1})", "no label"),
    ],
)
def test_unsupported_or_broken_scripts_are_dataset_errors(script: str, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        parse_cypher_script(script, "g", origin="s.cypher")

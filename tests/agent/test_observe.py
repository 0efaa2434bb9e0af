"""The environment actions on the real engine: EXECUTE_CYPHER, INSPECT_SCHEMA, SEARCH_VALUES."""

from __future__ import annotations

import json

import pytest

from cypherturn.agent import CURRENT_TURN_ROWS, ActionExecutor
from cypherturn.errors import ErrorClass
from cypherturn.graph import GraphEngine


def test_execute_truncates_to_20_rows(heroes: GraphEngine) -> None:
    obs = ActionExecutor(heroes).execute_cypher(
        "MATCH (h:Hero) RETURN h.name AS name ORDER BY name"
    )
    assert obs.ok and obs.rows == 29
    lines = obs.text.splitlines()
    assert lines[0] == "name"
    assert len(lines) == 1 + CURRENT_TURN_ROWS + 1
    assert lines[-1] == "(29 rows, first 20 shown)"


def test_execute_error_keeps_engine_message(heroes: GraphEngine) -> None:
    obs = ActionExecutor(heroes).execute_cypher("MATCH (h:Hero RETURN h")
    assert not obs.ok
    assert obs.error_class is ErrorClass.SYNTAX
    assert obs.text.startswith("Error: ")
    assert len(obs.text) > len("Error: ")


def test_execute_refuses_writes(heroes: GraphEngine) -> None:
    obs = ActionExecutor(heroes).execute_cypher("CREATE (:Hero {name: 'X'})")
    assert obs.error_class is ErrorClass.WRITE_REFUSED
    assert heroes.execute("MATCH (h:Hero {name: 'X'}) RETURN count(h)").rows == [[0]]


def test_inspect_schema_lists_labels_properties_and_patterns(heroes: GraphEngine) -> None:
    text = ActionExecutor(heroes).inspect_schema().text
    assert "(:Hero {" in text and "power: INTEGER" in text
    assert "(:Guild {" in text and "founded_year: INTEGER" in text
    assert "(:Hero)-[:MEMBER_OF {since: INTEGER}]->(:Guild)" in text


def _search(heroes: GraphEngine, query: str) -> tuple[str, list[str]]:
    payload = json.dumps({"label": "Hero", "property": "name", "query": query})
    text = ActionExecutor(heroes).search_values(payload).text
    stage, _, values = text.partition(": ")
    return stage, sorted(json.loads(values)) if values else []


def test_search_contains_comes_first(heroes: GraphEngine) -> None:
    assert _search(heroes, "storm") == ("Matches (contains)", ["Ada Stormborn"])


def test_search_falls_back_to_prefix(heroes: GraphEngine) -> None:
    # "Cora Nightshadez" is contained in no name; its first half "Cora Nig" is a prefix.
    assert _search(heroes, "Cora Nightshadez") == ("Matches (prefix)", ["Cora Nightshade"])


def test_search_falls_back_to_words(heroes: GraphEngine) -> None:
    stage, values = _search(heroes, "Lord Ironfist")
    assert (stage, values) == ("Matches (word)", ["Bran Ironfist"])


def test_search_returns_at_most_10(heroes: GraphEngine) -> None:
    stage, values = _search(heroes, "recruit")
    assert stage == "Matches (contains)" and len(values) == 10


def test_search_no_match(heroes: GraphEngine) -> None:
    assert (
        ActionExecutor(heroes)
        .search_values(json.dumps({"label": "Hero", "property": "name", "query": "zzz qqq"}))
        .text
        == "No matching values."
    )


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{label: Hero}", "Parse error: SEARCH_VALUES input is not JSON"),
        ('{"label": "Hero", "query": "ada"}', "Parse error: SEARCH_VALUES needs"),
        ('{"label": "Villain", "property": "name", "query": "a"}', "Unknown label"),
        ('{"label": "Hero", "property": "age", "query": "a"}', "has no property"),
    ],
)
def test_search_bad_payloads(heroes: GraphEngine, payload: str, message: str) -> None:
    obs = ActionExecutor(heroes).search_values(payload)
    assert not obs.ok
    assert message in obs.text

"""Error classification from real FalkorDB messages (and Neo4j's documented codes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis

from cypherturn.errors import ErrorClass, QueryError
from cypherturn.graph import FalkorDBEngine, GraphEngine
from cypherturn.graph._errors import classify_neo4j, neo4j_notification_class

HERE = Path(__file__).parent
FALKORDB_CASES: list[dict[str, Any]] = json.loads(
    (HERE / "falkordb_errors.json").read_text(encoding="utf-8")
)["cases"]
NEO4J_CASES: list[dict[str, Any]] = json.loads(
    (HERE / "neo4j_errors.json").read_text(encoding="utf-8")
)["cases"]


@pytest.fixture(scope="module")
def people(embedded_server: Any) -> Any:
    """A small graph shared by the error cases (module scope: read-only use)."""
    engine = FalkorDBEngine(embedded_server.client(), "errors_people", spec="errors")
    engine.drop()
    engine.write("CREATE (:Person {name: 'Ann', age: 30}), (:Person {name: 'Bob', age: 40})")
    yield engine
    engine.drop()
    engine.close()


@pytest.mark.parametrize("case", FALKORDB_CASES, ids=[c["query"] for c in FALKORDB_CASES])
def test_falkordb_message_classified(people: FalkorDBEngine, case: dict[str, Any]) -> None:
    with pytest.raises(QueryError) as caught:
        people.execute(case["query"])
    assert caught.value.error_class == ErrorClass(case["class"])
    assert caught.value.query == case["query"]
    # The engine's own words, unchanged: what the raw client reports for the same query.
    with pytest.raises(redis.ResponseError) as raw:
        people.client.select_graph(people.graph).ro_query(case["query"])
    assert caught.value.engine_message == str(raw.value)


def test_unknown_names_are_not_errors_on_falkordb(people: FalkorDBEngine) -> None:
    # FalkorDB answers an unknown label, type or property with no rows or nulls;
    # nothing is faked into an UnknownLabelError.
    assert people.execute("MATCH (n:Nope) RETURN n").rows == []
    assert people.execute("MATCH ()-[r:NOPE]->() RETURN r").rows == []
    assert people.execute("MATCH (n:Person) RETURN n.nope").rows == [[None], [None]]


def test_missing_graph_is_a_dataset_error(make_engine: Callable[..., GraphEngine]) -> None:
    from cypherturn.errors import DatasetError

    engine = make_engine("missing")
    engine.drop()
    with pytest.raises(DatasetError, match="does not exist"):
        engine.execute("MATCH (n) RETURN n")
    assert engine.node_count() == 0
    assert not engine.exists()


@pytest.mark.parametrize(
    "case", NEO4J_CASES, ids=[f"{c['code']}:{c['class']}" for c in NEO4J_CASES]
)
def test_neo4j_code_classified(case: dict[str, Any]) -> None:
    assert classify_neo4j(case["code"], case["message"]).error_class == ErrorClass(case["class"])


@pytest.mark.parametrize(
    ("description", "error_class"),
    [
        (
            "warn: unknown label. The label `Perso` does not exist in database `neo4j`. "
            "Verify that the spelling is correct.",
            ErrorClass.UNKNOWN_LABEL,
        ),
        (
            "warn: unknown relationship type. The relationship type `NonExistingType` does not "
            "exist in database `neo4j`. Verify that the spelling is correct.",
            ErrorClass.UNKNOWN_RELATIONSHIP_TYPE,
        ),
        (
            "warn: unknown property key. The property `nme` does not exist in database `neo4j`.",
            ErrorClass.UNKNOWN_PROPERTY,
        ),
        ("note: successful completion", None),
        (None, None),
    ],
)
def test_neo4j_unknown_name_notifications(
    description: str | None, error_class: ErrorClass | None
) -> None:
    assert neo4j_notification_class(description) == error_class

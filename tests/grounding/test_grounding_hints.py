"""Engine messages RAS+ feeds back get a short corrective hint (provoked on the real engine)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cypherturn.errors import ErrorClass, QueryError
from cypherturn.graph import EmbeddedFalkorDB, FalkorDBEngine, GraphEngine
from cypherturn.grounding import error_hint

# query -> a phrase the hint must contain
CASES = [
    ("MATCH (n:Person) WHERE exists((n)-[:KNOWS]->()) RETURN n", "WHERE (n)-[:TYPE]->()"),
    ("MATCH (n:Person) RETURN n LIMIT 1 MATCH (m) RETURN m", "one RETURN"),
    ("MATCH (n:Person) RETURN n.name ORDER BY count(n)", "alias"),
    ("MATCH (n:Person) RETURN count(count(n))", "inner aggregate"),
    ("MATCH (n:Person) WHERE count(n) > 1 RETURN n", "WITH n, count(*) AS c WHERE c > 1"),
    ("MATCH (n:Person) WITH n.name RETURN n", "WITH n.name AS name"),
    ("MATCH (n:Person)", "RETURN"),
    ("MATCH (n:Person) WHERE n.name =~ 'A.*' RETURN n", "CONTAINS"),
    ("MATCH (n:Person) RETURN n.name LIMIT -1", "non-negative integer"),
    ("MATCH (n:Person) RETURN collect(DISTINCT *)", "count(*)"),
    ("MATCH (n:Person) WHERE n.name != 'Ann' RETURN n", "<>"),
]


@pytest.fixture(scope="module")
def people(embedded_server: EmbeddedFalkorDB) -> Iterator[GraphEngine]:
    engine = FalkorDBEngine(embedded_server.client(), "hints_people", spec="hints")
    engine.drop()
    engine.write("CREATE (:Person {name: 'Ann'})-[:KNOWS]->(:Person {name: 'Bob'})")
    yield engine
    engine.drop()
    engine.close()


@pytest.mark.parametrize(("query", "phrase"), CASES, ids=[q for q, _ in CASES])
def test_engine_message_gets_its_hint(people: GraphEngine, query: str, phrase: str) -> None:
    with pytest.raises(QueryError) as caught:
        people.execute(query)
    assert caught.value.error_class is not ErrorClass.OTHER
    hint = error_hint(caught.value.engine_message)
    assert hint is not None and phrase in hint, (caught.value.engine_message, hint)


def test_the_suggested_pattern_condition_runs(people: GraphEngine) -> None:
    # the exists() hint's form is what FalkorDB accepts
    rows = people.execute("MATCH (n:Person) WHERE (n)-[:KNOWS]->() RETURN n.name").rows
    assert rows == [["Ann"]]

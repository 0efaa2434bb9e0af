"""Schema introspection on a small fixture graph, and the prompt text rendered from it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest

from cypherturn.agent import render_schema
from cypherturn.graph import (
    GraphData,
    GraphEngine,
    GraphSchema,
    LabelSchema,
    NodeRecord,
    RelationshipPattern,
    RelationshipRecord,
    RelationshipTypeSchema,
    render_schema_prompt,
)
from cypherturn.grounding import graph_index


@pytest.fixture
def crimes(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("schema")
    nodes = [
        NodeRecord(1, ("Person",), {"name": "Ann", "age": 30}),
        NodeRecord(2, ("Person", "Officer"), {"name": "Sam", "age": 41, "badge": "B7"}),
        NodeRecord(3, ("Crime",), {"type": "Theft", "date": dt.date(2017, 8, 20), "tags": ["x"]}),
        NodeRecord(4, ("Location",), {"address": "1 High St", "postcode": "M1"}),
        NodeRecord(5, ("Location",), {"address": "2 Low St", "postcode": 9}),
        NodeRecord(6, ("Location",), {"address": "3 Mid St", "postcode": "M3"}),
        NodeRecord(7, ("Area",), {}),
    ]
    rels = [
        RelationshipRecord(1, 3, "PARTY_TO"),
        RelationshipRecord(2, 3, "INVESTIGATED", {"hours": 2.5}),
        RelationshipRecord(3, 4, "OCCURRED_AT"),
        RelationshipRecord(1, 2, "KNOWS", {"since": dt.date(2001, 1, 1)}),
    ]
    engine.load(GraphData("crimes", nodes=nodes, relationships=rels))
    return engine


def test_introspection(crimes: GraphEngine) -> None:
    schema = crimes.schema()
    assert schema == GraphSchema(
        labels=[
            LabelSchema(label="Area", count=1, properties={}),
            LabelSchema(
                label="Crime",
                count=1,
                properties={"date": "DATE", "tags": "LIST", "type": "STRING"},
            ),
            LabelSchema(
                label="Location", count=3, properties={"address": "STRING", "postcode": "STRING"}
            ),
            LabelSchema(
                label="Officer",
                count=1,
                properties={"age": "INTEGER", "badge": "STRING", "name": "STRING"},
            ),
            LabelSchema(
                label="Person",
                count=2,
                properties={"age": "INTEGER", "badge": "STRING", "name": "STRING"},
            ),
        ],
        relationship_types=[
            RelationshipTypeSchema(type="INVESTIGATED", count=1, properties={"hours": "FLOAT"}),
            RelationshipTypeSchema(type="KNOWS", count=1, properties={"since": "DATE"}),
            RelationshipTypeSchema(type="OCCURRED_AT", count=1, properties={}),
            RelationshipTypeSchema(type="PARTY_TO", count=1, properties={}),
        ],
        patterns=[
            RelationshipPattern(source="Crime", type="OCCURRED_AT", target="Location"),
            RelationshipPattern(source="Officer", type="INVESTIGATED", target="Crime"),
            RelationshipPattern(source="Person", type="INVESTIGATED", target="Crime"),
            RelationshipPattern(source="Person", type="KNOWS", target="Officer"),
            RelationshipPattern(source="Person", type="KNOWS", target="Person"),
            RelationshipPattern(source="Person", type="PARTY_TO", target="Crime"),
        ],
    )


def test_sample_limits_property_discovery(crimes: GraphEngine) -> None:
    # With one sampled Person only Ann's keys are seen; Sam's badge is not.
    person = next(label for label in crimes.schema(sample=1).labels if label.label == "Person")
    assert person.properties == {"age": "INTEGER", "name": "STRING"}
    assert person.count == 2


def test_prompt_text(crimes: GraphEngine) -> None:
    assert render_schema_prompt(crimes.schema()) == (
        "Node properties:\n"
        "Area {}\n"  # no properties, no relationships: still listed (issue 17)
        "Crime {date: DATE, tags: LIST, type: STRING}\n"
        "Location {address: STRING, postcode: STRING}\n"
        "Officer {age: INTEGER, badge: STRING, name: STRING}\n"
        "Person {age: INTEGER, badge: STRING, name: STRING}\n"
        "Relationship properties:\n"
        "INVESTIGATED {hours: FLOAT}\n"
        "KNOWS {since: DATE}\n"
        "The relationships:\n"
        "(:Crime)-[:OCCURRED_AT]->(:Location)\n"
        "(:Officer)-[:INVESTIGATED]->(:Crime)\n"
        "(:Person)-[:INVESTIGATED]->(:Crime)\n"
        "(:Person)-[:KNOWS]->(:Officer)\n"
        "(:Person)-[:KNOWS]->(:Person)\n"
        "(:Person)-[:PARTY_TO]->(:Crime)"
    )


def test_empty_and_missing_graphs(make_engine: Callable[..., GraphEngine]) -> None:
    engine = make_engine("empty")
    assert engine.schema() == GraphSchema()
    engine.drop()
    assert engine.schema() == GraphSchema()
    assert render_schema_prompt(GraphSchema()) == (
        "Node properties:\n\nRelationship properties:\n\nThe relationships:\n"
    )


def test_names_that_need_quoting_are_copied_back_into_a_valid_query(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine("quoted")
    engine.write(
        "CREATE (:Account {`account id`: 'A1'})-[:`HAS TAG` {`since year`: 2020}]->"
        "(:`Crime Type` {name: 'Fraud'}), (:`2nd-Label`)"
    )
    schema = engine.schema()
    prompt = render_schema_prompt(schema)
    assert "Account {`account id`: STRING}" in prompt
    assert "`HAS TAG` {`since year`: INTEGER}" in prompt
    assert "(:Account)-[:`HAS TAG`]->(:`Crime Type`)" in prompt
    assert "`2nd-Label` {}" in prompt
    inspect = render_schema(schema)
    assert "(:Account)-[:`HAS TAG` {`since year`: INTEGER}]->(:`Crime Type`)" in inspect
    assert "(:`2nd-Label` {})" in inspect
    # the pattern line, as printed, is a valid query on the engine
    pattern = next(line for line in prompt.splitlines() if line.startswith("(:Account)"))
    assert engine.execute(
        f"MATCH {pattern.replace('(:Account)', '(a:Account)')} RETURN a.`account id`"
    ).rows == [["A1"]]


def test_relationship_properties_are_found_from_every_source(
    make_engine: Callable[..., GraphEngine],
) -> None:
    # relationship samples start from the source labels, unless a source has no label
    engine = make_engine("sources")
    engine.write(
        "CREATE (:A)-[:T {a: 1}]->(:C), (:B)-[:T {b: 'x'}]->(:C), (:A:B)-[:T {ab: true}]->(:C)"
    )
    (rel,) = engine.schema().relationship_types
    assert (rel.count, rel.properties) == (3, {"a": "INTEGER", "ab": "BOOLEAN", "b": "STRING"})
    assert graph_index(engine).type_keys["T"] == {"a", "ab", "b"}
    engine.write("CREATE ()-[:T {bare: 2.5}]->(:C)")
    (rel,) = engine.schema().relationship_types
    assert rel.count == 4 and rel.properties["bare"] == "FLOAT" and len(rel.properties) == 4
    index = graph_index(engine)
    assert index.type_keys["T"] == {"a", "ab", "b", "bare"}

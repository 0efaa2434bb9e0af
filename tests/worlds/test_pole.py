"""POLE crime-investigation dataset: build from the packaged zip and from a path, load, read back.

Expected counts are copied from the dataset's SOURCE.md (neo4j-graph-examples/pole).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.graph import GraphData, GraphEngine
from cypherturn.worlds import get_world, load_world
from cypherturn.worlds._pole import PoleDataset

SHARED = Path("/work/shared/datasets/pole")

NODES = {
    "Crime": 28_762,
    "Location": 14_904,
    "PostCode": 14_196,
    "Area": 93,
    "Officer": 1_000,
    "Vehicle": 1_000,
    "PhoneCall": 534,
    "Person": 369,
    "Phone": 328,
    "Email": 328,
    "Object": 7,
}
RELATIONSHIPS = {
    "OCCURRED_AT": 28_762,
    "INVESTIGATED_BY": 28_762,
    "HAS_POSTCODE": 14_904,
    "LOCATION_IN_AREA": 14_904,
    "POSTCODE_IN_AREA": 14_196,
    "INVOLVED_IN": 978 + 7,
    "CALLER": 534,
    "CALLED": 534,
    "KNOWS": 586,
    "KNOWS_SN": 241,
    "KNOWS_PHONE": 118,
    "KNOWS_LW": 80,
    "FAMILY_REL": 155,
    "CURRENT_ADDRESS": 368,
    "HAS_PHONE": 328,
    "HAS_EMAIL": 328,
    "PARTY_TO": 55,
}


@pytest.fixture(scope="module")
def pole() -> GraphData:
    return PoleDataset().build()


def _by_label(data: GraphData, label: str) -> list[dict[str, object]]:
    return [n.properties for n in data.nodes if n.labels[0] == label]


def test_counts_match_source(pole: GraphData) -> None:
    assert sum(NODES.values()) == 61_521 == len(pole.nodes)
    assert sum(RELATIONSHIPS.values()) == 105_840 == len(pole.relationships)
    assert dict(pole.label_counts()) == NODES
    assert dict(pole.type_counts()) == RELATIONSHIPS


def test_involved_in_splits_by_source_label(pole: GraphData) -> None:
    label = {n.key: n.labels[0] for n in pole.nodes}
    sources = Counter(label[r.start] for r in pole.relationships if r.type == "INVOLVED_IN")
    assert sources == {"Vehicle": 978, "Object": 7}


def test_typed_values(pole: GraphData) -> None:
    crimes = _by_label(pole, "Crime")
    assert all(isinstance(c["date"], dt.date) for c in crimes)
    assert {c["date"].month for c in crimes} == {8}  # type: ignore[attr-defined]
    vehicles = _by_label(pole, "Vehicle")
    assert all(type(v["year"]) is int for v in vehicles)
    calls = _by_label(pole, "PhoneCall")
    assert all(
        type(c["call_duration"]) is int and isinstance(c["call_date"], dt.date) for c in calls
    )
    locations = _by_label(pole, "Location")
    assert all(type(loc["latitude"]) is float for loc in locations)
    # empty cells are absent, not "": only one crime has a note, one person an age
    assert sum("note" in c for c in crimes) == 1
    assert [p["age"] for p in _by_label(pole, "Person") if "age" in p] == [12]
    assert all("" not in n.properties.values() for n in pole.nodes)


def test_original_property_keys_kept(pole: GraphData) -> None:
    crime = _by_label(pole, "Crime")[0]
    assert set(crime) <= {"id", "date", "type", "last_outcome", "note", "charge"}
    assert isinstance(crime["id"], str) and len(crime["id"]) == 64  # police.uk hash, not :ID


def test_readme_example_crime(pole: GraphData) -> None:
    piccadilly = {n.key for n in pole.nodes if n.properties.get("address") == "Piccadilly"}
    crime_dates = {n.key: n.properties["date"] for n in pole.nodes if n.labels[0] == "Crime"}
    dates = {
        crime_dates[r.start]
        for r in pole.relationships
        if r.type == "OCCURRED_AT" and r.end in piccadilly
    }
    assert dt.date(2017, 8, 31) in dates


def test_declared_schema(pole: GraphData) -> None:
    schema = PoleDataset().declared_schema()
    assert {s.label: s.count for s in schema.labels} == NODES
    assert {s.type: s.count for s in schema.relationship_types} == RELATIONSHIPS
    label = {n.key: n.labels[0] for n in pole.nodes}
    found = {(label[r.start], r.type, label[r.end]) for r in pole.relationships}
    assert {(p.source, p.type, p.target) for p in schema.patterns} == found
    declared = {s.label: s.properties for s in schema.labels}
    assert declared["Crime"]["date"] == "DATE"
    assert declared["Vehicle"]["year"] == "INTEGER"
    assert declared["Location"]["latitude"] == "FLOAT"
    for node in pole.nodes:
        assert set(node.properties) <= set(declared[node.labels[0]])


def test_registry_and_info() -> None:
    world = get_world("POLE")
    assert isinstance(world, PoleDataset)
    assert world.info.kind == "dataset"
    assert (world.info.expected_nodes, world.info.expected_relationships) == (61_521, 105_840)
    assert "neo4j-graph-examples/pole" in world.info.source
    assert ("Crime", "id") in PoleDataset.INDEXES and ("Person", "nhs_no") in PoleDataset.INDEXES


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared dataset copy not present")
@pytest.mark.parametrize(
    "where",
    [
        SHARED,
        SHARED / "data" / "pole-data-importer",
        SHARED / "data" / "pole-data-importer.zip",
    ],
    ids=["dataset-folder", "extracted-csvs", "zip"],
)
def test_build_from_path_equals_packaged(pole: GraphData, where: Path) -> None:
    other = PoleDataset().build(path=where)
    assert other.nodes == pole.nodes
    assert other.relationships == pole.relationships


@pytest.mark.slow
def test_load_into_engine(make_engine: Callable[..., GraphEngine]) -> None:
    engine = make_engine()
    stats = load_world(engine, PoleDataset())
    assert (stats.nodes, stats.relationships, stats.skipped) == (61_521, 105_840, False)
    assert (engine.node_count(), engine.relationship_count()) == (61_521, 105_840)

    per_label = engine.execute("MATCH (n) RETURN labels(n)[0] AS label, count(*) AS n").rows
    assert {label: n for label, n in per_label} == NODES
    per_type = engine.execute("MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n").rows
    assert {t: n for t, n in per_type} == RELATIONSHIPS

    (row,) = engine.execute(
        "MATCH (v:Vehicle {reg: 'RY52 APF'})-[:INVOLVED_IN]->(c:Crime) "
        "RETURN v.year, c.date ORDER BY c.date LIMIT 1"
    ).rows
    assert type(row[0]) is int and row[0] == 2005
    assert dt.date.fromisoformat(row[1]).year == 2017  # temporal values come back as ISO text
    # stored as DATE, not text: the engine compares it with date() values
    ((august,),) = engine.execute(
        "MATCH (c:Crime) WHERE c.date >= date('2017-08-01') AND c.date <= date('2017-08-31') "
        "RETURN count(c)"
    ).rows
    assert august == 28_762
    dates = engine.execute(
        "MATCH (:Location {address: $a})<-[:OCCURRED_AT]-(c:Crime) RETURN c.date",
        {"a": "Piccadilly"},
    ).rows
    assert ["2017-08-31"] in dates

    again = load_world(engine, PoleDataset())
    assert again.skipped
    assert (engine.node_count(), engine.relationship_count()) == (61_521, 105_840)

    schema = engine.schema()
    declared = PoleDataset().declared_schema()
    assert {s.label for s in schema.labels} == {s.label for s in declared.labels}
    assert {s.type for s in schema.relationship_types} == {
        s.type for s in declared.relationship_types
    }
    assert {(p.source, p.type, p.target) for p in schema.patterns} == {
        (p.source, p.type, p.target) for p in declared.patterns
    }
    types = {s.label: s.properties for s in declared.labels}
    for label in schema.labels:
        for key, type_name in label.properties.items():
            assert types[label.label][key] == type_name, (label.label, key)

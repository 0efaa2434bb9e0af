"""Healthcare (FDA FAERS) dataset: build from the packaged zip and from a path, load, read back.

Expected counts are copied from the dataset's SOURCE.md (neo4j-graph-examples/healthcare-analytics).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.graph import GraphData, GraphEngine
from cypherturn.worlds import get_world, load_world
from cypherturn.worlds._healthcare import HealthcareDataset

SHARED = Path("/work/shared/datasets/healthcare")

NODES = {
    "Case": 4_307,
    "Drug": 2_500,
    "Reaction": 2_701,
    "Therapy": 1_721,
    "Manufacturer": 136,
    "Outcome": 6,
    "ReportSource": 5,
    "AgeGroup": 5,
}
RELATIONSHIPS = {
    "REGISTERED": 4_307,
    "FALLS_UNDER": 4_307,
    "HAS_REACTION": 21_069,
    "RESULTED_IN": 4_461,
    "REPORTED_BY": 4_307,
    "IS_PRIMARY_SUSPECT": 3_830,
    "IS_SECONDARY_SUSPECT": 3_616,
    "IS_CONCOMITANT": 8_393,
    "IS_INTERACTING": 1,
    "RECEIVED": 1_721,
    "PRESCRIBED": 5_441,
}
CASE_DRUG = ("IS_PRIMARY_SUSPECT", "IS_SECONDARY_SUSPECT", "IS_CONCOMITANT", "IS_INTERACTING")


@pytest.fixture(scope="module")
def healthcare() -> GraphData:
    return HealthcareDataset().build()


def test_counts_match_source(healthcare: GraphData) -> None:
    assert sum(NODES.values()) == 11_381 == len(healthcare.nodes)
    assert sum(RELATIONSHIPS.values()) == 61_453 == len(healthcare.relationships)
    assert dict(healthcare.label_counts()) == NODES
    assert dict(healthcare.type_counts()) == RELATIONSHIPS


def test_typed_values(healthcare: GraphData) -> None:
    cases = [n.properties for n in healthcare.nodes if n.labels == ("Case",)]
    assert all(type(c["age"]) is float for c in cases)
    assert all(type(c["primaryid"]) is int for c in cases)
    assert all(isinstance(c["eventDate"], dt.date) for c in cases)
    assert cases[0]["reportDate"] == dt.date(2021, 8, 27)
    prescribed = [r.properties for r in healthcare.relationships if r.type == "PRESCRIBED"]
    assert all(
        type(p["drugSequence"]) is int and type(p["startYear"]) is int and type(p["endYear"]) is int
        for p in prescribed
    )
    dosage = [r.properties for r in healthcare.relationships if r.type in CASE_DRUG]
    assert all(type(p["drugSequence"]) is int for p in dosage)
    assert all(type(p["doseAmount"]) is float for p in dosage if "doseAmount" in p)
    # seven cells hold a substance name or a route instead of a dose: left out, not stored as text
    assert sum("doseAmount" not in p for p in dosage) == 7


def test_declared_schema(healthcare: GraphData) -> None:
    schema = HealthcareDataset().declared_schema()
    assert {s.label: s.count for s in schema.labels} == NODES
    assert {s.type: s.count for s in schema.relationship_types} == RELATIONSHIPS
    label = {n.key: n.labels[0] for n in healthcare.nodes}
    found = {(label[r.start], r.type, label[r.end]) for r in healthcare.relationships}
    assert {(p.source, p.type, p.target) for p in schema.patterns} == found
    declared = {s.label: s.properties for s in schema.labels}
    assert declared["Case"] == {
        "primaryid": "INTEGER",
        "age": "FLOAT",
        "ageUnit": "STRING",
        "gender": "STRING",
        "eventDate": "DATE",
        "reportDate": "DATE",
        "reporterOccupation": "STRING",
    }
    rel_props = {s.type: s.properties for s in schema.relationship_types}
    assert rel_props["IS_PRIMARY_SUSPECT"]["drugSequence"] == "INTEGER"
    assert rel_props["IS_CONCOMITANT"]["doseAmount"] == "FLOAT"


def test_registry_and_info() -> None:
    world = get_world("Healthcare")
    assert isinstance(world, HealthcareDataset)
    assert (world.info.expected_nodes, world.info.expected_relationships) == (11_381, 61_453)
    assert "healthcare-analytics" in world.info.source
    assert ("Drug", "name") in HealthcareDataset.INDEXES
    assert ("Manufacturer", "manufacturerName") in HealthcareDataset.INDEXES


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared dataset copy not present")
@pytest.mark.parametrize(
    "where",
    [
        SHARED,
        SHARED / "data" / "healthcare-analytics-data-importer",
        SHARED / "data" / "healthcare-analytics-data-importer.zip",
    ],
    ids=["dataset-folder", "extracted-csvs", "zip"],
)
def test_build_from_path_equals_packaged(healthcare: GraphData, where: Path) -> None:
    other = HealthcareDataset().build(path=where)
    assert other.nodes == healthcare.nodes
    assert other.relationships == healthcare.relationships


@pytest.mark.slow
def test_load_into_engine(make_engine: Callable[..., GraphEngine], healthcare: GraphData) -> None:
    engine = make_engine()
    stats = load_world(engine, HealthcareDataset())
    assert (stats.nodes, stats.relationships, stats.skipped) == (11_381, 61_453, False)
    assert (engine.node_count(), engine.relationship_count()) == (11_381, 61_453)

    per_label = engine.execute("MATCH (n) RETURN labels(n)[0] AS label, count(*) AS n").rows
    assert {label: n for label, n in per_label} == NODES
    per_type = engine.execute("MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n").rows
    assert {t: n for t, n in per_type} == RELATIONSHIPS

    (row,) = engine.execute(
        "MATCH (m:Manufacturer)-[:REGISTERED]->(c:Case {primaryid: 100654764}) "
        "RETURN m.manufacturerName, c.age, c.eventDate"
    ).rows
    assert row[0] == "NOVARTIS"
    assert type(row[1]) is float and row[1] == 56.0
    assert row[2] == "2014-03-25"
    ((dated,),) = engine.execute(
        "MATCH (c:Case) WHERE c.eventDate < date('2022-01-01') RETURN count(c)"
    ).rows
    assert dated == 4_307  # stored as DATE: every case compares with a date() value
    ((heavy,),) = engine.execute(
        "MATCH (:Case)-[r:IS_PRIMARY_SUSPECT]->(:Drug) WHERE r.doseAmount > 100.0 RETURN count(r)"
    ).rows
    assert heavy == sum(
        r.properties.get("doseAmount", 0.0) > 100.0
        for r in healthcare.relationships
        if r.type == "IS_PRIMARY_SUSPECT"
    )

    replaced = load_world(engine, HealthcareDataset(), replace=True)
    assert not replaced.skipped
    assert (engine.node_count(), engine.relationship_count()) == (11_381, 61_453)
    assert load_world(engine, HealthcareDataset()).skipped
    # the skip is decided from the expected counts alone: a bad path is never read
    assert load_world(engine, HealthcareDataset(), path=Path("/nonexistent")).skipped

    schema = engine.schema()
    declared = HealthcareDataset().declared_schema()
    assert {s.label for s in schema.labels} == {s.label for s in declared.labels}
    assert {s.type for s in schema.relationship_types} == {
        s.type for s in declared.relationship_types
    }
    assert {(p.source, p.type, p.target) for p in schema.patterns} == {
        (p.source, p.type, p.target) for p in declared.patterns
    }
    label_types = {s.label: s.properties for s in declared.labels}
    for label in schema.labels:
        for key, type_name in label.properties.items():
            assert label_types[label.label][key] == type_name, (label.label, key)
    rel_types = {s.type: s.properties for s in declared.relationship_types}
    for rel in schema.relationship_types:
        for key, type_name in rel.properties.items():
            assert rel_types[rel.type][key] == type_name, (rel.type, key)

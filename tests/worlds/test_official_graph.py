"""Import of official CypherTurn graph files (data.cypher + schema.json), pure and into the engine."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphEngine
from cypherturn.worlds import load_official_graph, read_official_graph, read_official_schema

TINY = Path(__file__).with_name("official_tiny")
SCRIPT, SCHEMA = TINY / "data.cypher", TINY / "schema.json"


def test_tiny_official_graph_matches_its_schema_file() -> None:
    data = read_official_graph(SCRIPT, SCHEMA)
    assert data.name == "tiny_academy"
    assert dict(data.label_counts()) == {"House": 2, "Professor": 2, "Student": 2, "Course": 2}
    assert dict(data.type_counts()) == {
        "HEADS_HOUSE": 2,
        "BELONGS_TO_HOUSE": 2,
        "TEACHES": 2,
        "ENROLLED_IN": 3,
    }
    names = {n.properties["name"] for n in data.nodes}
    assert {
        "Tide's Crest",
        'Bram "the Quiet"',
        "Lady Vey; the Elder",
        "Ada // not a comment",
    } <= names
    course = next(n for n in data.nodes if n.properties["name"] == "Basic Flames")
    assert course.properties == {"name": "Basic Flames", "level": "Beginner", "credits": 4}
    ada = next(n for n in data.nodes if n.properties["name"].startswith("Ada"))
    assert ada.properties["enrolled_on"] == dt.date(1325, 9, 1)
    assert ("Course", "name") in data.indexes


def test_schema_file_converts_to_a_graph_schema() -> None:
    schema = read_official_schema(SCHEMA).graph_schema()
    assert {
        s.label: s.properties["founded_year" if s.label == "House" else "name"]
        for s in schema.labels
    }["House"] == "INTEGER"
    student = next(s for s in schema.labels if s.label == "Student")
    assert student.properties == {"name": "STRING", "year": "INTEGER", "enrolled_on": "DATE"}
    assert {(p.source, p.type, p.target) for p in schema.patterns} >= {
        ("Student", "ENROLLED_IN", "Course")
    }


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s["nodes"][0].update(count=3), "House: 2 nodes, schema says 3"),
        (lambda s: s["nodes"].pop(), "label 'Course'"),
        (lambda s: s["relationships"].pop(), "relationship type 'ENROLLED_IN'"),
        (
            lambda s: s["relationships"][2].update(source="Student"),
            r"pattern \(Professor\)-\[:TEACHES\]",
        ),
        (lambda s: s["relationships"][2].update(count=5), "TEACHES.*2, schema says 5"),
        (lambda s: s.pop("nodes"), "not a CypherTurn schema.json"),
    ],
)
def test_mismatch_with_the_schema_file_is_a_dataset_error(
    tmp_path: Path, edit: Callable[[dict], object], message: str
) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    edit(schema)
    broken = tmp_path / "schema.json"
    broken.write_text(json.dumps(schema), encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        read_official_graph(SCRIPT, broken)


def test_missing_files_are_dataset_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="cannot read"):
        read_official_graph(tmp_path / "none.cypher", SCHEMA)
    with pytest.raises(DatasetError, match="cannot read schema"):
        read_official_graph(SCRIPT, tmp_path / "none.json")


def test_official_graph_loads_into_the_engine(make_engine: Callable[..., GraphEngine]) -> None:
    engine = make_engine()
    stats = load_official_graph(engine, SCRIPT, SCHEMA, engine.graph)
    assert (stats.nodes, stats.relationships) == (8, 9)
    rows = engine.execute(
        "MATCH (s:Student)-[e:ENROLLED_IN]->(c:Course) RETURN s.name, c.name, e.grade "
        "ORDER BY s.name, c.name"
    ).rows
    assert rows == [
        ["Ada // not a comment", "Basic Flames", "A"],
        ['Bram "the Quiet"', "Basic Flames", "B"],
        ['Bram "the Quiet"', "Tides, Advanced", "B"],
    ]
    assert engine.execute("MATCH (s:Student {year: 2}) RETURN s.enrolled_on").rows == [
        ["1325-09-01"]
    ]


RELABEL = Path(__file__).with_name("official_relabel")


def test_a_script_the_reader_cannot_interpret_runs_on_the_engine(
    make_engine: Callable[..., GraphEngine],
) -> None:
    """The released ocean_kingdom layout: an unbound variable in a relationship CREATE makes an
    unlabelled node, and the last statement re-labels it with MATCH ... WHERE ... SET."""
    script, schema = RELABEL / "data.cypher", RELABEL / "schema.json"
    with pytest.raises(DatasetError, match=r"data\.cypher:\d+: WHERE is not supported"):
        read_official_graph(script, schema)
    engine = make_engine()
    stats = load_official_graph(engine, script, schema, engine.graph)
    declared = json.loads(schema.read_text())
    assert stats.nodes == sum(n["count"] for n in declared["nodes"]) == 8
    assert stats.relationships == sum(r["count"] for r in declared["relationships"]) == 5
    counts = dict(
        engine.execute("MATCH (n) RETURN labels(n)[0] AS label, count(*) AS n ORDER BY label").rows
    )
    assert counts == {n["label"]: n["count"] for n in declared["nodes"]}
    assert engine.execute("MATCH (n) WHERE size(labels(n)) = 0 RETURN count(n)").rows == [[0]]
    relabelled = engine.execute(
        "MATCH (:Citizen {name: 'Ilara Starpool'})-[:TAMES]->(c:Creature) "
        "RETURN c.name, c.temperament, c.danger_level"
    ).rows
    assert relabelled == [["Abyssal Specter", "Elusive", 6]]
    indexed = {row[0] for row in engine.execute("CALL db.indexes()").rows}
    assert indexed == {"Kingdom", "Citizen", "Creature"}, "the schema's name indexes are made"


def test_engine_run_scripts_are_checked_against_the_schema_and_dropped_on_failure(
    make_engine: Callable[..., GraphEngine], tmp_path: Path
) -> None:
    script = (RELABEL / "data.cypher").read_text()
    schema = json.loads((RELABEL / "schema.json").read_text())
    schema["nodes"][2]["count"] = 2
    (tmp_path / "schema.json").write_text(json.dumps(schema))
    (tmp_path / "data.cypher").write_text(script)
    engine = make_engine()
    with pytest.raises(DatasetError, match="Creature: 3 nodes, schema says 2"):
        load_official_graph(engine, tmp_path / "data.cypher", tmp_path / "schema.json", "x")
    assert engine.node_count() == 0, "a graph that fails its schema check is dropped"

    broken = script.replace("size(labels(n))=0", "size(labels(n)) =")
    (tmp_path / "data.cypher").write_text(broken)
    with pytest.raises(DatasetError, match=r"data\.cypher:19: the engine refused a statement"):
        load_official_graph(engine, tmp_path / "data.cypher", RELABEL / "schema.json", "x")
    assert engine.node_count() == 0

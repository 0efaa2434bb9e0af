"""Driver values to plain shapes: real FalkorDB results, and real neo4j driver value types."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable

import neo4j.spatial
import neo4j.time
import pytest
from dateutil.relativedelta import relativedelta

from cypherturn.graph import GraphEngine, to_plain
from cypherturn.graph._values import duration_iso, type_name


@pytest.fixture
def engine(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    graph = make_engine("values")
    graph.write(
        "CREATE (a:Person:Employee {name: 'Ann', born: date('1990-05-17'), big: 9007199254740993,"
        " tags: ['x', 'y'], seen: localdatetime('2021-03-04T05:06:07')})"
        "-[:KNOWS {since: date('2001-02-03'), weight: 0.5}]->(b:Person {name: 'Bob'})"
    )
    return graph


def test_node_relationship_path_shapes(engine: GraphEngine) -> None:
    result = engine.execute("MATCH p = (a:Employee)-[r:KNOWS]->(b) RETURN a, r, b, p")
    a, r, b, p = result.rows[0]
    assert a == {
        "_kind": "node",
        "id": a["id"],
        "labels": ["Person", "Employee"],
        "properties": {
            "name": "Ann",
            "born": "1990-05-17",
            "big": 9007199254740993,
            "tags": ["x", "y"],
            "seen": "2021-03-04T05:06:07",
        },
    }
    assert isinstance(a["id"], int)
    assert r == {
        "_kind": "relationship",
        "id": r["id"],
        "type": "KNOWS",
        "start": a["id"],
        "end": b["id"],
        "properties": {"since": "2001-02-03", "weight": 0.5},
    }
    assert p == {"_kind": "path", "nodes": [a, b], "relationships": [r]}
    json.dumps(result.rows)  # plain Python all the way down


def test_scalars_temporals_points_maps(engine: GraphEngine) -> None:
    result = engine.execute(
        "RETURN 9223372036854775807 AS max_int, -9223372036854775808 AS min_int, 1.5 AS f,"
        " true AS t, null AS n, 'é' AS s, date('2024-02-29') AS d,"
        " localdatetime('2024-02-29T23:59:58') AS ldt, localtime('12:30:15') AS lt,"
        " duration('P1Y2M3DT4H5M6S') AS dur, duration('PT0S') AS zero,"
        " point({latitude: 52.5, longitude: 13.25}) AS pt, {k: [1, {m: date('2020-01-01')}]} AS m"
    )
    assert result.records() == [
        {
            "max_int": 9223372036854775807,
            "min_int": -9223372036854775808,
            "f": 1.5,
            "t": True,
            "n": None,
            "s": "é",
            "d": "2024-02-29",
            "ldt": "2024-02-29T23:59:58",
            "lt": "12:30:15",
            "dur": "P1Y2M3DT4H5M6S",
            "zero": "PT0S",
            "pt": {"latitude": 52.5, "longitude": 13.25},
            "m": {"k": [1, {"m": "2020-01-01"}]},
        }
    ]


def test_neo4j_driver_values() -> None:
    assert to_plain(neo4j.time.Date(2020, 1, 2)) == "2020-01-02"
    assert to_plain(neo4j.time.DateTime(2020, 1, 2, 3, 4, 5)) == "2020-01-02T03:04:05.000000000"
    aware = neo4j.time.DateTime(2020, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert to_plain(aware) == "2020-01-02T03:04:05.000000000+00:00"
    assert to_plain(neo4j.time.Time(12, 30)) == "12:30:00.000000000"
    assert to_plain(neo4j.time.Duration(months=14, days=3, seconds=7)) == "P1Y2M3DT7S"
    assert to_plain(neo4j.spatial.WGS84Point((13.4, 52.5))) == {"latitude": 52.5, "longitude": 13.4}
    assert to_plain(neo4j.spatial.CartesianPoint((1.0, 2.0))) == {"x": 1.0, "y": 2.0}
    assert type_name(aware) == "DATE_TIME"
    assert type_name(neo4j.time.DateTime(2020, 1, 2)) == "LOCAL_DATE_TIME"
    assert type_name(neo4j.time.Date(2020, 1, 2)) == "DATE"
    assert type_name(neo4j.spatial.WGS84Point((1.0, 2.0))) == "POINT"


@pytest.mark.parametrize(
    ("delta", "iso"),
    [
        (relativedelta(), "PT0S"),
        (relativedelta(days=1), "P1D"),
        (relativedelta(hours=1, seconds=30), "PT1H30S"),
        (relativedelta(seconds=1, microseconds=500000), "PT1.5S"),
        (dt.timedelta(days=2, seconds=61), "P2DT1M1S"),
    ],
)
def test_duration_iso(delta: relativedelta | dt.timedelta, iso: str) -> None:
    assert duration_iso(delta) == iso


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("x", "STRING"),
        (1, "INTEGER"),
        (1.0, "FLOAT"),
        (False, "BOOLEAN"),
        ([1], "LIST"),
        (dt.date(2020, 1, 1), "DATE"),
        (dt.datetime(2020, 1, 1, tzinfo=dt.UTC), "LOCAL_DATE_TIME"),
        (dt.time(1, 2), "LOCAL_TIME"),
        (relativedelta(days=1), "DURATION"),
        ({"latitude": 1.0, "longitude": 2.0}, "POINT"),
        ({"a": 1}, "MAP"),
        (None, "NULL"),
    ],
)
def test_type_name(value: object, name: str) -> None:
    assert type_name(value) == name

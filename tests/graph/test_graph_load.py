"""Bulk load round trips through the real engine."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest

from cypherturn.errors import ConfigError, DatasetError
from cypherturn.graph import GraphData, GraphEngine, NodeRecord, RelationshipRecord


def _data() -> GraphData:
    nodes = [
        NodeRecord(
            f"p{i}",
            ("Person",),
            {
                "name": f"P{i}",
                "born": dt.date(1980 + i, 1, 2 + i),
                "score": i * 0.5,
                "tags": [f"t{i}", "x"],
                "note": None if i % 2 else "q'\"\\ ü",
            },
        )
        for i in range(7)
    ]
    nodes += [
        NodeRecord(
            "o1",
            ("Officer", "Person"),
            {
                "name": "Sam",
                "badge": 9007199254740993,
                "active": True,
                "shifts": [dt.date(2020, 1, 1), dt.date(2020, 1, 8)],
            },
        ),
        NodeRecord(2, ("Crime",), {"type": "Theft", "date": dt.date(2017, 8, 20)}),
        NodeRecord(3, ("Crime",), {"type": "Arson"}),
    ]
    rels = [
        RelationshipRecord(f"p{i}", f"p{i + 1}", "KNOWS", {"since": dt.date(2000 + i, 5, 1)})
        for i in range(6)
    ]
    rels += [
        RelationshipRecord("o1", 2, "INVESTIGATED", {"hours": 3}),
        RelationshipRecord("p0", 2, "PARTY_TO"),
        RelationshipRecord("p1", 3, "PARTY_TO"),
    ]
    return GraphData(
        name="loadtest",
        nodes=nodes,
        relationships=rels,
        indexes=[("Person", "name"), ("Crime", "type")],
    )


def test_round_trip(make_engine: Callable[..., GraphEngine]) -> None:
    engine = make_engine("load")
    data = _data()
    stats = engine.load(data, batch_size=3)
    assert (stats.nodes, stats.relationships) == (10, 9)
    assert stats.graph == engine.graph and stats.seconds > 0

    rows = engine.execute(
        "MATCH (p:Person {name: 'P1'}) RETURN p.born, typeof(p.born), p.score, p.tags, p.note"
    ).rows
    assert rows == [["1981-01-03", "Date", 0.5, ["t1", "x"], None]]
    rows = engine.execute("MATCH (p:Person {name: 'P0'}) RETURN p.note").rows
    assert rows == [["q'\"\\ ü"]]
    officer = engine.execute("MATCH (o:Officer) RETURN o").rows[0][0]
    assert sorted(officer["labels"]) == ["Officer", "Person"]
    assert officer["properties"]["badge"] == 9007199254740993
    assert officer["properties"]["shifts"] == ["2020-01-01", "2020-01-08"]
    assert engine.execute(
        "MATCH (o:Officer) RETURN typeof(o.shifts[0]), o.shifts[1] > date('2020-01-05')"
    ).rows == [["Date", True]]
    assert engine.execute(
        "MATCH (a)-[k:KNOWS]->(b) WHERE a.name = 'P2' RETURN b.name, k.since"
    ).rows == [["P3", "2002-05-01"]]
    assert engine.execute(
        "MATCH (p)-[:PARTY_TO]->(c:Crime) RETURN p.name, c.type ORDER BY p.name"
    ).rows == [["P0", "Theft"], ["P1", "Arson"]]
    # Range filters on a loaded date work like on a native one.
    assert engine.execute(
        "MATCH (c:Crime) WHERE c.date >= date('2017-01-01') RETURN c.type"
    ).rows == [["Theft"]]
    # load returns once the indexes are built, so no later query is planned on a half-built one
    indexes = engine.execute(
        "CALL db.indexes() YIELD label, properties, status RETURN label, properties, status"
    )
    assert sorted((label, props, status) for label, props, status in indexes.rows) == [
        ("Crime", ["type"], "OPERATIONAL"),
        ("Person", ["name"], "OPERATIONAL"),
    ]


def test_replace_is_idempotent_and_append_is_refused(
    make_engine: Callable[..., GraphEngine],
) -> None:
    engine = make_engine("reload")
    first = engine.load(_data())
    with pytest.raises(DatasetError, match="replace=True"):
        engine.load(_data())
    second = engine.load(_data(), replace=True)
    assert (first.nodes, first.relationships) == (second.nodes, second.relationships) == (10, 9)
    assert engine.node_count() == 10


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (GraphData("bad", nodes=[NodeRecord(1, ("A",)), NodeRecord(1, ("A",))]), "duplicate"),
        (
            GraphData(
                "bad", nodes=[NodeRecord(1, ("A",))], relationships=[RelationshipRecord(1, 2, "R")]
            ),
            "unknown node key",
        ),
        (GraphData("bad", nodes=[NodeRecord(1, ("A`B",))]), "invalid label"),
        (GraphData("bad", nodes=[NodeRecord(1, ())]), "no label"),
        (GraphData("bad", nodes=[NodeRecord(1, ("A",), {"m": {"nested": 1}})]), "unsupported"),
    ],
)
def test_malformed_data_is_refused_before_writing(
    make_engine: Callable[..., GraphEngine], data: GraphData, message: str
) -> None:
    engine = make_engine("bad")
    with pytest.raises(DatasetError, match=message):
        engine.load(data)
    assert engine.node_count() == 0


def test_batch_size_must_be_positive(make_engine: Callable[..., GraphEngine]) -> None:
    with pytest.raises(ConfigError):
        make_engine().load(_data(), batch_size=0)

"""JSON-lines export: layout, byte-stable output, round trip with dates, malformed files refused."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import pytest
from world_graphs import built

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphData, NodeRecord, RelationshipRecord
from cypherturn.worlds import GraphFileHeader, read_graph_jsonl, write_graph_jsonl


def test_layout_header_then_nodes_then_relationships(tmp_path: Path) -> None:
    data = built("arcane_archive")
    out = tmp_path / "archive.jsonl"
    lines = write_graph_jsonl(data, out)
    text = out.read_text(encoding="utf-8")
    assert text.endswith("\n") and lines == text.count("\n") == 1 + len(data.nodes) + len(
        data.relationships
    )
    records = [json.loads(line) for line in text.splitlines()]
    header = GraphFileHeader.model_validate(records[0])
    assert (header.name, header.nodes, header.relationships) == (
        "arcane_archive",
        420,
        len(data.relationships),
    )
    assert header.node_dates == {"Conclave": ["convened_on"], "Scholar": ["ordained_on"]}
    kinds = [r["kind"] for r in records[1:]]
    assert kinds == ["node"] * len(data.nodes) + ["relationship"] * len(data.relationships)
    scholar = next(r for r in records if r.get("labels") == ["Scholar"])
    assert dt.date.fromisoformat(scholar["properties"]["ordained_on"])
    assert list(scholar) == sorted(scholar)  # keys sorted: byte-stable output


def test_round_trip_restores_the_graph(tmp_path: Path) -> None:
    data = built("magic_academy", 4)
    out = tmp_path / "academy.jsonl"
    write_graph_jsonl(data, out)
    back = read_graph_jsonl(out)
    assert (back.name, back.source, back.indexes) == (data.name, data.source, data.indexes)
    assert back.nodes == data.nodes and back.relationships == data.relationships


def test_lists_of_dates_and_unicode_round_trip(tmp_path: Path) -> None:
    data = GraphData(
        "g",
        [
            NodeRecord("a", ("X",), {"days": [dt.date(2020, 1, 2)], "name": "Zoë"}),
            NodeRecord("b", ("X",), {"name": "β"}),
        ],
        [RelationshipRecord("a", "b", "R", {"on": dt.date(1999, 12, 31), "w": 0.5})],
    )
    out = tmp_path / "g.jsonl"
    write_graph_jsonl(data, out)
    assert "Zoë" in out.read_text(encoding="utf-8")
    back = read_graph_jsonl(out)
    assert back.nodes == data.nodes and back.relationships == data.relationships


def test_unexportable_value_is_a_dataset_error() -> None:
    data = GraphData("g", [NodeRecord(1, ("X",), {"at": object()})])
    with pytest.raises(DatasetError, match="cannot be exported"):
        write_graph_jsonl(data, io.StringIO())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"format": "other"}\n', "not a cypherturn graph file"),
        (
            '{"name": "g", "nodes": 0, "relationships": 0, "format_version": 9}\n',
            "format version 9",
        ),
        (
            '{"name": "g", "nodes": 2, "relationships": 0}\n{"kind": "node", "key": 1, "labels": ["X"], '
            '"properties": {}}\n',
            "promises 2 nodes",
        ),
        (
            '{"name": "g", "nodes": 1, "relationships": 0}\n{"kind": "edge"}\n',
            "unknown record kind",
        ),
        ('{"name": "g", "nodes": 1, "relationships": 0}\n{"kind": "node"\n', "malformed record"),
    ],
)
def test_malformed_files_are_dataset_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        read_graph_jsonl(path)

"""The neo4j-admin import CSV reader: header parsing, cell typing, malformed files."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from cypherturn.errors import DatasetError
from cypherturn.worlds._admin_csv import (
    DATE_DMY,
    FLOAT,
    INTEGER,
    STRING,
    AdminCsvFile,
    ColumnRole,
    ValueType,
    lenient,
    parse_header,
)

_CASES = json.loads((Path(__file__).parent / "admin_csv_cases.json").read_text())
_TYPES = {"INTEGER": INTEGER, "FLOAT": FLOAT, "STRING": STRING}


def _open(tmp_path: Path, text: str, name: str = "data.csv") -> tuple[Any, str]:
    file = tmp_path / name
    file.write_text(text, encoding="utf-8")
    return file.open(encoding="utf-8", newline=""), str(file)


@pytest.mark.parametrize("case", _CASES["headers"], ids=lambda c: ",".join(c["header"]))
def test_header(case: dict[str, Any]) -> None:
    types = {k: _TYPES[v] for k, v in case.get("types", {}).items()}
    if "error" in case:
        with pytest.raises(DatasetError, match="hdr.csv, line 1: .*" + case["error"]):
            parse_header(case["header"], types=types, source="hdr.csv")
        return
    header = parse_header(case["header"], types=types, source="hdr.csv")
    assert header.kind == case["kind"]
    got = [[c.role.value, c.key, c.value_type.name] for c in header.columns]
    assert got == case["columns"]


def test_header_groups_and_arrays() -> None:
    header = parse_header([":START_ID(Person)", ":END_ID(Movie)", "roles:string[]"])
    assert [c.group for c in header.columns] == ["Person", "Movie", ""]
    assert [c.array for c in header.columns] == [False, False, True]
    assert header.index(ColumnRole.TYPE) is None


@pytest.mark.parametrize("case", _CASES["values"], ids=lambda c: f"{c['type']}:{c['cell']}")
def test_cell_typing(tmp_path: Path, case: dict[str, Any]) -> None:
    cell = case["cell"]
    quoted = '"' + cell.replace('"', '""') + '"'
    lines, source = _open(tmp_path, f":ID,v:{case['type']}\n1,{quoted}\n")
    with lines:
        reader = AdminCsvFile(lines, source=source, default_labels=("N",))
        if "error" in case:
            with pytest.raises(
                DatasetError, match=f"data.csv, line 2: column 'v': {case['error']}"
            ):
                list(reader.nodes())
            return
        (node,) = reader.nodes()
    value = node.properties["v"]
    expected: Any = dt.date.fromisoformat(case["date"]) if "date" in case else case["value"]
    assert value == expected
    assert type(value) is type(expected)
    if isinstance(value, list):
        assert [type(x) for x in value] == [type(x) for x in expected]


def test_node_file(tmp_path: Path) -> None:
    text = (
        ":ID,name,age:int,note,:LABEL\n"
        "1,Ann,34,,Person\n"
        '2,"Smith, Bob",,"two\nlines",Person;Suspect\n'
        "3,Cy,7,x,\n"
    )
    lines, source = _open(tmp_path, text)
    with lines:
        nodes = list(AdminCsvFile(lines, source=source, default_labels=("Thing",)).nodes())
    assert [n.key for n in nodes] == ["1", "2", "3"]
    assert nodes[0].properties == {"name": "Ann", "age": 34}  # empty note is absent, not ""
    assert nodes[1].labels == ("Person", "Suspect")
    assert nodes[1].properties == {"name": "Smith, Bob", "note": "two\nlines"}
    assert nodes[2].labels == ("Thing",)


def test_named_id_is_stored_and_groups_prefix_keys(tmp_path: Path) -> None:
    lines, source = _open(tmp_path, "code:ID(Area),:LABEL\nWN3,Area\n")
    with lines:
        (node,) = AdminCsvFile(lines, source=source).nodes()
    assert node.key == "Area:WN3"
    assert node.properties == {"code": "WN3"}


def test_relationship_file(tmp_path: Path) -> None:
    text = ":START_ID,:END_ID,:TYPE,rel_type,since:int\n0,2,FAMILY_REL,SIBLING,1999\n5,6,,PARENT,\n"
    lines, source = _open(tmp_path, text)
    with lines:
        rels = list(AdminCsvFile(lines, source=source, default_type="KNOWS").relationships())
    assert [(r.start, r.end, r.type) for r in rels] == [
        ("0", "2", "FAMILY_REL"),
        ("5", "6", "KNOWS"),
    ]
    assert rels[0].properties == {"rel_type": "SIBLING", "since": 1999}
    assert rels[1].properties == {"rel_type": "PARENT"}


def test_types_map_types_unannotated_columns_only(tmp_path: Path) -> None:
    lines, source = _open(
        tmp_path, ":ID,year,date,model,lat:double\n1,2005,24/08/2017,4Runner,53.5\n"
    )
    types: dict[str, ValueType] = {"year": INTEGER, "date": DATE_DMY, "lat": STRING}
    with lines:
        (node,) = AdminCsvFile(
            lines, source=source, types=types, default_labels=("Vehicle",)
        ).nodes()
    assert node.properties == {
        "year": 2005,
        "date": dt.date(2017, 8, 24),
        "model": "4Runner",
        "lat": 53.5,  # the header's annotation wins over the map
    }


def test_lenient_type_drops_and_counts(tmp_path: Path) -> None:
    text = ":START_ID,:END_ID,:TYPE,doseAmount\n1,2,T,0.5\n1,3,T,AMPHETAMINE\n1,4,T,20\n"
    lines, source = _open(tmp_path, text)
    with lines:
        reader = AdminCsvFile(lines, source=source, types={"doseAmount": lenient(FLOAT)})
        rels = list(reader.relationships())
    assert [r.properties for r in rels] == [{"doseAmount": 0.5}, {}, {"doseAmount": 20.0}]
    assert reader.dropped == {"doseAmount": 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (":ID,name,:LABEL\n1,Ann,Person\n2,Bob\n", r", line 3: expected 3 fields, found 2"),
        (
            ":ID,name,:LABEL\n1,Ann,Person\n2,Bob,Person,extra\n",
            r", line 3: expected 3 fields, found 4",
        ),
        (':ID,name,:LABEL\n1,"multi\nline",Person\n2,x\n', r", line 4: expected 3 fields"),
        (
            ":ID,age:int,:LABEL\n1,34,Person\n2,3x,Person\n",
            r", line 3: column 'age': INTEGER expected",
        ),
        (":ID,name,:LABEL\n1,Ann,Person\n,Bob,Person\n", r", line 3: empty :ID value"),
        (":ID,name\n1,Ann\n", r", line 2: no label"),
        (':ID,name,:LABEL\n1,"Ann,Person\n', r", line \d+: unexpected end of data"),
        ("", r": empty file, no header row"),
    ],
)
def test_malformed_node_file(tmp_path: Path, text: str, message: str) -> None:
    lines, source = _open(tmp_path, text, "people.csv")
    with lines, pytest.raises(DatasetError, match="people.csv" + message):
        list(AdminCsvFile(lines, source=source).nodes())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (":START_ID,:END_ID,:TYPE\n1,,KNOWS\n", r", line 2: empty :END_ID value"),
        (":START_ID,:END_ID,:TYPE\n1,2,\n", r", line 2: no relationship type"),
        (":START_ID,:END_ID,:TYPE,n:int\n1,2,T,1.5\n", r", line 2: column 'n': INTEGER expected"),
    ],
)
def test_malformed_relationship_file(tmp_path: Path, text: str, message: str) -> None:
    lines, source = _open(tmp_path, text, "rels.csv")
    with lines, pytest.raises(DatasetError, match="rels.csv" + message):
        list(AdminCsvFile(lines, source=source).relationships())


def test_wrong_reader_for_file_kind(tmp_path: Path) -> None:
    lines, source = _open(tmp_path, ":START_ID,:END_ID,:TYPE\n1,2,T\n")
    with lines:
        reader = AdminCsvFile(lines, source=source)
        with pytest.raises(DatasetError, match="a relationship file, not a node file"):
            list(reader.nodes())


def test_undecodable_bytes(tmp_path: Path) -> None:
    file = tmp_path / "latin.csv"
    file.write_bytes(":ID,name,:LABEL\n1,Ann,Person\n2,Ren\xe9e,Person\n".encode("latin-1"))
    with (
        file.open(encoding="utf-8", newline="") as lines,
        pytest.raises(DatasetError, match=r"latin\.csv: not UTF-8 text \(after line \d+\)"),
    ):
        list(AdminCsvFile(lines, source="latin.csv").nodes())

"""Data Importer packages: locating them, and refusing malformed or miscounted ones.

The cases edit a copy of the packaged Healthcare CSVs (the smaller dataset) in a tmp dir.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from cypherturn.errors import DatasetError
from cypherturn.worlds._healthcare import HealthcareDataset

PREFIX = "healthcare-analytics"


@pytest.fixture
def csv_dir(tmp_path: Path) -> Path:
    """The packaged Healthcare CSVs, extracted to a tmp folder."""
    packaged = resources.files("cypherturn") / "data" / "datasets" / "healthcare"
    target = tmp_path / "csv"
    with (packaged / HealthcareDataset.ARCHIVE).open("rb") as fh, zipfile.ZipFile(fh) as archive:
        archive.extractall(target)
    return target


def _edit(folder: Path, kind: str, name: str, change: Callable[[list[str]], None]) -> None:
    file = folder / f"{PREFIX}.{kind}.{name}.csv"
    lines = file.read_text(encoding="utf-8").splitlines(keepends=True)
    change(lines)
    file.write_text("".join(lines), encoding="utf-8")


def _set(line: int, text: str) -> Callable[[list[str]], None]:
    def change(lines: list[str]) -> None:
        lines[line - 1] = text

    return change


def test_extracted_copy_builds(csv_dir: Path) -> None:
    data = HealthcareDataset().build(path=csv_dir)
    assert (len(data.nodes), len(data.relationships)) == (11_381, 61_453)


def test_zip_with_top_level_folder(tmp_path: Path, csv_dir: Path) -> None:
    archive = tmp_path / "nested.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for file in csv_dir.iterdir():
            out.write(file, f"export/{file.name}")
    data = HealthcareDataset().build(path=archive)
    assert (len(data.nodes), len(data.relationships)) == (11_381, 61_453)


@pytest.mark.parametrize(
    ("kind", "name", "change", "message"),
    [
        (
            "nodes",
            "Case",
            _set(3, "1,Physician,F,2014-05-03,2021-09-13,10167x656,53.0,YR,Case\n"),
            r"nodes\.Case\.csv, line 3: column 'primaryid': INTEGER expected",
        ),
        (
            "nodes",
            "Case",
            _set(3, "1,Physician,F,2014-05-03,2021-09-13\n"),
            r"nodes\.Case\.csv, line 3: expected 9 fields, found 5",
        ),
        (
            "nodes",
            "Therapy",
            _set(1, ":ID,:LABEL\n"),
            r"nodes\.Therapy\.csv, line 1: missing column\(s\) primaryid",
        ),
        (
            "nodes",
            "AgeGroup",
            _set(1, ":ID,ageGroup,extra,:LABEL\n"),
            r"nodes\.AgeGroup\.csv, line 1: undeclared column\(s\) extra",
        ),
        (
            "nodes",
            "Case",
            lambda lines: lines.__setitem__(0, lines[0].replace("age:double", "age:string")),
            r"nodes\.Case\.csv, line 1: column 'age' is typed STRING in the header but declared FLOAT",
        ),
        (
            "nodes",
            "AgeGroup",
            _set(2, "142,Adult,Drug\n"),
            r"nodes\.AgeGroup\.csv, line 2: labels Drug, expected AgeGroup",
        ),
        (
            "nodes",
            "AgeGroup",
            _set(2, "0,Adult,AgeGroup\n"),
            r"nodes\.AgeGroup\.csv, line 2: duplicate :ID 0",
        ),
        (
            "relationships",
            "REGISTERED",
            _set(2, "128,999999,REGISTERED\n"),
            r"relationships\.REGISTERED\.csv, line 2: no node has :ID 999999",
        ),
        (
            "relationships",
            "FALLS_UNDER",
            _set(2, "0,7160,FALLS_UNDER\n"),
            r"FALLS_UNDER\.csv, line 2: undeclared pattern \(:Case\)-\[:FALLS_UNDER\]->\(:Drug\)",
        ),
        (
            "relationships",
            "RESULTED_IN",
            lambda lines: lines.pop(),
            r"RESULTED_IN relationships: expected 4461, found 4460; .*"
            r"relationships: expected 61453, found 61452",
        ),
        (
            "relationships",
            "RECEIVED",
            lambda lines: lines.append("0,9660,RECEIVED\n"),
            r"RECEIVED relationships: expected 1721, found 1722",
        ),
    ],
    ids=[
        "bad-number",
        "short-row",
        "missing-column",
        "extra-column",
        "header-type-differs",
        "wrong-label",
        "duplicate-id",
        "dangling-endpoint",
        "undeclared-pattern",
        "count-low",
        "count-high",
    ],
)
def test_malformed_package(
    csv_dir: Path,
    kind: str,
    name: str,
    change: Callable[[list[str]], None],
    message: str,
) -> None:
    _edit(csv_dir, kind, name, change)
    with pytest.raises(DatasetError, match=message):
        HealthcareDataset().build(path=csv_dir)


def test_missing_file(csv_dir: Path) -> None:
    (csv_dir / f"{PREFIX}.nodes.AgeGroup.csv").unlink()
    with pytest.raises(
        DatasetError, match=r"file healthcare-analytics\.nodes\.AgeGroup\.csv is missing"
    ):
        HealthcareDataset().build(path=csv_dir)


def test_missing_file_in_zip(tmp_path: Path, csv_dir: Path) -> None:
    archive = tmp_path / "partial.zip"
    with zipfile.ZipFile(archive, "w") as out:
        for file in csv_dir.iterdir():
            if "PRESCRIBED" not in file.name:
                out.write(file, file.name)
    with pytest.raises(DatasetError, match=r"partial\.zip: file .*PRESCRIBED\.csv is missing"):
        HealthcareDataset().build(path=archive)


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        HealthcareDataset().build(path=tmp_path / "nowhere")
    with pytest.raises(
        DatasetError, match=r"no healthcare-analytics-data-importer\.zip and no extracted"
    ):
        HealthcareDataset().build(path=tmp_path)
    not_zip = tmp_path / "data.zip"
    not_zip.write_text("plain text")
    with pytest.raises(DatasetError, match="is not a zip file"):
        HealthcareDataset().build(path=not_zip)

"""Question sets of the ask benchmark: JSONL in the common field names, packaged sets, splits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cypherturn.api import stratified_sample
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.experiments import AskItem, read_ask_items, write_ask_items
from cypherturn.records import DataSplit, GoldCheck, GoldStatus


def write(path: Path, *lines: dict[str, Any] | str) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines),
        encoding="utf-8",
    )
    return path


def test_common_field_names_are_read(tmp_path: Path) -> None:
    path = write(
        tmp_path / "mine.jsonl",
        {"unique_id": "a", "database": "pole", "nl": "how many?", "cypher": "MATCH (n) RETURN n"},
        {"question": "q2", "gold_cypher": "RETURN 1", "tier": "easy",
         "manual": {"result": "0", "logical": "1"}},
        "",
    )  # fmt: skip
    found = read_ask_items(path, graph="fraud")
    assert found.name == "mine" and found.split is DataSplit.DEVELOPMENT
    first, second = found.items
    assert (first.id, first.graph, first.question, first.gold) == (
        "a", "pole", "how many?", "MATCH (n) RETURN n"
    )  # fmt: skip
    assert (second.id, second.graph, second.category) == ("line-2", "fraud", "easy")
    assert second.manual_rows is False and second.manual_logical is True


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"question": "q"}, r"x\.jsonl:1: no graph, gold"),
        ({"question": "q", "gold": "RETURN 1"}, r"no graph \(or pass --graph\)"),
        ("{not json", r"x\.jsonl:1: not JSON"),
        ([1, 2], "not a JSON object"),
    ],
)
def test_a_bad_line_is_named(tmp_path: Path, line: Any, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text((line if isinstance(line, str) else json.dumps(line)) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        read_ask_items(path)


def test_repeated_ids_and_mixed_splits_are_refused(tmp_path: Path) -> None:
    one = {"id": "a", "graph": "pole", "question": "q", "gold": "RETURN 1"}
    with pytest.raises(DatasetError, match="repeated question ids: a"):
        read_ask_items(write(tmp_path / "r.jsonl", one, one))
    with pytest.raises(DatasetError, match="mixes data splits"):
        read_ask_items(write(tmp_path / "m.jsonl", one, {**one, "id": "b", "split": "test"}))


def test_an_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="not a packaged ask set"):
        read_ask_items("ask-nope")


def test_packaged_sets_carry_their_split() -> None:
    dev, test = read_ask_items("ask-dev"), read_ask_items("ask-test")
    assert dev.split is DataSplit.DEVELOPMENT and test.split is DataSplit.TEST
    assert len(dev.items) == len(test.items) == 36
    assert not {i.question for i in dev.items} & {i.question for i in test.items}
    assert {i.graph for i in test.items} == {"pole", "healthcare", "fraud"}


def test_a_labelled_file_reads_back_as_written(tmp_path: Path) -> None:
    check = GoldCheck(
        question_id="a", graph="pole", status=GoldStatus.KEPT, gold="RETURN 1",
        original_gold="RETURN 1", rows=1, digest="d",
    )  # fmt: skip
    items = [
        AskItem(id="a", graph="pole", question="q", gold="RETURN 1", category="c",
                split=DataSplit.TEST, manual_rows=True, check=check),
        AskItem(id="b", graph="pole", question="q2", gold="RETURN 2", split=DataSplit.TEST),
    ]  # fmt: skip
    path = tmp_path / "out" / "set.jsonl"
    write_ask_items(path, items)
    again = read_ask_items(path)
    assert again.items == items and again.split is DataSplit.TEST
    assert again.digest == read_ask_items(path).digest


def test_a_stratified_sample_is_proportional_disjoint_and_fixed() -> None:
    pool = [
        AskItem(id=f"{g}{c}{i}", graph=g, question=f"q{g}{c}{i}", gold="RETURN 1", category=c)
        for g in ("pole", "healthcare")
        for c, size in (("x", 24), ("y", 8))
        for i in range(size)
    ]
    first = stratified_sample(pool, 16, seed=0)
    assert len(first) == 16 and first == stratified_sample(pool, 16, seed=0)
    per = {(g, c): sum(1 for i in first if (i.graph, i.category) == (g, c)) for g in ("pole", "healthcare") for c in "xy"}  # fmt: skip
    assert per == {
        ("pole", "x"): 6,
        ("pole", "y"): 2,
        ("healthcare", "x"): 6,
        ("healthcare", "y"): 2,
    }
    second = stratified_sample(pool, 16, seed=1, exclude={i.id for i in first})
    assert not {i.id for i in first} & {i.id for i in second}
    assert [i.id for i in first] == [i.id for i in pool if i in first]

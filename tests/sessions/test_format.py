"""The versioned JSONL session format: round trip, byte stability, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cypherturn.errors import DatasetError
from cypherturn.sessions import (
    FORMAT_VERSION,
    AmbiguityInfo,
    AmbiguityKind,
    BlockType,
    ChainMode,
    Condition,
    GoldResult,
    Persona,
    Phenomenon,
    QueryBlock,
    RewriteInfo,
    Session,
    Skeleton,
    Turn,
    canonical_rows,
    read_sessions,
    write_sessions,
)


def _session(session_id: str = "magic_academy-0-000") -> Session:
    origin = Skeleton(
        blocks=[
            QueryBlock(block_type=BlockType.ORIGIN, label="Spell"),
            QueryBlock(
                block_type=BlockType.FILTER,
                conditions=[Condition(property="school", operator="=", value="Fire")],
            ),
            QueryBlock(block_type=BlockType.PROJECT, property="name"),
        ],
        result_label="Spell",
    )
    count = Skeleton(
        blocks=[
            QueryBlock(block_type=BlockType.REFERENCE, ref_turn=1),
            QueryBlock(block_type=BlockType.AGGREGATE, agg_func="count"),
        ],
        result_label="Spell",
    )
    return Session(
        session_id=session_id,
        world="magic_academy",
        persona=Persona.NON_NATIVE,
        seed=3,
        graph_seed=0,
        graph_scale=1.0,
        turns=[
            Turn(
                turn_index=1,
                utterance="Which spells are there whose school is Fire?",
                chain_mode=ChainMode.NONE,
                gold_cypher="MATCH (n:Spell)\nWHERE n.school = 'Fire'\nRETURN DISTINCT n.name AS name",
                gold_result=GoldResult(columns=["name"], rows=[["Fireball"], ["Ember Ñame"]]),
                skeleton=origin,
            ),
            Turn(
                turn_index=2,
                utterance="How much spells is that?",
                phenomena=[Phenomenon.COUNT],
                chain_mode=ChainMode.AGGREGATE,
                depends_on=1,
                gold_cypher="MATCH (n:Spell)\nWHERE n.school = 'Fire'\nRETURN count(DISTINCT n) AS count",
                gold_result=GoldResult(columns=["count"], rows=[[2]]),
                ambiguity_info=AmbiguityInfo(
                    kind=AmbiguityKind.TIE, description="d", simulator_reply="r"
                ),
                skeleton=count,
                rewrite=RewriteInfo(
                    model="replay:x", original_utterance="How many spells is that?"
                ),
            ),
        ],
    )


def test_round_trip_is_lossless_and_byte_stable(tmp_path: Path) -> None:
    sessions = [_session(), _session("magic_academy-0-001")]
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert write_sessions(first, sessions) == 2
    back = read_sessions(first)
    assert back == sessions
    write_sessions(second, back)
    assert first.read_bytes() == second.read_bytes()
    lines = first.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    record = json.loads(lines[0])
    assert record["format_version"] == FORMAT_VERSION
    assert list(record)[:4] == ["format_version", "session_id", "world", "persona"]
    assert record["turns"][1]["phenomena"] == ["COUNT"]
    assert record["turns"][1]["chain_mode"] == "aggregate"


def test_newer_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "future.jsonl"
    record = json.loads(_session().to_line())
    record["format_version"] = FORMAT_VERSION + 1
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    expected = rf"future\.jsonl:1: format version {FORMAT_VERSION + 1} is newer than"
    with pytest.raises(DatasetError, match=expected):
        read_sessions(path)


def test_malformed_line_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(_session().to_line() + '\n{"session_id": 1}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"bad.jsonl:2"):
        read_sessions(path)
    with pytest.raises(DatasetError, match="cannot read"):
        read_sessions(tmp_path / "missing.jsonl")


def test_canonical_rows_total_order() -> None:
    rows = [["b"], [None], [True], [2.5], ["a"], [1]]
    assert canonical_rows(rows) == [[None], [True], [1], [2.5], ["a"], ["b"]]

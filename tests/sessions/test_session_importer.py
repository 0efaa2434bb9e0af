"""Import of the official release layout, and re-execution of its gold answers on our engine."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphEngine
from cypherturn.sessions import (
    AmbiguityKind,
    AuditCode,
    ChainMode,
    Persona,
    Phenomenon,
    check_reproduction,
    read_official,
    verify_session,
)
from cypherturn.worlds import load_official_graph

RELEASE = Path(__file__).parent / "official"
SESSIONS = RELEASE / "data" / "scenarios" / "tiny_sessions.json"


@pytest.fixture
def tiny(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("tiny")
    folder = RELEASE / "data" / "graphs" / "tiny"
    load_official_graph(engine, folder / "data.cypher", folder / "schema.json", engine.graph)
    return engine


def test_conversion_to_our_format() -> None:
    sessions = read_official(SESSIONS)
    assert [s.session_id for s in sessions] == [
        "a1b2c3d4-0000-4000-8000-000000000001",
        "a1b2c3d4-0000-4000-8000-000000000002",
    ]
    first, second = sessions
    assert (
        first.world == "tiny" and first.persona is Persona.JOURNALIST and first.source == "official"
    )
    assert len(first.turns) == 6 and len(second.turns) == 3
    opening = first.turns[0]
    assert (
        opening.chain_mode is ChainMode.NONE
        and opening.phenomena == []
        and opening.skeleton is None
    )
    assert opening.gold_result.columns == ["name"]
    assert opening.gold_result.rows == [["Emberflame"], ["Skywind"], ["Stoneguard"], ["Tidecrest"]]
    pivot = first.turns[3]
    assert pivot.phenomena == [Phenomenon.PIVOT] and pivot.depends_on == 3
    assert (
        pivot.ambiguity_info is not None and pivot.ambiguity_info.kind is AmbiguityKind.UNSPECIFIED
    )
    assert pivot.ambiguity_info.simulator_reply.startswith("Take the one")
    assert second.turns[1].phenomena == [Phenomenon.FIRST]
    assert second.turns[1].reference_description == "the house with the fewest points"
    ranked = second.turns[2].gold_result
    assert ranked.ordered and ranked.columns == ["name", "score"] and ranked.rows[0] == ["Ada", 80]


def test_reproduction_report(tiny: GraphEngine) -> None:
    sessions = read_official(SESSIONS)
    report = check_reproduction(SESSIONS, sessions, lambda graph: tiny)
    assert (report.sessions, report.turns) == (2, 9)
    assert report.graphs == ["tiny"]
    assert report.reproduced + report.nondeterministic + report.differs + report.errors == 9
    by_turn = {(c.session_id[-1], c.turn_index): c for c in report.checks}
    assert ("1", 1) not in by_turn and ("1", 2) not in by_turn
    assert ("1", 3) not in by_turn, "an integer sum read back as a float still reproduces"
    assert by_turn[("1", 5)].status == "differs" and by_turn[("1", 5)].reason.startswith(
        "row count differs"
    )
    assert by_turn[("1", 6)].status == "error" and by_turn[("1", 6)].reason.startswith("syntax")
    assert by_turn[("2", 3)].status == "differs" and by_turn[("2", 3)].reason == "order differs"
    # two official answers of the same tied query: both labelled, whichever one reproduces
    for key in (("1", 4), ("2", 2)):
        assert by_turn[key].status == "nondeterministic"
        assert by_turn[key].reason.startswith("ORDER BY ... LIMIT cuts through ties")
        assert "tie_cut" in by_turn[key].audits
    assert (report.reproduced, report.nondeterministic, report.differs, report.errors) == (
        4,
        2,
        2,
        1,
    )
    assert report.reasons["syntax"] == 1 and report.audits["tie_cut"] == 2
    labels = {(s.session_id[-1], t.turn_index): t.import_check for s in sessions for t in s.turns}
    assert all(label is not None for label in labels.values()), "every turn is labelled"
    assert labels[("1", 1)] is not None and labels[("1", 1)].status == "reproduced"
    assert labels[("1", 4)] is not None and labels[("1", 4)].status == "nondeterministic"


def test_bad_files_are_clear_errors(tmp_path: Path) -> None:
    raw = json.loads(SESSIONS.read_text())
    raw[0]["turns"][1]["phenomena"] = ["SORT"]
    bad = tmp_path / "bad_sessions.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(DatasetError, match=r"turn 2: unknown Phenomenon 'SORT'"):
        read_official(bad)
    not_list = tmp_path / "object.json"
    not_list.write_text("{}")
    with pytest.raises(DatasetError, match="JSON array"):
        read_official(not_list)
    raw = json.loads(SESSIONS.read_text())
    raw[1]["persona"] = "pirate"
    bad.write_text(json.dumps(raw))
    with pytest.raises(DatasetError, match="unknown Persona 'pirate'"):
        read_official(bad)


def test_audits_apply_to_imported_sessions(tiny: GraphEngine) -> None:
    _, second = read_official(SESSIONS)
    codes = {(f.turn_index, f.code) for f in verify_session(second, tiny)}
    assert (2, AuditCode.TIE_CUT) in codes, "LIMIT 1 over three houses with 10 points"
    assert (1, AuditCode.TIE_CUT) not in codes and (1, AuditCode.RESULT_MISMATCH) not in codes
    assert (3, AuditCode.RESULT_MISMATCH) in codes

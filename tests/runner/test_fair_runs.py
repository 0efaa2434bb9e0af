"""Fair comparisons (issue 38, item 5): players get a view, records name their end and simulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from protocol_world import make_session

import cypherturn.runner._session as session_module
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel
from cypherturn.protocols import ProtocolSettings, TurnOutcome
from cypherturn.records import (
    PredictionStatus,
    ProtocolName,
    PsjsStatus,
    RunData,
    TurnEnd,
    TurnScore,
)
from cypherturn.runner import run_benchmark, run_session, with_logged_play
from cypherturn.sessions import SessionView

Q = "MATCH (h:Hero) RETURN h.name AS name"
SUBMIT = json.dumps({"action": "SUBMIT_ANSWER", "input": Q})
EXECUTE = json.dumps({"action": "EXECUTE_CYPHER", "input": Q})
ASK = json.dumps({"action": "ASK_USER", "input": "Tell me more"})
GUIDED = ProtocolSettings(protocol=ProtocolName.GUIDED)
AGENTIC = ProtocolSettings(protocol=ProtocolName.AGENTIC, repeat_guard=True)


@pytest.mark.parametrize("protocol", [ProtocolName.GUIDED, ProtocolName.AGENTIC])
def test_the_players_get_a_view_and_the_runner_keeps_the_golds(
    heroes: GraphEngine, monkeypatch: pytest.MonkeyPatch, protocol: ProtocolName
) -> None:
    played: list[object] = []
    real = session_module.play_session

    def spy(view: SessionView, *args: Any) -> list[TurnOutcome]:
        played.append(view)
        return real(view, *args)

    monkeypatch.setattr(session_module, "play_session", spy)
    session = make_session(heroes)
    result = run_session(
        session,
        model=ReplayChatModel([SUBMIT] * 4),
        engine=heroes,
        settings=ProtocolSettings(protocol=protocol),
    )
    (view,) = played
    assert isinstance(view, SessionView)
    assert view.oracle_history is (protocol is ProtocolName.GUIDED)
    # the records, written by the runner, still carry the golds the scorer needs
    assert [r.gold_cypher for r in result.records] == [t.gold_cypher for t in session.turns]


def test_records_name_why_each_turn_ended_its_actions_and_its_simulator(
    heroes: GraphEngine,
) -> None:
    session = make_session(heroes)
    # B = 12. turn 1: an unreadable reply, a question to the simulator, a submission;
    # turn 2: the same query three times (stuck); turns 3-4: submissions
    replies = ["not an action", ASK, SUBMIT, EXECUTE, EXECUTE, EXECUTE, SUBMIT, SUBMIT]
    named = run_session(
        session,
        model=ReplayChatModel(replies, spec="replay:agent"),
        sim_model=ReplayChatModel(["The ones you know."], spec="replay:sim"),
        engine=heroes,
        settings=AGENTIC,
    )
    records = named.records
    assert [r.end for r in records] == [
        TurnEnd.SUBMITTED,
        TurnEnd.STUCK,
        TurnEnd.SUBMITTED,
        TurnEnd.SUBMITTED,
    ]
    assert [(r.model_actions, r.unreadable_actions) for r in records] == [
        (3, 1),
        (3, 0),
        (1, 0),
        (1, 0),
    ]
    assert {(r.sim_model, r.simulator) for r in records} == {("replay:sim", "replay:sim")}
    # by default the evaluated model plays the simulator; guided has none
    default = run_session(
        session, model=ReplayChatModel([SUBMIT] * 4, spec="replay:agent"), engine=heroes,
        settings=AGENTIC,
    )  # fmt: skip
    assert {(r.sim_model, r.simulator) for r in default.records} == {(None, "replay:agent")}
    guided = run_session(
        session,
        model=ReplayChatModel([SUBMIT] * 4),
        sim_model=ReplayChatModel([], spec="replay:sim"),
        engine=heroes,
        settings=GUIDED,
    )
    assert {(r.sim_model, r.simulator) for r in guided.records} == {(None, None)}


def _scored(out: Path, *, old: bool) -> RunData:
    """The run's records as (unscored) turn scores; ``old``: without the issue 38 fields."""
    lines = (out / "records.jsonl").read_text(encoding="utf-8").splitlines()
    scores = []
    for line in lines:
        record = json.loads(line)
        if old:
            for name in ("end", "sim_model", "model_actions", "unreadable_actions"):
                record.pop(name)
        scores.append(
            TurnScore.model_validate(
                {
                    "record": record,
                    "ex": 0,
                    "ex_relaxed": 0,
                    "psjs_status": PsjsStatus.NOT_SCORED,
                    "prediction_status": PredictionStatus.OK,
                }
            )
        )
    return RunData(path=out, manifest=None, scores=scores, episodes=[])


def test_records_written_before_the_fields_existed_are_completed_from_the_run_files(
    heroes: GraphEngine, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    replies = [EXECUTE, EXECUTE, EXECUTE, "not an action", SUBMIT, SUBMIT, SUBMIT, SUBMIT]
    run_benchmark(
        [make_session(heroes, "heroes-1"), make_session(heroes, "heroes-2")],
        model=ReplayChatModel(replies * 2, spec="replay:agent"),
        sim_model=ReplayChatModel([], spec="replay:sim"),
        engines=lambda _world: heroes,
        settings=AGENTIC,
        out_dir=out,
    )
    new = _scored(out, old=False)
    old = _scored(out, old=True)
    assert {s.record.end for s in old.scores} == {None}
    assert [s.record for s in with_logged_play(old).scores] == [s.record for s in new.scores]
    assert {s.record.end for s in new.scores} == {TurnEnd.STUCK, TurnEnd.SUBMITTED}
    # complete records are left as they are; a directory without logs or config is unchanged
    assert with_logged_play(new) is new
    elsewhere = old.model_copy(update={"path": tmp_path / "elsewhere"})
    assert with_logged_play(elsewhere).scores == old.scores

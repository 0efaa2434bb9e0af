"""Fair comparisons in the report (issue 38, item 5): the simulator caveat and the loss by cause."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cypherturn.cli import app
from cypherturn.records import (
    PredictionStatus,
    ProtocolName,
    PsjsStatus,
    RunData,
    TurnEnd,
    TurnRecord,
    TurnScore,
    read_run,
)
from cypherturn.reports import Report, Table, build_report

COMMITTED = Path(__file__).parents[2] / "docs" / "results" / "leaderboard-local"


def _score(
    model: str, session: str, turn: int, ex: int, end: TurnEnd, **record: object
) -> TurnScore:
    rec = TurnRecord(
        run_id=f"run-{model}",
        model=model,
        protocol=ProtocolName.AGENTIC,
        session_id=session,
        turn=turn,
        graph="g",
        gold_cypher="RETURN 1",
        predicted_cypher=None if end is TurnEnd.CLIFF else "RETURN 1",
        cliff=end is TurnEnd.CLIFF,
        end=end,
        model_actions=2,
        unreadable_actions=turn - 1,
        **record,  # type: ignore[arg-type]
    )
    return TurnScore(
        record=rec,
        ex=ex,
        ex_relaxed=ex,
        psjs_status=PsjsStatus.NOT_SCORED,
        prediction_status=PredictionStatus.OK,
    )


def _runs(tmp_path: Path, **record: object) -> list[RunData]:
    """Models ``a`` and ``b`` played three sessions of two turns each under one setting."""
    plays = {
        "a": [(1, TurnEnd.SUBMITTED), (0, TurnEnd.STUCK)],
        "b": [(0, TurnEnd.SUBMITTED), (0, TurnEnd.CLIFF)],
    }
    return [
        RunData(
            path=tmp_path / model,
            manifest=None,
            scores=[
                _score(model, f"s{s}", t, ex, end, **record)
                for s in range(3)
                for t, (ex, end) in enumerate(play, start=1)
            ],
            episodes=[],
        )
        for model, play in plays.items()
    ]


def _table(report: Report, name: str) -> Table:
    (table,) = [t for t in report.tables if t.name == name]
    return table


def test_agentic_systems_with_different_simulators_are_flagged(tmp_path: Path) -> None:
    # by default each evaluated model plays its own simulator
    (row,) = _table(build_report(_runs(tmp_path), n_resamples=50), "comparisons").rows
    assert row[:2] == ["a agentic x3", "b agentic x3"]
    assert row[-1] == "simulator differs: a vs b"
    # one fixed simulator for both: no caveat
    fixed = build_report(_runs(tmp_path, sim_model="openai:judge"), n_resamples=50)
    (row,) = _table(fixed, "comparisons").rows
    assert row[-1] == ""
    assert "simulator differs" in _table(fixed, "comparisons").notes


def test_the_loss_table_counts_wrong_turns_by_cause(tmp_path: Path) -> None:
    table = _table(build_report(_runs(tmp_path), n_resamples=50), "loss_by_cause")
    assert table.columns == [
        "System",
        "Turns",
        "Wrong (EX = 0)",
        "Submitted wrong",
        "Stuck",
        "Cliff",
        "Action cap",
        "Budget exhausted",
        "Context overflow",
        "Unreadable actions",
    ]
    assert table.rows == [
        ["a agentic x3", 6, 3, 0, 3, 0, 0, 0, 0, "3 / 12 (25.0%)"],
        ["b agentic x3", 6, 6, 3, 0, 3, 0, 0, 0, "3 / 12 (25.0%)"],
    ]
    for cause in ("Submitted wrong:", "Stuck:", "Cliff:", "Action cap:", "Budget exhausted:"):
        assert cause in table.notes
    # records that name no end reason, with no session log to read it from
    old = [
        run.model_copy(
            update={
                "scores": [
                    s.model_copy(update={"record": s.record.model_copy(update={"end": None})})
                    for s in run.scores
                ]
            }
        )
        for run in _runs(tmp_path)
    ]
    table = _table(build_report(old, n_resamples=50), "loss_by_cause")
    assert table.columns[-2] == "Unrecorded"
    assert [row[2:] for row in table.rows] == [
        [3, 0, 0, 0, 0, 0, 0, 3, "3 / 12 (25.0%)"],
        [6, 0, 0, 0, 0, 0, 0, 6, "3 / 12 (25.0%)"],
    ]


@pytest.mark.parametrize(
    ("run", "row"),
    [
        (
            "agentic3-1.5b-question-reference-ctx8k2",
            [228, 188, 94, 59, 25, 0, 10, 0, "3 / 656 (0.5%)"],
        ),
        ("guided-1.5b-question-reference2", [228, 144, 113, 20, 0, 11, 0, 0, "2 / 496 (0.4%)"]),
    ],
)
def test_committed_runs_report_their_loss_from_their_session_logs(
    run: str, row: list[int | str]
) -> None:
    # recorded before records named their end: the reasons come from sessions/*.jsonl;
    # the unreadable actions are benchmarks/bench_leaderboard.py's figures
    report = build_report([read_run(COMMITTED / run)], n_resamples=50)
    (loss,) = _table(report, "loss_by_cause").rows
    assert loss[1:] == row


def test_an_old_run_directory_still_reports(tmp_path: Path) -> None:
    run = COMMITTED / "agentic3-1.5b-question-reference-ctx8k2"
    result = CliRunner().invoke(
        app, ["report", str(run), "--out", str(tmp_path), "--resamples", "200"]
    )
    assert result.exit_code == 0, result.output
    assert "## Turns lost, by why the turn ended" in (tmp_path / "report.md").read_text()

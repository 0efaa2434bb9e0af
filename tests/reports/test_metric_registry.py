"""A metric registered in a test is scored, aggregated and shown in the report, no other file edited."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.errors import ConfigError
from cypherturn.graph import GraphEngine
from cypherturn.metrics import (
    METRICS,
    ScoredTurn,
    TurnMetric,
    get_metric,
    register_metric,
    score_run,
    session_totals,
    summarize,
)
from cypherturn.records import ProtocolName, TurnRecord, read_run
from cypherturn.reports import build_report

FIXTURE_GRAPH = Path(__file__).parents[1] / "metrics" / "fixture_graph.cypher"
GOLD = "MATCH (p:Person {name: 'Alice'})-[:KNOWS]->(f:Person) RETURN f.name AS name"
WRONG = "MATCH (p:Person)-[:KNOWS]->(f:Person) RETURN f.name AS name"


def _row_count_match(turn: ScoredTurn) -> float | None:
    """1 when the prediction returned as many rows as the gold; None without a prediction."""
    if turn.predicted is None:
        return None
    return float(turn.predicted.row_count == turn.gold.row_count)


ROWS = TurnMetric(
    "row_count_match",
    "RowsEq",
    "the predicted result has as many rows as the gold",
    score=_row_count_match,
)


def _records(graph: str) -> list[TurnRecord]:
    answers = [GOLD, WRONG, None, "MATCH (n RETURN n"]
    return [
        TurnRecord(
            run_id="run",
            model="alpha",
            protocol=ProtocolName.GUIDED,
            session_id=f"s{s}",
            turn=1,
            graph=graph,
            gold_cypher=GOLD,
            predicted_cypher=answer,
        )
        for s, answer in enumerate(answers)
    ]


def test_a_registered_metric_reaches_statistics_and_the_report(
    make_engine: Callable[..., GraphEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    engine.write(
        "\n".join(ln for ln in FIXTURE_GRAPH.read_text().splitlines() if not ln.startswith("//"))
    )
    gold_rows = engine.execute(GOLD).row_count
    wrong_rows = engine.execute(WRONG).row_count
    assert gold_rows != wrong_rows  # the toy metric tells the two answers apart
    with METRICS.registered(ROWS.name, ROWS):
        score_run(_records(engine.graph), {engine.graph: engine}, tmp_path / "run")
        run = read_run(tmp_path / "run")
        values = {s.record.session_id: s.metrics.get("row_count_match") for s in run.scores}
        assert values == {"s0": 1.0, "s1": 0.0, "s2": None, "s3": None}

        totals = session_totals(run.scores, "row_count_match")
        assert totals.session_ids == ["s0", "s1"] and totals.value == 0.5
        (summary,) = summarize(run.scores)
        assert summary.metrics["row_count_match"] == 0.5
        assert summary.metrics["ex"] == summary.ex == 0.25

        main = build_report([run], n_resamples=200).main_table
        assert main is not None
        column = main.columns.index("RowsEq")
        assert main.columns[column - 1] == "PSJS-out" and main.columns[column + 1] == "SEM"
        assert main.rows[0][column] == 0.5
        assert "RowsEq: the predicted result has as many rows as the gold." in main.notes

    # without the metric, scores keep the earlier layout and report columns
    score_run(_records(engine.graph), {engine.graph: engine}, tmp_path / "plain")
    line = json.loads((tmp_path / "plain" / "scores.jsonl").read_text().splitlines()[0])
    assert "metrics" not in line
    main = build_report([read_run(tmp_path / "plain")], n_resamples=200).main_table
    assert main is not None and "RowsEq" not in main.columns
    assert main.columns[7:13] == ["EX [95% CI]", "rEX", "rEX⊆", "PSJS", "PSJS-out", "SEM"]
    with pytest.raises(ConfigError, match=r"unknown metric 'row_count_match'; known: ex, "):
        get_metric("row_count_match")


def test_metric_registration_is_checked() -> None:
    with pytest.raises(ConfigError, match="already registered"):
        register_metric(TurnMetric("ex", "EX", field="ex"))
    with pytest.raises(ConfigError, match="needs a score function"):
        register_metric(TurnMetric("empty", "E"))

"""EX, relaxed EX and PSJS on hand-computed (gold, predicted) cases, run on the real engine.

Cases live in ex_cases.json beside this file; each says why its expectation holds.
The fixture graph is fixture_graph.cypher.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cypherturn.graph import GraphEngine
from cypherturn.metrics import Scorer
from cypherturn.records import PredictionStatus, ProtocolName, ScoringSettings, TurnRecord

CASES: list[dict[str, Any]] = json.loads(Path(__file__).with_name("ex_cases.json").read_text())[
    "cases"
]


def _record(case: dict[str, Any], graph: str) -> TurnRecord:
    return TurnRecord(
        run_id="cases",
        model="hand",
        protocol=ProtocolName.GUIDED,
        session_id=case["id"],
        turn=1,
        graph=graph,
        gold_cypher=case["gold"],
        predicted_cypher=case["pred"],
    )


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case: dict[str, Any], fixture_engine: GraphEngine) -> None:
    scorer = Scorer({fixture_engine.graph: fixture_engine}, ScoringSettings(workers=1))
    score = scorer.score_turn(_record(case, fixture_engine.graph))
    assert score.valid, score.gold_error
    assert (score.ex, score.ex_relaxed) == (case["ex"], case["ex_relaxed"]), case["why"]
    # The subset variant is at least relaxed EX; cases that tell them apart say so.
    assert score.ex_subset == case.get("ex_subset", case["ex_relaxed"]), case["why"]
    assert score.psjs_status.value == case["psjs_status"], score.psjs_note
    assert score.psjs == pytest.approx(case["psjs"]), case.get("why_psjs", case["why"])
    assert score.psjs_output_status.value == case["psjs_output_status"], score.psjs_output_note
    if case["psjs_output"] is None:
        assert score.psjs_output is None
    else:
        assert score.psjs_output == pytest.approx(case["psjs_output"]), case["why"]
    if "error_class" in case:
        assert score.prediction_status is PredictionStatus.FAILED
        assert score.prediction_error_class is not None
        assert score.prediction_error_class.value == case["error_class"]
    if case["pred"] is not None:
        assert score.executions == 1, "EX and PSJS share one execution of the predicted query"


def test_every_case_gold_rewrite_keeps_the_result(fixture_engine: GraphEngine) -> None:
    """Scoring all gold queries with the gold check on finds no result changed by the rewrite."""
    scorer = Scorer(
        {fixture_engine.graph: fixture_engine}, ScoringSettings(workers=1, check_gold_rewrite=True)
    )
    for case in CASES:
        entry = scorer.gold(fixture_engine.graph, case["gold"])
        assert entry.provenance_note != "rewrite changed the gold result", case["id"]

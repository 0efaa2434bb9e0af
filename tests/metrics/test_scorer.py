"""The scorer's bookkeeping: parallel sessions, the gold cache, run directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cypherturn.graph import GraphEngine
from cypherturn.metrics import GoldCache, Scorer, score_run
from cypherturn.records import ProtocolName, ScoringSettings, TurnRecord, read_run

CASES: list[dict[str, Any]] = json.loads(Path(__file__).with_name("ex_cases.json").read_text())[
    "cases"
]


def _records(graph: str, sessions: int = 3) -> list[TurnRecord]:
    return [
        TurnRecord(
            run_id="r",
            model="m",
            protocol=ProtocolName.AGENTIC,
            session_id=f"s{s}",
            turn=t,
            graph=graph,
            depends_on=t - 1 if t > 1 else None,
            gold_cypher=case["gold"],
            predicted_cypher=case["pred"],
            cliff=case["pred"] is None,
        )
        for s in range(sessions)
        for t, case in enumerate(CASES, start=1)
    ]


def test_parallel_scoring_equals_sequential_and_gold_runs_once(fixture_engine: GraphEngine) -> None:
    records = _records(fixture_engine.graph)
    engines = {fixture_engine.graph: fixture_engine}
    sequential = Scorer(engines, ScoringSettings(workers=1)).score(records)
    scorer = Scorer(engines, ScoringSettings(workers=4))
    parallel = scorer.score(records)
    key = [(s.record.session_id, s.record.turn, s.ex, s.ex_relaxed, s.psjs) for s in sequential]
    assert [
        (s.record.session_id, s.record.turn, s.ex, s.ex_relaxed, s.psjs) for s in parallel
    ] == key
    stats = scorer.stats
    distinct_gold = len({c["gold"] for c in CASES})
    assert stats.gold_queries == distinct_gold
    assert stats.gold_cache_hits == len(records) - distinct_gold
    assert (
        stats.executions == stats.predicted_queries == sum(c["pred"] is not None for c in CASES) * 3
    )


def test_gold_cache_round_trip(fixture_engine: GraphEngine, tmp_path: Path) -> None:
    engines = {fixture_engine.graph: fixture_engine}
    first = Scorer(engines, ScoringSettings(workers=1))
    expected = first.score(_records(fixture_engine.graph, sessions=1))
    path = tmp_path / "gold.json"
    first.gold_cache.save(path)
    second = Scorer(engines, ScoringSettings(workers=1), GoldCache.load(path))
    again = second.score(_records(fixture_engine.graph, sessions=1))
    assert [(s.ex, s.psjs) for s in again] == [(s.ex, s.psjs) for s in expected]
    assert second.stats.gold_executions == 0


def test_score_run_writes_a_readable_run_directory(
    fixture_engine: GraphEngine, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    records_file = tmp_path / "records.jsonl"
    records_file.write_text(
        "".join(r.model_dump_json() + "\n" for r in _records(fixture_engine.graph, 2))
    )
    manifest = score_run(records_file, {fixture_engine.graph: fixture_engine}, out, description="t")
    run = read_run(out)
    assert run.manifest == manifest
    assert len(run.scores) == manifest.turns == 2 * len(CASES)
    assert manifest.sessions == 2 and manifest.graphs == [fixture_engine.graph]

"""CypherBench's PSJS: the leading-MATCH-block rule, and reading scores of the older definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphEngine
from cypherturn.metrics import GoldCache, Scorer, summarize
from cypherturn.metrics._psjs import cypherbench_jaccard, cypherbench_provenance_queries
from cypherturn.records import ProtocolName, PsjsStatus, ScoringSettings, TurnRecord, read_run


def test_the_block_ends_at_the_first_aliased_with_and_unions_count_per_branch() -> None:
    (query,) = cypherbench_provenance_queries(
        "MATCH (a:P)-[:R]->() WHERE a.x > 1 OPTIONAL MATCH (a)--(b) WITH a, b WHERE b.y = 2 "
        "MATCH (b)-->(c) WITH a, count(c) AS k MATCH (k2) RETURN a.n, k"
    )
    assert query.startswith(
        "MATCH (a:P)-[:R]->(__psjs_cb_n0) WHERE a.x > 1 OPTIONAL MATCH (a)--(b) "
        "WITH * WHERE b.y = 2 MATCH (b)-->(c) WITH "
    )
    assert "k2" not in query and "count(c)" not in query
    union = cypherbench_provenance_queries(
        "MATCH (p:P) RETURN p.n AS n UNION UNWIND [1] AS x MATCH (q) RETURN q.n AS n"
    )
    assert len(union) == 1  # the second branch does not start with MATCH: it binds nothing
    assert cypherbench_provenance_queries("RETURN 1") == []
    assert cypherbench_jaccard(frozenset(), frozenset()) == 0.0


def _record(graph: str, gold: str, pred: str | None) -> TurnRecord:
    return TurnRecord(
        run_id="r",
        model="m",
        protocol=ProtocolName.GUIDED,
        session_id="s",
        turn=1,
        graph=graph,
        gold_cypher=gold,
        predicted_cypher=pred,
    )


def test_identical_text_scores_one_even_when_nothing_is_bound(fixture_engine: GraphEngine) -> None:
    scorer = Scorer({fixture_engine.graph: fixture_engine}, ScoringSettings(workers=1))
    same = scorer.score_turn(_record(fixture_engine.graph, "RETURN 1 AS x", "RETURN 1 AS x"))
    other = scorer.score_turn(_record(fixture_engine.graph, "RETURN 1 AS x", "RETURN 1 AS y"))
    assert (same.psjs, other.psjs) == (1.0, 0.0)
    assert (same.psjs_output, other.psjs_output) == (1.0, 1.0)


def test_scores_of_metric_definitions_1_read_their_psjs_as_the_output_psjs(
    tmp_path: Path,
) -> None:
    record = _record("g", "MATCH (n) RETURN n", "MATCH (n) RETURN n").model_dump(mode="json")
    old = {
        "schema_version": 1,
        "record": record,
        "ex": 1,
        "ex_relaxed": 1,
        "psjs": 0.5,
        "psjs_status": "ok",
        "prediction_status": "ok",
    }
    (tmp_path / "scores.jsonl").write_text(json.dumps(old) + "\n")
    (score,) = read_run(tmp_path).scores
    assert score.metrics_version == 1
    assert (score.psjs_output, score.psjs_output_status) == (0.5, PsjsStatus.OK)
    assert (score.psjs, score.psjs_status) == (None, PsjsStatus.NOT_SCORED)
    summary = summarize([score])[0]
    assert (summary.psjs, summary.psjs_excluded) == (None, 1)
    assert (summary.psjs_output, summary.psjs_output_excluded) == (0.5, 0)


def test_a_gold_cache_without_cypherbench_provenance_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps({"schema_version": 1, "entries": []}))
    with pytest.raises(DatasetError, match="delete it"):
        GoldCache.load(path)

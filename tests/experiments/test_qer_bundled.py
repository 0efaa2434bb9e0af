"""One real QER run with the bundled SmolLM2-135M GGUF model: two questions, 3 runs, n = 3."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.experiments import (
    QerRunConfig,
    load_question_set,
    question_set_digest,
    run_qer_experiment,
)
from cypherturn.graph import GraphEngine
from cypherturn.metrics import qer_curves
from cypherturn.models import load_model
from cypherturn.records import read_run
from cypherturn.reports import build_report

MAX_TOKENS = 32


@pytest.mark.slow
def test_bundled_model_run(dataset_engine: Callable[[str], GraphEngine], tmp_path: Path) -> None:
    qs = load_question_set("healthcare")
    config = QerRunConfig(
        datasets=["healthcare"],
        tiers=["easy"],
        strategies=["is", "ras"],
        model="smollm2-135m",
        budget=3,
        runs=2,
        temperature=0.9,
        max_tokens=MAX_TOKENS,
        questions_per_tier=2,
        question_sets={"healthcare": question_set_digest(qs)},
    )
    out = tmp_path / "run"
    summary = run_qer_experiment(
        config,
        load_model("smollm2-135m"),
        {"healthcare": dataset_engine("healthcare")},
        {"healthcare": qs},
        out,
    )
    assert (summary.planned, summary.ran) == (8, 8)
    run = read_run(out)
    assert len(run.episodes) == 8
    for episode in run.episodes:
        assert episode.model == "smollm2-135m" and 1 <= len(episode.attempts) <= 3
        assert all(
            a.prompt_tokens > 0 and a.completion_tokens <= MAX_TOKENS for a in episode.attempts
        )
        assert all(not a.ok for a in episode.attempts[:-1])  # both strategies stop at a success
    # Attempt 1 of IS and RAS had the same context: same prompt size for each (question, run).
    first: dict[tuple[str, int], set[int]] = {}
    for e in run.episodes:
        first.setdefault((e.question_id, e.run_index), set()).add(e.attempts[0].prompt_tokens)
    assert all(len(sizes) == 1 for sizes in first.values())
    for curve in qer_curves(run.episodes):
        assert curve.runs == 2 and curve.questions == 2
        for per_run in curve.per_run:
            assert all(later <= earlier for earlier, later in itertools.pairwise(per_run))
    tables = {t.name: t for t in build_report([run]).tables}
    assert tables["qer"].columns[3:5] == ["IS@3", "RAS@3"]
    assert tables["qer"].rows[0][:2] == ["healthcare", "smollm2-135m"]

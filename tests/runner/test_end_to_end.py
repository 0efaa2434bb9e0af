"""End to end with the bundled local model: both protocols played, logged, scored."""

from __future__ import annotations

from pathlib import Path

import pytest
from protocol_world import WORLD, make_session

from cypherturn.graph import GraphEngine
from cypherturn.metrics import score_run
from cypherturn.models import load_model
from cypherturn.protocols import ProtocolSettings
from cypherturn.records import SCORES_FILE, ProtocolName
from cypherturn.runner import StepLogged, log_path, read_log, run_benchmark


@pytest.mark.slow
@pytest.mark.parametrize(
    "settings",
    [
        ProtocolSettings(protocol=ProtocolName.GUIDED, max_tokens=24, seed=1),
        ProtocolSettings(protocol=ProtocolName.AGENTIC, budget_multiplier=3, max_tokens=24, seed=1),
    ],
    ids=["guided", "agentic3"],
)
def test_bundled_model_runs_and_scores(
    heroes: GraphEngine, tmp_path: Path, settings: ProtocolSettings
) -> None:
    session = make_session(heroes)
    session = session.model_copy(update={"turns": session.turns[:1]})
    out = tmp_path / "run"
    summary = run_benchmark(
        [session],
        model=load_model("smollm2-135m"),
        engines=lambda world: heroes if world == WORLD else pytest.fail(world),
        settings=settings,
        out_dir=out,
    )
    assert (summary.completed, summary.turns, summary.infra_failures) == (1, 1, [])
    steps = [
        e.step for e in read_log(log_path(out, session.session_id)) if isinstance(e, StepLogged)
    ]
    assert 1 <= len(steps) <= 3
    assert all(s.prompt_tokens > 0 and s.model_latency_s > 0 for s in steps)
    manifest = score_run(summary.records_path, {WORLD: heroes}, out)
    assert manifest.turns == 1
    assert (out / SCORES_FILE).exists()

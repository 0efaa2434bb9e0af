"""QER, QER@k over attempts, mean and sigma over runs, and the RAS Table 3/4 layouts."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cypherturn.errors import ConfigError
from cypherturn.metrics import qer_curves, qer_dataset_table, qer_scaling, qer_tier_table
from cypherturn.metrics._qer import attempt_failure_rate
from cypherturn.records import QerEpisode, QueryAttempt, episode_from_strategy_result
from cypherturn.strategies import Attempt, StrategyConfig, StrategyResult


def episode(
    strategy: str, run: int, qid: str, outcomes: str, tier: str = "easy", budget: int = 3
) -> QerEpisode:
    """``outcomes``: one letter per attempt, ``e`` error, ``o`` ok."""
    return QerEpisode(
        strategy=strategy,
        dataset="d",
        tier=tier,
        model="m",
        run_index=run,
        question_id=qid,
        budget=budget,
        attempts=[
            QueryAttempt(
                index=i + 1,
                outcome="ok" if c == "o" else "error",
                error_class=None if c == "o" else "syntax",
            )
            for i, c in enumerate(outcomes)
        ],
    )


IS_LOG = [
    episode("is", 0, "q1", "eo"),
    episode("is", 0, "q2", "eee"),
    episode("is", 1, "q1", "o"),
    episode("is", 1, "q2", "eo"),
]
RAS_LOG = [
    episode("ras", 0, "q1", "o"),
    episode("ras", 0, "q2", "eo"),
    episode("ras", 1, "q1", "eo"),
    episode("ras", 1, "q2", "o"),
]


def test_qer_at_k_per_run_mean_and_sigma() -> None:
    (curve,) = qer_curves(IS_LOG)
    assert curve.per_run == [[1.0, 0.5, 0.5], [0.5, 0.0, 0.0]]
    assert curve.mean == pytest.approx([0.75, 0.25, 0.25])
    assert curve.std == pytest.approx([0.125**0.5] * 3)
    assert curve.at(1) == 0.75 and curve.std_at(3) == pytest.approx(0.35355, abs=1e-5)
    with pytest.raises(ConfigError):
        curve.at(4)


def test_attempt_failure_rate_pools_every_generated_query() -> None:
    # IS_LOG: 8 attempts (eo, eee, o, eo), 5 errors.
    assert attempt_failure_rate(IS_LOG) == pytest.approx(5 / 8)
    assert attempt_failure_rate([]) is None


def test_table_layouts() -> None:
    hard = [episode("is", 0, "h", "eee", tier="hard"), episode("ras", 0, "h", "eeo", tier="hard")]
    curves = qer_curves([*IS_LOG, *RAS_LOG, *hard])
    tiers = qer_tier_table(curves, n=3)
    assert [(r.tier, r.q1, r.is_n, r.ras_n) for r in tiers] == [
        ("easy", pytest.approx((0.75 + 0.5) / 2), pytest.approx(0.25), pytest.approx(0.0)),
        ("hard", 1.0, 1.0, 0.0),
    ]
    assert tiers[1].sigma_is is None
    (row,) = qer_dataset_table(tiers)
    assert row.q1 == pytest.approx((0.625 + 1.0) / 2)
    assert row.is_n == pytest.approx(0.625) and row.ras_n == pytest.approx(0.0)
    assert row.delta_is == pytest.approx(row.q1 - 0.625) and row.delta_ras == pytest.approx(row.q1)


def test_scaling_curve_for_the_figure() -> None:
    curves = qer_curves([*IS_LOG, *RAS_LOG])
    mean, std = qer_scaling(curves, "d", "ras") or ([], [])
    assert mean == pytest.approx([0.5, 0.0, 0.0])
    assert std == pytest.approx([0.0, 0.0, 0.0])
    assert qer_scaling(curves, "other", "is") is None


def test_mixed_budgets_and_bad_attempts_are_refused() -> None:
    with pytest.raises(ConfigError):
        qer_curves([episode("is", 0, "a", "o", budget=3), episode("is", 1, "a", "o", budget=5)])
    with pytest.raises(ValidationError):
        episode("is", 0, "a", "eeee", budget=3)


def test_episode_from_a_real_strategy_result() -> None:
    attempts = [
        Attempt(
            index=1,
            context_messages=2,
            raw_text="x",
            query="MATCH (",
            outcome="error",
            error_class="syntax",
        ),
        Attempt(
            index=2,
            context_messages=4,
            raw_text="y",
            query="RETURN 1",
            outcome="ok",
            completion_tokens=7,
        ),
    ]
    result = StrategyResult(
        strategy="ras",
        budget=5,
        prompt_version="1",
        model="gguf:x",
        question="q",
        config=StrategyConfig(),
        attempts=attempts,
        final_query="RETURN 1",
        final_result=None,
        success=True,
    )
    ep = episode_from_strategy_result(
        result, dataset="pole", question_id="q7", tier="hard", run_index=2
    )
    assert (ep.strategy, ep.budget, ep.run_index, ep.model) == ("ras", 5, 2, "gguf:x")
    assert ep.attempts[1].completion_tokens == 7
    assert ep.failed_by(1) and not ep.failed_by(2)

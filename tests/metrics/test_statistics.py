"""Bootstrap CIs (session-level), paired comparisons and Spearman rho on synthetic data with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cypherturn.errors import ConfigError
from cypherturn.metrics import SessionTotals, bootstrap_ci, paired_bootstrap, spearman


def totals(values: list[list[int]]) -> SessionTotals:
    """One session per inner list of turn-level 0/1 values."""
    return SessionTotals(
        session_ids=[f"s{i:03d}" for i in range(len(values))],
        sums=[float(sum(v)) for v in values],
        counts=[len(v) for v in values],
    )


def test_ci_matches_the_binomial_standard_error() -> None:
    values = [[1]] * 200 + [[0]] * 200
    ci = bootstrap_ci(totals(values), n_resamples=10_000, seed=1)
    assert ci.estimate == 0.5
    half = (ci.high - ci.low) / 2
    assert half == pytest.approx(1.96 * math.sqrt(0.25 / 400), rel=0.1)


def test_resampling_unit_is_the_session() -> None:
    # Turns of a session all agree: 20 independent units, not 200.
    values = [[1] * 10] * 10 + [[0] * 10] * 10
    ci = bootstrap_ci(totals(values), seed=0)
    half = (ci.high - ci.low) / 2
    assert half == pytest.approx(1.96 * math.sqrt(0.25 / 20), rel=0.15)
    assert half > 2 * 1.96 * math.sqrt(0.25 / 200)


def test_ci_is_seeded_and_degenerate_for_constant_data() -> None:
    values = [[1, 0], [1], [0, 0, 1]]
    assert bootstrap_ci(totals(values), seed=3) == bootstrap_ci(totals(values), seed=3)
    flat = bootstrap_ci(totals([[1, 1]] * 5))
    assert (flat.low, flat.estimate, flat.high) == (1.0, 1.0, 1.0)
    with pytest.raises(ConfigError):
        bootstrap_ci(totals([]))


def test_paired_bootstrap_detects_a_consistent_gap() -> None:
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2, size=(60, 5)).tolist()
    better = [[1, *row[1:]] for row in base]
    a, b = totals(better), totals(base)
    cmp = paired_bootstrap(a, b, seed=0)
    expected = (sum(map(sum, better)) - sum(map(sum, base))) / 300
    assert cmp.difference == pytest.approx(expected)
    assert cmp.significant and cmp.low > 0 and cmp.p_value < 0.05
    same = paired_bootstrap(b, b)
    assert (same.difference, same.low, same.high, same.significant, same.p_value) == (
        0.0,
        0.0,
        0.0,
        False,
        1.0,
    )


def test_paired_bootstrap_uses_shared_sessions_only() -> None:
    a = SessionTotals(session_ids=["x", "y", "z"], sums=[1, 1, 1], counts=[1, 1, 1])
    b = SessionTotals(session_ids=["y", "z", "w"], sums=[0, 1, 0], counts=[1, 1, 1])
    assert paired_bootstrap(a, b).n_sessions == 2
    with pytest.raises(ConfigError):
        paired_bootstrap(a, SessionTotals(session_ids=["x"], sums=[0], counts=[1]))


def test_spearman_with_leave_one_out() -> None:
    x = {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}
    y = {"a": 1, "b": 2, "c": 3, "d": 5, "e": 4, "extra": 9}
    rc = spearman(x, y)
    assert rc.n == 5
    assert rc.rho == pytest.approx(1 - 6 * 2 / (5 * 24))
    assert rc.loo["d"] == pytest.approx(1.0) and rc.loo["e"] == pytest.approx(1.0)
    assert rc.loo["a"] == pytest.approx(1 - 6 * 2 / (4 * 15))
    assert (rc.loo_min, rc.loo_max) == (pytest.approx(0.8), pytest.approx(1.0))
    assert spearman(x, {k: -v for k, v in x.items()}).rho == pytest.approx(-1.0)
    with pytest.raises(ConfigError):
        spearman({"a": 1, "b": 2}, {"a": 1, "b": 2})

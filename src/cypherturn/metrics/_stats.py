"""Significance: session-level bootstrap CIs, paired model comparisons, Spearman rho with leave-one-out.

Single questions (the ask benchmark) are independent units: a proportion gets
a Wilson score interval (:func:`wilson_interval`) and a difference between two
systems on the same questions a paired percentile bootstrap over questions
(:func:`paired_difference`).

CypherTurn reports 10,000-resample bootstrap significance (§4.2, §5.2) and
Spearman rank correlations with leave-one-out stability (§5.2, Table 20). The
resampling unit is the session, since turns of one session are not independent:
a turn-level metric is resampled as a ratio of per-session sums to per-session
turn counts. Computation is scipy's (:func:`scipy.stats.bootstrap`,
:func:`scipy.stats.spearmanr`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import ModuleType

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from cypherturn.errors import ConfigError
from cypherturn.metrics._registry import get_metric
from cypherturn.records import TurnScore

__all__ = [
    "DEFAULT_RESAMPLES",
    "ConfidenceInterval",
    "PairedComparison",
    "PairedDifference",
    "ProportionInterval",
    "RankCorrelation",
    "SessionTotals",
    "bootstrap_ci",
    "paired_bootstrap",
    "paired_difference",
    "session_totals",
    "spearman",
    "wilson_interval",
]

DEFAULT_RESAMPLES = 10_000
"""Bootstrap resamples (CypherTurn §4.2)."""

MetricFn = Callable[[TurnScore], float | None]


class SessionTotals(BaseModel):
    """A turn-level metric summed per session: ``value = sums.sum() / counts.sum()``.

    Attributes:
        session_ids: one id per session, sorted.
        sums: per-session sum of the metric over its turns.
        counts: per-session number of turns with a value.
    """

    session_ids: list[str]
    sums: list[float]
    counts: list[int]

    @property
    def value(self) -> float:
        """The pooled turn-level mean."""
        total = sum(self.counts)
        return sum(self.sums) / total if total else float("nan")


def session_totals(scores: Iterable[TurnScore], metric: str | MetricFn = "ex") -> SessionTotals:
    """Sum a turn-level metric per session (valid turns with a value only).

    Args:
        scores: turn scores of one system.
        metric: the name of a registered metric (:data:`~cypherturn.metrics.METRICS`:
            ``"ex"``, ``"ex_relaxed"``, ``"psjs"``, ...) or a function of a turn
            score (``None`` leaves the turn out).

    Returns:
        The :class:`SessionTotals`; sessions whose turns all lack a value are dropped.

    Raises:
        ConfigError: unknown metric name.
    """
    fn = get_metric(metric).value if isinstance(metric, str) else metric
    sums: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for s in scores:
        if not s.valid:
            continue
        value = fn(s)
        if value is None:
            continue
        sid = s.record.session_id
        sums[sid] += value
        counts[sid] += 1
    ids = sorted(counts)
    return SessionTotals(
        session_ids=ids, sums=[sums[i] for i in ids], counts=[counts[i] for i in ids]
    )


class ConfidenceInterval(BaseModel):
    """A point estimate with a bootstrap confidence interval."""

    estimate: float
    low: float
    high: float
    confidence: float
    n_sessions: int


def _ratio(
    sums: NDArray[np.float64], counts: NDArray[np.float64], axis: int = -1
) -> NDArray[np.float64]:
    return np.asarray(np.sum(sums, axis=axis) / np.sum(counts, axis=axis))


def _scipy_stats() -> ModuleType:
    """``scipy.stats``, imported at the first interval: it costs about 0.6 s, which every
    command paid at start-up while few compute an interval."""
    from scipy import stats

    return stats


def _session_bootstrap(
    data: tuple[NDArray[np.float64], ...],
    statistic: Callable[..., NDArray[np.float64]],
    n_resamples: int,
    confidence: float,
    seed: int,
) -> tuple[float, float, NDArray[np.float64]]:
    """scipy's paired percentile bootstrap: row ``i`` of every array is session ``i``.

    The arrays are resampled together, so a session's sums and counts (and, when
    two systems are compared, both systems' values) always stay together.

    Returns:
        ``(low, high, distribution)``: the percentile CI of ``statistic`` and its
        ``n_resamples`` bootstrap values.
    """
    res = _scipy_stats().bootstrap(
        data,
        statistic,
        paired=True,
        vectorized=True,
        n_resamples=n_resamples,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return (
        float(res.confidence_interval.low),
        float(res.confidence_interval.high),
        np.asarray(res.bootstrap_distribution),
    )


def bootstrap_ci(
    totals: SessionTotals,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> ConfidenceInterval:
    """Percentile bootstrap CI of a turn-level mean, resampling whole sessions.

    Args:
        totals: the metric summed per session.
        n_resamples: bootstrap resamples (10,000 as in CypherTurn).
        confidence: confidence level.
        seed: random seed; the same seed gives the same interval.

    Returns:
        The :class:`ConfidenceInterval` (degenerate, low = high, with one session).

    Raises:
        ConfigError: no session has a value.
    """
    if not totals.session_ids:
        raise ConfigError("no session to bootstrap")
    sums = np.asarray(totals.sums, dtype=float)
    counts = np.asarray(totals.counts, dtype=float)
    estimate = float(_ratio(sums, counts))
    if len(sums) < 2:
        return ConfidenceInterval(
            estimate=estimate, low=estimate, high=estimate, confidence=confidence, n_sessions=1
        )
    low, high, _ = _session_bootstrap((sums, counts), _ratio, n_resamples, confidence, seed)
    return ConfidenceInterval(
        estimate=estimate,
        low=low,
        high=high,
        confidence=confidence,
        n_sessions=len(sums),
    )


class PairedComparison(BaseModel):
    """System A minus system B on their shared sessions, with a paired bootstrap.

    Attributes:
        difference: A's mean minus B's mean over shared sessions.
        low / high: percentile CI of the difference.
        p_value: two-sided bootstrap p-value, ``2 * min(P(d <= 0), P(d >= 0))``.
        significant: the CI excludes 0.
        n_sessions: shared sessions.
    """

    difference: float
    low: float
    high: float
    p_value: float
    significant: bool
    confidence: float
    n_sessions: int


def paired_bootstrap(
    a: SessionTotals,
    b: SessionTotals,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedComparison:
    """Compare two systems on the sessions both played, resampling sessions jointly.

    Args:
        a: system A's per-session totals.
        b: system B's per-session totals.
        n_resamples: bootstrap resamples.
        confidence: confidence level.
        seed: random seed.

    Returns:
        The :class:`PairedComparison`.

    Raises:
        ConfigError: fewer than two shared sessions.
    """
    index_a = {sid: i for i, sid in enumerate(a.session_ids)}
    index_b = {sid: i for i, sid in enumerate(b.session_ids)}
    shared = sorted(set(index_a) & set(index_b))
    if len(shared) < 2:
        raise ConfigError(
            f"a paired comparison needs at least 2 shared sessions, found {len(shared)}"
        )
    ia = [index_a[s] for s in shared]
    ib = [index_b[s] for s in shared]
    data = (
        np.asarray(a.sums, dtype=float)[ia],
        np.asarray(a.counts, dtype=float)[ia],
        np.asarray(b.sums, dtype=float)[ib],
        np.asarray(b.counts, dtype=float)[ib],
    )

    def diff(
        sa: NDArray[np.float64],
        ca: NDArray[np.float64],
        sb: NDArray[np.float64],
        cb: NDArray[np.float64],
        axis: int = -1,
    ) -> NDArray[np.float64]:
        return _ratio(sa, ca, axis) - _ratio(sb, cb, axis)

    observed = float(diff(*data))
    low, high, dist = _session_bootstrap(data, diff, n_resamples, confidence, seed)
    p_value = min(1.0, 2.0 * min(float(np.mean(dist <= 0)), float(np.mean(dist >= 0))))
    return PairedComparison(
        difference=observed,
        low=low,
        high=high,
        p_value=p_value,
        significant=bool(low > 0 or high < 0),
        confidence=confidence,
        n_sessions=len(shared),
    )


class ProportionInterval(BaseModel):
    """A proportion of independent items with its Wilson score interval.

    Attributes:
        estimate: successes / n.
        low / high: the interval's bounds.
        confidence: the confidence level.
        successes / n: the counts behind it.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    successes: int
    n: int


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> ProportionInterval:
    """Wilson score interval of a proportion (scipy's ``binomtest(...).proportion_ci``).

    Wilson's interval keeps its coverage near 0 and 1 and for small n, where the
    normal approximation does not (27 of 36 gives [0.59, 0.86]).

    Args:
        successes: items that count (0 <= successes <= n).
        n: items.
        confidence: confidence level.

    Returns:
        The :class:`ProportionInterval`.

    Raises:
        ConfigError: n < 1 or successes outside [0, n].
    """
    if n < 1 or not 0 <= successes <= n:
        raise ConfigError(f"a proportion needs 0 <= successes <= n and n >= 1, got {successes}/{n}")
    ci = (
        _scipy_stats()
        .binomtest(successes, n)
        .proportion_ci(confidence_level=confidence, method="wilson")
    )
    return ProportionInterval(
        estimate=successes / n,
        low=float(ci.low),
        high=float(ci.high),
        confidence=confidence,
        successes=successes,
        n=n,
    )


class PairedDifference(BaseModel):
    """System A minus system B on the same independent items, with a paired bootstrap.

    Attributes:
        difference: A's mean minus B's mean.
        low / high: percentile CI of the difference.
        p_value: two-sided bootstrap p-value, ``2 * min(P(d <= 0), P(d >= 0))``.
        significant: the CI excludes 0.
        confidence: the confidence level.
        n: items both systems answered.
    """

    difference: float
    low: float
    high: float
    p_value: float
    significant: bool
    confidence: float
    n: int


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Mean of ``a`` minus mean of ``b`` with a paired percentile bootstrap over items.

    Args:
        a / b: one value per item, aligned (item i of ``a`` is item i of ``b``).
        n_resamples: bootstrap resamples.
        confidence: confidence level.
        seed: random seed.

    Returns:
        The :class:`PairedDifference` (a degenerate interval when every item's
        difference is the same).

    Raises:
        ConfigError: the sequences differ in length or hold fewer than two items.
    """
    if len(a) != len(b) or len(a) < 2:
        raise ConfigError(
            f"a paired difference needs two aligned sequences of 2+ items, got {len(a)} and {len(b)}"
        )
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    observed = float(diffs.mean())
    if np.all(diffs == diffs[0]):
        low = high = observed
        p_value = 1.0 if observed == 0 else 0.0
    else:
        res = _scipy_stats().bootstrap(
            (diffs,),
            np.mean,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        dist = np.asarray(res.bootstrap_distribution)
        p_value = min(1.0, 2.0 * min(float(np.mean(dist <= 0)), float(np.mean(dist >= 0))))
    return PairedDifference(
        difference=observed,
        low=low,
        high=high,
        p_value=p_value,
        significant=bool(low > 0 or high < 0),
        confidence=confidence,
        n=len(diffs),
    )


class RankCorrelation(BaseModel):
    """Spearman rho between two scorings of the same items, with leave-one-out stability.

    Attributes:
        rho: Spearman's rho over all shared items.
        p_value: scipy's two-sided p-value.
        n: shared items.
        loo: item -> rho with that item left out (empty when n < 4).
        loo_min / loo_max: range of the leave-one-out values.
    """

    rho: float
    p_value: float
    n: int
    loo: dict[str, float]
    loo_min: float | None
    loo_max: float | None


def spearman(x: Mapping[str, float], y: Mapping[str, float]) -> RankCorrelation:
    """Spearman rho between two rankings of the same items (e.g. guided vs agentic EX per model).

    Args:
        x: item -> score under the first condition.
        y: item -> score under the second condition.

    Returns:
        The :class:`RankCorrelation` over the items present in both.

    Raises:
        ConfigError: fewer than three shared items.
    """
    items = sorted(set(x) & set(y))
    if len(items) < 3:
        raise ConfigError(f"Spearman's rho needs at least 3 shared items, found {len(items)}")
    xs = np.asarray([x[i] for i in items], dtype=float)
    ys = np.asarray([y[i] for i in items], dtype=float)
    res = _scipy_stats().spearmanr(xs, ys)
    loo: dict[str, float] = {}
    if len(items) >= 4:
        for k, item in enumerate(items):
            mask = np.arange(len(items)) != k
            loo[item] = float(_scipy_stats().spearmanr(xs[mask], ys[mask]).statistic)
    values = list(loo.values())
    return RankCorrelation(
        rho=float(res.statistic),
        p_value=float(res.pvalue),
        n=len(items),
        loo=loo,
        loo_min=min(values) if values else None,
        loo_max=max(values) if values else None,
    )

"""QER and QER@k over IS/RAS attempt logs, mean and sigma over independent runs (RAS §3.3, §4.7).

QER is the fraction of generated queries that fail to execute (RAS eq. 4). Under
a strategy with budget n, the query returned for a question fails iff every one
of its attempts failed, so one log of a run with budget n gives QER@k for every
k = 1..n: the fraction of questions with no successful attempt among the first k
(both strategies stop at the first success). Each (strategy, dataset, tier,
model) configuration is run several times independently; QER@k is computed per
run and reported as mean and sample standard deviation across runs (Table 4).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel

from cypherturn.errors import ConfigError
from cypherturn.records import QerEpisode

Tier = Literal["easy", "medium", "hard"]
"""A complexity tier (RAS §3.2)."""
TIERS: tuple[Tier, ...] = ("easy", "medium", "hard")
"""Complexity tiers in increasing order (RAS §4.3, appendix A.2): entity retrieval and
attribute filters; joins across entity types; cyclic or mutual multi-hop patterns and
conditional aggregation. QER tables list tiers in this order."""

__all__ = [
    "TIERS",
    "QerCurve",
    "QerDatasetRow",
    "QerTierRow",
    "Tier",
    "attempt_failure_rate",
    "qer_curves",
    "qer_dataset_table",
    "qer_scaling",
    "qer_tier_table",
]


def attempt_failure_rate(episodes: Iterable[QerEpisode]) -> float | None:
    """Fraction of all generated queries (every attempt) that failed.

    Returns:
        The rate, or ``None`` when there is no attempt.
    """
    outcomes = [a.ok for e in episodes for a in e.attempts]
    return sum(not ok for ok in outcomes) / len(outcomes) if outcomes else None


class QerCurve(BaseModel):
    """QER@k for k = 1..n of one configuration, across independent runs.

    Attributes:
        strategy / dataset / tier / model: the configuration.
        budget: n.
        runs: number of independent runs.
        questions: questions per run (the largest seen).
        per_run: ``per_run[r][k-1]`` = QER@k of run r.
        mean: mean over runs, per k.
        std: sample standard deviation over runs (ddof = 1), per k; ``None``
            with a single run.
    """

    strategy: str
    dataset: str
    tier: str
    model: str
    budget: int
    runs: int
    questions: int
    per_run: list[list[float]]
    mean: list[float]
    std: list[float] | None

    def at(self, k: int) -> float:
        """Mean QER@k.

        Raises:
            ConfigError: k outside 1..budget.
        """
        if not 1 <= k <= self.budget:
            raise ConfigError(f"QER@{k} asked of a run with budget {self.budget}")
        return self.mean[k - 1]

    def std_at(self, k: int) -> float | None:
        """sigma of QER@k across runs, ``None`` with a single run."""
        return None if self.std is None else self.std[k - 1]


def _curve(key: tuple[str, str, str, str], episodes: Sequence[QerEpisode]) -> QerCurve:
    budgets = {e.budget for e in episodes}
    if len(budgets) != 1:
        raise ConfigError(f"configuration {key} mixes budgets {sorted(budgets)}")
    budget = budgets.pop()
    runs: dict[int, list[QerEpisode]] = defaultdict(list)
    for e in episodes:
        runs[e.run_index].append(e)
    per_run = np.array(
        [
            [np.mean([e.failed_by(k) for e in runs[r]]) for k in range(1, budget + 1)]
            for r in sorted(runs)
        ],
        dtype=float,
    )
    std = per_run.std(axis=0, ddof=1).tolist() if len(runs) > 1 else None
    return QerCurve(
        strategy=key[0],
        dataset=key[1],
        tier=key[2],
        model=key[3],
        budget=budget,
        runs=len(runs),
        questions=max(len(v) for v in runs.values()),
        per_run=per_run.tolist(),
        mean=per_run.mean(axis=0).tolist(),
        std=std,
    )


def qer_curves(episodes: Iterable[QerEpisode]) -> list[QerCurve]:
    """QER@k curves per (strategy, dataset, tier, model), sorted by that key.

    Raises:
        ConfigError: one configuration mixes budgets.
    """
    groups: dict[tuple[str, str, str, str], list[QerEpisode]] = defaultdict(list)
    for e in episodes:
        groups[(e.strategy, e.dataset, e.tier, e.model)].append(e)
    return [_curve(key, groups[key]) for key in sorted(groups)]


def _find(
    curves: Sequence[QerCurve], strategy: str, dataset: str, tier: str, model: str
) -> QerCurve | None:
    return next(
        (
            c
            for c in curves
            if (c.strategy, c.dataset, c.tier, c.model) == (strategy, dataset, tier, model)
        ),
        None,
    )


class QerTierRow(BaseModel):
    """A row of RAS Table 4: one dataset, tier and model.

    Attributes:
        q1: QER@1 averaged over the IS and RAS runs (they share attempt 1).
        is_n / ras_n: mean QER@n under IS and RAS.
        sigma_is / sigma_ras: sigma of QER@n across runs.
    """

    dataset: str
    tier: str
    model: str
    n: int
    q1: float
    is_n: float
    ras_n: float
    sigma_is: float | None
    sigma_ras: float | None


class QerDatasetRow(BaseModel):
    """A row of RAS Table 3: one dataset and model, tiers averaged.

    Attributes:
        q1: Q@1, mean over tiers of QER@1 averaged over IS and RAS.
        is_n / ras_n: mean over tiers of QER@n.
        delta_is / delta_ras: reduction from Q@1, ``q1 - is_n`` and ``q1 - ras_n``
            (absolute, in QER units).
    """

    dataset: str
    model: str
    n: int
    tiers: int
    q1: float
    is_n: float
    ras_n: float
    delta_is: float
    delta_ras: float


def qer_tier_table(
    curves: Sequence[QerCurve], n: int = 5, *, is_name: str = "is", ras_name: str = "ras"
) -> list[QerTierRow]:
    """RAS Table 4 rows for every (dataset, tier, model) with both an IS and a RAS curve.

    Args:
        curves: from :func:`qer_curves`.
        n: the scaled budget reported (5 in the paper).
        is_name / ras_name: strategy names of IS and RAS in the logs.

    Returns:
        The rows, sorted by dataset, tier (easy, medium, hard, then others
        alphabetically), model.

    Raises:
        ConfigError: a curve's budget is below ``n``.
    """
    rows = []
    keys = sorted(
        {(c.dataset, c.tier, c.model) for c in curves},
        key=lambda k: (k[0], TIERS.index(k[1]) if k[1] in TIERS else len(TIERS), k[1], k[2]),
    )
    for dataset, tier, model in keys:
        is_curve = _find(curves, is_name, dataset, tier, model)
        ras_curve = _find(curves, ras_name, dataset, tier, model)
        if is_curve is None or ras_curve is None:
            continue
        rows.append(
            QerTierRow(
                dataset=dataset,
                tier=tier,
                model=model,
                n=n,
                q1=(is_curve.at(1) + ras_curve.at(1)) / 2,
                is_n=is_curve.at(n),
                ras_n=ras_curve.at(n),
                sigma_is=is_curve.std_at(n),
                sigma_ras=ras_curve.std_at(n),
            )
        )
    return rows


def qer_dataset_table(tier_rows: Sequence[QerTierRow]) -> list[QerDatasetRow]:
    """RAS Table 3 rows: Table 4 rows averaged over tiers per (dataset, model).

    Returns:
        The rows, sorted by dataset then model.
    """
    groups: dict[tuple[str, str], list[QerTierRow]] = defaultdict(list)
    for row in tier_rows:
        groups[(row.dataset, row.model)].append(row)
    out = []
    for (dataset, model), rows in sorted(groups.items()):
        q1 = float(np.mean([r.q1 for r in rows]))
        is_n = float(np.mean([r.is_n for r in rows]))
        ras_n = float(np.mean([r.ras_n for r in rows]))
        out.append(
            QerDatasetRow(
                dataset=dataset,
                model=model,
                n=rows[0].n,
                tiers=len(rows),
                q1=q1,
                is_n=is_n,
                ras_n=ras_n,
                delta_is=q1 - is_n,
                delta_ras=q1 - ras_n,
            )
        )
    return out


def qer_scaling(
    curves: Sequence[QerCurve], dataset: str, strategy: str
) -> tuple[list[float], list[float]] | None:
    """QER vs n for one dataset and strategy, averaged over tiers and models (RAS Figure 3).

    Per run index, QER@k is averaged over the configuration's tiers and models;
    the band is the standard deviation of that average across runs.

    Returns:
        ``(mean per k, std per k)``, or ``None`` when no curve matches. The std is
        all zeros with a single run.
    """
    chosen = [c for c in curves if c.dataset == dataset and c.strategy == strategy]
    if not chosen:
        return None
    budget = min(c.budget for c in chosen)
    runs = min(c.runs for c in chosen)
    stacked = np.array([[row[:budget] for row in c.per_run[:runs]] for c in chosen], dtype=float)
    per_run = stacked.mean(axis=0)
    std = per_run.std(axis=0, ddof=1) if runs > 1 else np.zeros(budget)
    return per_run.mean(axis=0).tolist(), std.tolist()

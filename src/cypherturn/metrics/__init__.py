"""Scoring: EX, relaxed EX, PSJS, SEM, CER, QER, cost and breakdowns, with bootstrap and Spearman statistics.

The scorer reads records and executes on graphs, nothing else: its input
(:class:`~cypherturn.records.TurnRecord`, :class:`~cypherturn.records.QerEpisode`)
and output (:class:`~cypherturn.records.TurnScore`, ``run.json``) are
:mod:`cypherturn.records`'s, so any log can be scored, ours or an imported one.
:func:`score_run` executes gold and predicted queries against the graphs and
writes a run directory that :mod:`cypherturn.reports` reads. A metric is one
:class:`TurnMetric` registered by name (:func:`register_metric`); statistics,
summaries and reports iterate over :data:`METRICS`.

The equivalence, provenance and PSJS internals are imported from their modules
(``cypherturn.metrics._equivalence``, ``._execute``, ``._psjs``, ``._scorer``).
"""

from cypherturn.metrics._aggregate import (
    BREAKDOWN_DIMENSIONS,
    SystemKey,
    SystemSummary,
    TurnLoss,
    breakdown,
    cer,
    cer_by_position,
    ex_by_position,
    group_by_system,
    session_scores,
    summarize,
    turn_losses,
)
from cypherturn.metrics._engineinfo import engine_info
from cypherturn.metrics._qer import (
    TIERS,
    QerCurve,
    Tier,
    qer_curves,
    qer_dataset_table,
    qer_scaling,
    qer_tier_table,
)
from cypherturn.metrics._registry import (
    METRICS,
    ScoredTurn,
    TurnMetric,
    get_metric,
    register_metric,
)
from cypherturn.metrics._rundir import score_run
from cypherturn.metrics._scorer import GoldCache, Scorer, ex_scores
from cypherturn.metrics._stats import (
    DEFAULT_RESAMPLES,
    ConfidenceInterval,
    PairedDifference,
    ProportionInterval,
    SessionTotals,
    bootstrap_ci,
    paired_bootstrap,
    paired_difference,
    session_totals,
    spearman,
    wilson_interval,
)

__all__ = [
    "BREAKDOWN_DIMENSIONS",
    "DEFAULT_RESAMPLES",
    "METRICS",
    "TIERS",
    "ConfidenceInterval",
    "GoldCache",
    "PairedDifference",
    "ProportionInterval",
    "QerCurve",
    "ScoredTurn",
    "Scorer",
    "SessionTotals",
    "SystemKey",
    "SystemSummary",
    "Tier",
    "TurnLoss",
    "TurnMetric",
    "bootstrap_ci",
    "breakdown",
    "cer",
    "cer_by_position",
    "engine_info",
    "ex_by_position",
    "ex_scores",
    "get_metric",
    "group_by_system",
    "paired_bootstrap",
    "paired_difference",
    "qer_curves",
    "qer_dataset_table",
    "qer_scaling",
    "qer_tier_table",
    "register_metric",
    "score_run",
    "session_scores",
    "session_totals",
    "spearman",
    "summarize",
    "turn_losses",
    "wilson_interval",
]

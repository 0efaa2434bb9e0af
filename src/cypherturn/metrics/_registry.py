"""Turn-level metrics as registered objects: what statistics and report tables iterate over.

A metric is one :class:`TurnMetric`: a name, the label of its table column,
whether higher is better, how its value is read from a :class:`TurnScore`, and,
for a metric added with :func:`register_metric`, how it scores a turn. The
built-ins (EX, relaxed EX, relaxed EX⊆, CypherBench PSJS, output PSJS) are
computed by the scorer into their own :class:`TurnScore` fields, which keeps the
``scores.jsonl`` layout; an added metric's value is stored in the score's
``metrics`` map under its name (a key written only when some added metric was
scored, so files without one are unchanged).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cypherturn._registry import Registry
from cypherturn.errors import ConfigError
from cypherturn.graph import QueryResult
from cypherturn.records import TurnRecord, TurnScore

__all__ = ["METRICS", "ScoredTurn", "TurnMetric", "get_metric", "register_metric"]


@dataclass(frozen=True, slots=True)
class ScoredTurn:
    """What an added metric sees of a turn: the record, both results and the built-in score.

    Attributes:
        record: the turn as played.
        gold: the gold query's result.
        predicted: the predicted query's result (``None``: no prediction, or it failed).
        score: the turn's score with the built-in metrics filled in.
    """

    record: TurnRecord
    gold: QueryResult
    predicted: QueryResult | None
    score: TurnScore


@dataclass(frozen=True, slots=True)
class TurnMetric:
    """One turn-level metric.

    Attributes:
        name: the key in statistics, summaries and the ``metrics`` map.
        label: its column in report tables.
        description: one sentence for the table notes.
        higher_is_better: whether a larger value is better.
        score: how an added metric scores a valid turn (``None`` leaves it
            unscored); ``None`` for built-ins, which the scorer computes.
        field: the :class:`TurnScore` field a built-in is stored in; ``None``
            for added metrics (stored in ``TurnScore.metrics``).
    """

    name: str
    label: str
    description: str = ""
    higher_is_better: bool = True
    score: Callable[[ScoredTurn], float | None] | None = None
    field: str | None = None

    def value(self, score: TurnScore) -> float | None:
        """The metric's value on a scored turn (``None``: not scored)."""
        if self.field is not None:
            raw = getattr(score, self.field)
            return None if raw is None else float(raw)
        return score.metrics.get(self.name)


METRICS: Registry[TurnMetric] = Registry("metric")
"""Every turn-level metric, in report column order: the built-ins, then added ones."""


def register_metric(metric: TurnMetric, *, replace: bool = False) -> TurnMetric:
    """Add a turn-level metric: the scorer computes it, summaries and report tables show it.

    Raises:
        ConfigError: the name is taken (and ``replace`` is false), or the metric
            has neither a ``score`` function nor a built-in ``field``.
    """
    if metric.score is None and metric.field is None:
        raise ConfigError(f"metric {metric.name!r} needs a score function")
    return METRICS.register(metric.name, metric, replace=replace)


def get_metric(name: str) -> TurnMetric:
    """The registered metric of ``name``.

    Raises:
        ConfigError: unknown name; the message lists the registered ones.
    """
    return METRICS.get(name)


for _metric in (
    TurnMetric("ex", "EX", "strict execution accuracy (column names included)", field="ex"),
    TurnMetric(
        "ex_relaxed",
        "rEX",
        "relaxed EX (column names and order ignored, lists of collect() columns with "
        "undefined order compared as multisets)",
        field="ex_relaxed",
    ),
    TurnMetric(
        "ex_subset",
        "rEX⊆",
        "relaxed EX with extra predicted columns allowed (gold columns ⊆ predicted columns)",
        field="ex_subset",
    ),
    TurnMetric("psjs", "PSJS", "CypherBench's provenance subgraph Jaccard", field="psjs"),
    TurnMetric("psjs_output", "PSJS-out", "output-provenance PSJS (ours)", field="psjs_output"),
):
    register_metric(_metric)

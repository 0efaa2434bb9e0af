"""The wall-clock budget of one answer: attempts stop when it is spent, queries fit inside it.

``StrategyConfig.max_seconds`` bounds the wall clock of a strategy run, apart
from its budget T of attempts: one ``ras+`` run at T = 5 once took 243 s on a
single question, each attempt a model call and up to two minutes of queries.
When the budget is spent the strategy starts no new attempt, the attempt in
progress is cut (its model call raises
:class:`~cypherturn.errors.TimeBudgetSpent`, see
:func:`cypherturn.models.call_limits`), and the best candidate of the attempts
that finished is returned, with the reason in ``StrategyResult.stop_reason``.

Queries are given at most what keeps the engine's promise inside the budget:
an engine returns within :func:`~cypherturn.graph._engine.timeout_promise_s`
``(L) = max(2L, L + 1 s)`` of a timeout L, so L is at most
``min(R / 2, R - 1 s)`` for R seconds left (:func:`query_timeout_within`).
"""

from __future__ import annotations

import time

from cypherturn.errors import TimeBudgetSpent
from cypherturn.graph import DEFAULT_TIMEOUT_S, GraphEngine
from cypherturn.models import current_limits

__all__ = ["MIN_QUERY_S", "TimeBudget", "query_timeout_within"]

MIN_QUERY_S = 0.25
"""The shortest query timeout worth sending, seconds; with less left, the budget counts as spent."""


def query_timeout_within(remaining_s: float) -> float:
    """The longest query timeout whose engine promise ends within ``remaining_s``.

    Args:
        remaining_s: seconds left in the budget.

    Returns:
        ``min(remaining_s / 2, remaining_s - 1)``: the L with
        ``max(2L, L + 1) <= remaining_s`` (negative when none exists).

    Example:
        >>> query_timeout_within(60.0), query_timeout_within(1.5)
        (30.0, 0.5)
    """
    return min(remaining_s / 2, remaining_s - 1.0)


class TimeBudget:
    """The deadline of one strategy run: its own ``max_seconds``, or an earlier one it runs under.

    Args:
        max_seconds: the run's budget (``None``: none of its own).

    Attributes:
        max_seconds: the run's budget, seconds.
        started: ``time.monotonic()`` when the run started.
        deadline: ``time.monotonic()`` at which it ends (``None``: never), the
            earlier of the run's own and the enclosing
            :func:`~cypherturn.models.call_limits` deadline (an answer's budget
            also covers the answer in words written after the query).
    """

    def __init__(self, max_seconds: float | None) -> None:
        self.max_seconds = max_seconds
        self.started = time.monotonic()
        outer = current_limits().deadline
        own = None if max_seconds is None else self.started + max_seconds
        ends = [d for d in (outer, own) if d is not None]
        self.deadline = min(ends) if ends else None

    def elapsed_s(self) -> float | None:
        """Seconds since the run started, for a run with a budget of its own (else ``None``)."""
        return None if self.max_seconds is None else time.monotonic() - self.started

    def remaining_s(self) -> float | None:
        """Seconds left (``None``: no budget)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def spent(self) -> bool:
        """Whether too little is left to run even one short query."""
        remaining = self.remaining_s()
        return remaining is not None and query_timeout_within(remaining) < MIN_QUERY_S

    def query_timeout(self, engine: GraphEngine, timeout_s: float | None) -> float | None:
        """The timeout to run a query with: ``timeout_s`` (or the engine's) clamped to the budget.

        Args:
            engine: the engine the query runs on (its default timeout when ``timeout_s`` is unset).
            timeout_s: the configured query timeout (``None``: the engine's).

        Returns:
            ``timeout_s`` unchanged when there is no budget, else a timeout whose
            promise ends before the deadline.

        Raises:
            TimeBudgetSpent: less than :data:`MIN_QUERY_S` fits in what is left.
        """
        remaining = self.remaining_s()
        if remaining is None:
            return timeout_s
        fit = query_timeout_within(remaining)
        if fit < MIN_QUERY_S:
            raise TimeBudgetSpent(
                f"the time budget of the answer leaves {max(remaining, 0):.1f} s, too little to run a query"
            )
        limit = timeout_s if timeout_s is not None else getattr(engine, "timeout_s", None)
        return min(limit if limit is not None else DEFAULT_TIMEOUT_S, fit)

    def reason(self, attempts: int, *, during: bool) -> str:
        """Why the run stopped: the budget, and where in the run it ran out.

        Args:
            attempts: attempts that finished before it did.
            during: the budget ran out in the middle of the next attempt (else before it began).
        """
        what = f"{self.max_seconds:g} s" if self.max_seconds is not None else "the answer"
        where = "during" if during else "before"
        kept = f"; {attempts} finished attempt(s) kept" if attempts else ""
        return f"the time budget of {what} was spent {where} attempt {attempts + 1}{kept}"

"""The one retry policy of the model layer: transient endpoint failures, retried with backoff.

Every model call in cypherturn (the protocols' action loop, the IS, RAS and
grounded strategies, the user simulator, QER runs) goes through a model built
here, so they share one policy. Only :class:`~cypherturn.errors.ModelTransientError`
is retried: connection errors, timeouts and HTTP 408/409/429/5xx of an
OpenAI-compatible endpoint. A connection refused (or a host not found) before
the endpoint ever answered is not: nothing listens at that URL, and the user
gets the message at once instead of after 15 s of backoff. A refused request (other 4xx), a malformed answer,
a prompt longer than the context window and any failure of an in-process GGUF
model are raised at once. The waiting and stopping are tenacity's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity

from cypherturn.errors import ConfigError, ModelTransientError
from cypherturn.models._limits import limited_sleep

__all__ = ["NO_RETRY", "RetryPolicy", "call_with_retries"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of transient endpoint failures, with capped exponential backoff.

    The default waits 0.5, 1, 2, 4 and 8 s (15.5 s in all) before giving up,
    about as patient as the two layers it replaces (the openai SDK's 2 quick
    retries inside the action loop's 4 attempts). A ``Retry-After`` the endpoint
    sends (rate limiting) lengthens a wait, up to ``max_delay_s``.

    Attributes:
        attempts: calls made at most, the first included (1: no retry).
        initial_delay_s: wait before the first retry, seconds.
        factor: multiplier of the wait after each retry.
        max_delay_s: longest wait, seconds.

    Raises:
        ConfigError: ``attempts < 1``, a negative delay, or ``factor < 1``.
    """

    attempts: int = 6
    initial_delay_s: float = 0.5
    factor: float = 2.0
    max_delay_s: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ConfigError(f"a retry policy makes at least 1 attempt, not {self.attempts}")
        if self.initial_delay_s < 0 or self.max_delay_s < 0 or self.factor < 1:
            raise ConfigError(
                "retry delays must be >= 0 s and the backoff factor >= 1, not "
                f"initial {self.initial_delay_s}, max {self.max_delay_s}, factor {self.factor}"
            )

    @property
    def retries(self) -> int:
        """Retries made at most (``attempts - 1``)."""
        return self.attempts - 1

    def delays(self) -> list[float]:
        """The waits before retries 1..attempts-1 when no ``Retry-After`` is sent, seconds."""
        return [self.delay(i) for i in range(1, self.attempts)]

    def delay(self, retry: int, retry_after_s: float | None = None) -> float:
        """The wait before retry number ``retry`` (1-based), seconds.

        Args:
            retry: which retry is next.
            retry_after_s: the wait the endpoint asked for, if any; it is honoured
                when longer than the backoff, up to ``max_delay_s``.
        """
        backoff = min(self.max_delay_s, self.initial_delay_s * self.factor ** (retry - 1))
        if retry_after_s is None:
            return backoff
        return max(backoff, min(self.max_delay_s, retry_after_s))


NO_RETRY = RetryPolicy(attempts=1)
"""A policy that makes one attempt (tests of a single failure, latency benchmarks)."""


def call_with_retries(
    policy: RetryPolicy,
    call: Callable[[], T],
    *,
    label: str,
    sleep: Callable[[float], None] = limited_sleep,
) -> tuple[T, int]:
    """Run ``call``, retrying it on :class:`ModelTransientError` under ``policy``.

    Each retry is logged as a warning (``"<label>: <error>; retry <n> in <s> s"``,
    the line the action loop wrote before retries moved here; the label is not
    repeated when the error's text starts with it).

    Args:
        policy: the retry policy.
        call: the model call (no arguments).
        label: who is calling, for the log (the model's spec).
        sleep: how to wait (default: :func:`~cypherturn.models.limited_sleep`, a
            sleep that a stop of the current call limits ends at once and that is
            not started past their deadline).

    Returns:
        ``(result, retries)``: the call's result and how many retries it took.

    Raises:
        ModelTransientError: the last attempt failed transiently too.
        CallAbandoned, TimeBudgetSpent: a limit of the current context ended the
            wait before a retry (:func:`~cypherturn.models.call_limits`).
        Exception: any other error of ``call``, at once.
    """

    def wait(state: tenacity.RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome is not None else None
        hint = error.retry_after_s if isinstance(error, ModelTransientError) else None
        return policy.delay(state.attempt_number, hint)

    def log(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        text = str(error)
        # model errors already start with the model's spec
        said = text if text.startswith(f"{label}:") else f"{label}: {text}"
        logger.warning("%s; retry %d in %.1f s", said, state.attempt_number, state.upcoming_sleep)

    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(policy.attempts),
        wait=wait,
        retry=tenacity.retry_if_exception_type(ModelTransientError),
        before_sleep=log,
        sleep=sleep,
        reraise=True,
    )
    attempts = 0

    def counted() -> T:
        nonlocal attempts
        attempts += 1
        return call()

    result = retrying(counted)
    return result, attempts - 1

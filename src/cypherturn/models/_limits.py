"""Limits on the model calls in flight: abandoned when the process stops, cut at an answer's deadline.

Two things end a model call before it finishes:

* a **stop**, a :class:`threading.Event` that a signal handler or a batch runner
  sets through :func:`stop_calls` when the process must end (Ctrl-C, SIGTERM).
  Every call made under it raises :class:`~cypherturn.errors.CallAbandoned`;
* a **deadline**, the end of one answer's wall-clock budget
  (``time.monotonic()`` seconds). A call cut by it raises
  :class:`~cypherturn.errors.TimeBudgetSpent`.

Why a context variable: the limits must reach the code that talks to llama.cpp
or an endpoint without a new argument through every layer between a command
and the model (strategies, the agent's action loop, the answer writer, the user
simulator), and they must follow the work onto the batch runner's worker
threads, which run each task in a copy of the submitting thread's context
(:func:`cypherturn.runner.run_batch`). A thread started any other way has no
limits.

How a call in flight is ended: an in-process GGUF model registers an abort
action with :meth:`CallLimits.watching`; :func:`stop_calls` and a timer at the
deadline run it, and llama.cpp stops between two nodes of its compute graph
(milliseconds, even in the middle of a long prompt evaluation). An endpoint call
is bounded by a request timeout clamped to the deadline, and checks the limits
between streamed chunks and before each retry; a blocked request that a stop
cannot reach is left to its thread, which the runner stops waiting for.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from cypherturn.errors import CallAbandoned, CypherTurnError, TimeBudgetSpent

__all__ = [
    "CallLimits",
    "call_limits",
    "current_limits",
    "limited_sleep",
    "stop_calls",
]

_POLL_S = 0.05
"""How often a limited wait looks at the stops again, seconds."""


@dataclass(frozen=True, slots=True)
class CallLimits:
    """The stops and the deadline that model calls in the current context obey.

    Attributes:
        stops: events that, once set, abandon every call made under them.
        deadline: ``time.monotonic()`` at which calls are cut (``None``: no deadline).
    """

    stops: tuple[threading.Event, ...] = ()
    deadline: float | None = None

    @property
    def stopped(self) -> bool:
        """Whether one of the stops is set."""
        return any(stop.is_set() for stop in self.stops)

    def remaining_s(self) -> float | None:
        """Seconds left before the deadline (negative once passed; ``None``: no deadline)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def ended(self) -> CypherTurnError | None:
        """The error of the limit that ended the call, or ``None`` while none has.

        A stop wins over the deadline: the process is going away either way.
        """
        if self.stopped:
            return CallAbandoned("the call was abandoned: the process is stopping")
        remaining = self.remaining_s()
        if remaining is not None and remaining <= 0:
            return TimeBudgetSpent("the time budget of the answer was spent")
        return None

    def check(self, what: str = "") -> None:
        """Raise when a limit has ended the work, before it starts something new.

        Args:
            what: who is checking, prefixed to the message (a model's spec).

        Raises:
            CallAbandoned: a stop is set.
            TimeBudgetSpent: the deadline has passed.
        """
        error = self.ended()
        if error is not None:
            raise type(error)(f"{what}: {error}" if what else str(error))

    @contextlib.contextmanager
    def watching(self, abort: Callable[[], None]) -> Iterator[None]:
        """Run ``abort`` when a stop is set or the deadline passes while the block runs.

        ``abort`` is called from another thread (the one that sets the stop, or a
        timer), so it must only flip a flag the work polls. It is not called after
        the block ends.

        Args:
            abort: makes the work in the block end soon (a GGUF model's abort flag).
        """
        key = next(_KEYS)
        timer: threading.Timer | None = None
        with _WATCHED_LOCK:
            _WATCHED[key] = (self.stops, abort)
        try:
            remaining = self.remaining_s()
            if remaining is not None:
                timer = threading.Timer(max(remaining, 0.0), abort)
                timer.daemon = True
                timer.start()
            if self.stopped:
                abort()
            yield
        finally:
            if timer is not None:
                timer.cancel()
            with _WATCHED_LOCK:
                del _WATCHED[key]


_LIMITS: ContextVar[CallLimits] = ContextVar("cypherturn_call_limits", default=CallLimits())  # noqa: B039 - frozen, never mutated
_KEYS = itertools.count()
_WATCHED: dict[int, tuple[tuple[threading.Event, ...], Callable[[], None]]] = {}
_WATCHED_LOCK = threading.Lock()


def current_limits() -> CallLimits:
    """The limits of the current context (none outside :func:`call_limits`)."""
    return _LIMITS.get()


@contextlib.contextmanager
def call_limits(
    *, stop: threading.Event | None = None, deadline: float | None = None
) -> Iterator[CallLimits]:
    """Add a stop and a deadline to the limits of model calls made inside the block.

    Limits nest: a call obeys every stop of the enclosing blocks and the
    earliest deadline.

    Args:
        stop: an event that abandons the calls once set (set it with :func:`stop_calls`
            so that calls already in flight end too).
        deadline: ``time.monotonic()`` at which calls are cut.

    Yields:
        The limits now in force.
    """
    outer = _LIMITS.get()
    stops = outer.stops + ((stop,) if stop is not None and stop not in outer.stops else ())
    deadlines = [d for d in (outer.deadline, deadline) if d is not None]
    limits = CallLimits(stops=stops, deadline=min(deadlines) if deadlines else None)
    token = _LIMITS.set(limits)
    try:
        yield limits
    finally:
        _LIMITS.reset(token)


def stop_calls(stop: threading.Event) -> None:
    """Set ``stop`` and end the model calls in flight under it.

    Safe to call from any thread, and more than once.

    Args:
        stop: the event the calls were made under (:func:`call_limits`).
    """
    stop.set()
    with _WATCHED_LOCK:
        aborts = [abort for stops, abort in _WATCHED.values() if stop in stops]
    for abort in aborts:
        abort()


def limited_sleep(seconds: float) -> None:
    """Sleep ``seconds`` unless a limit of the current context ends first.

    A retry's backoff (up to 30 s with a ``Retry-After``) must not hold a stopping
    process or outlive an answer's budget.

    Raises:
        CallAbandoned: a stop was set before or during the sleep.
        TimeBudgetSpent: the deadline passes before the sleep would end (raised
            at once: waiting for it would only spend the rest of the budget).
    """
    limits = current_limits()
    limits.check()
    remaining = limits.remaining_s()
    if remaining is not None and remaining < seconds:
        raise TimeBudgetSpent(
            f"the time budget of the answer ends in {max(remaining, 0):.1f} s, "
            f"before a retry in {seconds:.1f} s"
        )
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if limits.stops:
            limits.stops[0].wait(min(left, _POLL_S))
        else:
            time.sleep(left)
        limits.check()

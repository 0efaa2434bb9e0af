"""Best-effort work of a command in a daemon thread that a signal or the command's end aborts.

``chat`` and ``mcp`` warm the model's prompt prefix this way while the user
types or the client connects (:meth:`cypherturn.api.ChatSession.warm`,
:meth:`cypherturn.mcp_server.GraphService.warm`).
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from cypherturn.errors import CypherTurnError
from cypherturn.models import call_limits, stop_calls

__all__ = ["Background", "in_background"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Background:
    """A started :func:`in_background` thread and the stop its model calls obey."""

    thread: threading.Thread
    done: threading.Event

    def abort(self) -> None:
        """End the thread's model calls in flight within milliseconds; never blocks (signal handlers)."""
        stop_calls(self.done)

    def stop(self) -> None:
        """:meth:`abort`, then wait for the thread to end."""
        self.abort()
        self.thread.join()


def in_background(work: Callable[[], object], what: str) -> Background:
    """Start ``work`` in a daemon thread under the caller's call limits plus a stop of its own.

    The thread runs in a copy of the caller's context, so the stop of an
    enclosing :func:`~cypherturn.cli._signals.stoppable` (a signal) abandons its
    model calls too. A :class:`~cypherturn.errors.CypherTurnError` of ``work``
    is only logged (debug, as ``what``): the work is an optimisation, and the
    command's own next call meets the same failure and reports it.

    Args:
        work: what to run; its result is ignored.
        what: the work's name in the log.

    Returns:
        The thread and its stop.
    """
    done = threading.Event()

    def run() -> None:
        try:
            with call_limits(stop=done):
                work()
        except CypherTurnError as e:
            logger.debug("%s failed: %s", what, e)

    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,), daemon=True)
    thread.start()
    return Background(thread, done)

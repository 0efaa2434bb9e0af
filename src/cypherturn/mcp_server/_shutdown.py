"""Stopping ``cypherturn mcp`` on SIGINT or SIGTERM within a bounded time, whatever is in flight.

A normal interpreter exit waits for every non-daemon thread, and the server
always has one it cannot interrupt: over stdio the SDK reads stdin on a worker
thread that returns only when the client writes or closes its end (a client
that keeps stdin open kept the server, and its engine, alive past 60 s), and a
tool call in flight waits on the engine until its query's timeout (up to
120 s at the default; docs/design/mcp.md, "Signals"). Neither can be cancelled from Python.

So :class:`Shutdown` does not wait for them. On the first signal it asks the
transport to stop (the HTTP server stops accepting and lets quick requests
finish), waits at most ``grace_s``, then runs the process's exit handlers
(they drop this process's lease on the embedded FalkorDB and stop it unless
another process holds one) for at most ``cleanup_s``, and ends the process
with ``os._exit`` and the signal's code (130 for SIGINT, 143 for SIGTERM). A
second signal ends it at once; the embedded engine's watchdog then stops the
engine, since no live process holds this lease any more. The in-flight engine
call is abandoned: the engine stops the query at its own timeout, and with the
embedded engine stopped the connection closes at once.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType

__all__ = ["Shutdown"]

log = logging.getLogger(__name__)

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Shutdown:
    """Owns SIGINT and SIGTERM for a server, and ends the process within a bounded time.

    Args:
        grace_s: how long after the first signal the transport may take to stop
            by itself before the process ends anyway, seconds.
        cleanup_s: the most the exit handlers (engine stop) may take, seconds.
        announce: called once with a line saying what stopped the server (the
            CLI prints it on stderr; library code does not print).

    Attributes:
        code: the exit code chosen by the first signal (128 + its number), or ``None``.
    """

    def __init__(
        self,
        *,
        grace_s: float = 0.5,
        cleanup_s: float = 1.0,
        announce: Callable[[str], None] | None = None,
    ) -> None:
        self.grace_s = grace_s
        self.cleanup_s = cleanup_s
        self.code: int | None = None
        self._announce = announce
        self._on_stop: list[Callable[[], None]] = []
        self._signal_name = ""
        self._served = threading.Event()
        self._finishing = threading.Lock()

    def install(self) -> None:
        """Take SIGINT and SIGTERM (main thread only; elsewhere Python cannot set handlers)."""
        if threading.current_thread() is not threading.main_thread():
            log.warning("signal handlers not installed: not on the main thread")
            return
        for signum in _SIGNALS:
            signal.signal(signum, self._on_signal)

    def on_stop(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` on the first signal, to stop the transport gracefully.

        It runs inside the signal handler, on the main thread: it must only set
        a flag or schedule work, never block.
        """
        self._on_stop.append(callback)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.code is not None:
            # A second signal: the user will not wait for the grace period or cleanup.
            self._exit(self.code)
        self.code = 128 + signum
        self._signal_name = signal.Signals(signum).name
        for callback in self._on_stop:
            try:
                callback()
            except Exception:  # a transport that cannot stop gracefully is stopped below
                log.exception("graceful stop failed")
        threading.Thread(target=self._finish_after_grace, name="mcp-shutdown", daemon=True).start()

    def _finish_after_grace(self) -> None:
        # Announced here, not in the handler: writing to a stream the interrupted code
        # was writing to could block or fail inside the handler.
        if self._announce is not None:
            with contextlib.suppress(Exception):
                self._announce(f"stopping on {self._signal_name}")
        self._served.wait(self.grace_s)
        self.finish(self.code if self.code is not None else 0)

    def finish(self, code: int) -> None:
        """Run the exit handlers (bounded by ``cleanup_s``) and end the process with ``code``.

        Called by the main thread when serving returns, and by the grace timer
        after a signal; the first caller ends the process, a second one waits
        for it. Never returns.

        Args:
            code: the exit status (a signal's code takes precedence).
        """
        self._served.set()
        if not self._finishing.acquire(blocking=False):
            threading.Event().wait()  # the other caller is ending the process
        if self.code is not None:
            code = self.code
        cleanup = threading.Thread(target=_run_exit_handlers, name="mcp-cleanup", daemon=True)
        cleanup.start()
        cleanup.join(self.cleanup_s)
        if cleanup.is_alive():
            log.warning("exit handlers still running after %.1f s; exiting anyway", self.cleanup_s)
        self._exit(code)

    @staticmethod
    def _exit(code: int) -> None:
        # Not sys.exit: that would wait for the threads no one can interrupt (module doc).
        os._exit(code)


def _run_exit_handlers() -> None:
    """What a normal exit would run (the embedded engine's lease drop and stop), then flush.

    Runs on its own thread, bounded by the caller: a stream whose reader stopped
    reading could block a flush.
    """
    try:
        atexit._run_exitfuncs()
    except Exception:
        log.exception("an exit handler failed")
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()

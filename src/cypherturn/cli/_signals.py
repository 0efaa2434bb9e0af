"""Stopping a long command within 2 s of SIGTERM or the first Ctrl-C, whatever is in flight.

Python runs signal handlers in the main thread, between bytecodes. That is
prompt while the main thread waits on a lock (the batch runner) or a socket
(an engine query, an endpoint request: the read is interrupted), but not while
it is inside llama.cpp: one ``llama_decode`` of a 512-token prompt batch takes
seconds on two cores, and the handler waits for it. So :func:`stoppable` also
asks the kernel-level part of Python's handler to write the signal's number to
a pipe (``signal.set_wakeup_fd``), and a watcher thread that reads the pipe
abandons the model calls in flight at once (:func:`cypherturn.models.stop_calls`);
the decode returns within milliseconds, and the main thread's handler then
raises ``KeyboardInterrupt`` (Ctrl-C) or ``SystemExit(143)`` (SIGTERM).

The watcher also closes a window in which a signal would be lost: Python's
handler runs only when the main thread checks for signals, and a signal that
arrives just before the main thread blocks in C (``input()``'s readline waits
in ``select()`` and checks signals only when that is interrupted) leaves it
blocked until the user types. Measured: 1 Ctrl-C in 6 right after the chat
prompt appeared did nothing. When the handler has not run
:data:`NUDGE_AFTER_S` after the signal, the watcher delivers it again to the
main thread (``pthread_kill``), which interrupts the blocking call; the two
deliveries run the handler once.

The batch runner abandons its workers' calls the same way when the signal
reaches it (:func:`cypherturn.runner.run_batch`); what the command set up is
released on the way out (``with`` blocks), and the embedded engine is stopped
at exit unless another process holds a lease on it.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from cypherturn.cli._exit import ExitCode
from cypherturn.models import call_limits, stop_calls

__all__ = ["NUDGE_AFTER_S", "exit_code_of_signal", "stoppable"]

NUDGE_AFTER_S = 0.3
"""How long the main thread may leave a stopping signal unhandled before it is delivered again."""

_NUDGES = 5
"""Deliveries again at most (the handler runs at the first that finds the thread blocked)."""

_STOPPING = (signal.SIGINT, signal.SIGTERM)
_received: int | None = None
"""The last stopping signal a :func:`stoppable` block saw."""
_handled = threading.Event()
"""Set once the main thread's handler of a stopping signal has run."""


def exit_code_of_signal() -> ExitCode:
    """The exit code of the signal that stopped the command (Ctrl-C's when none was seen)."""
    return ExitCode.TERMINATED if _received == signal.SIGTERM else ExitCode.INTERRUPTED


def _terminate(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM: unwind like Ctrl-C (``finally`` blocks and ``atexit`` run), exit 143."""
    global _received
    _received = signum
    _handled.set()
    raise SystemExit(ExitCode.TERMINATED)


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    """Ctrl-C: Python's ``KeyboardInterrupt``, noted as handled."""
    global _received
    _received = signum
    _handled.set()
    raise KeyboardInterrupt


def _note_at_exit(signum: int, _frame: FrameType | None) -> None:
    """A stopping signal while ``atexit`` cleans up: noted, not raised; a second one exits at once.

    The command is ending anyway, and an exception raised inside an ``atexit``
    callback only interrupts the cleanup it hits (the embedded engine's stop) and is
    printed as a traceback. The engine's watchdog stops a server a hard exit leaves.
    """
    global _received
    if _handled.is_set():
        os._exit(128 + signum)
    _received = signum
    _handled.set()


def _quiet_at_exit() -> None:
    """Swap the raising handlers for :func:`_note_at_exit` once the interpreter starts to exit."""
    _handled.clear()
    for signum in _STOPPING:
        if signal.getsignal(signum) in (_terminate, _interrupt, signal.default_int_handler):
            signal.signal(signum, _note_at_exit)


def _watch(read_fd: int, stop: threading.Event, main: int) -> None:
    """Abandon the calls under ``stop`` when a stopping signal arrives; make sure it is handled."""
    global _received
    while True:
        try:
            data = os.read(read_fd, 64)
        except OSError:
            return
        if not data or 0 in data:
            return
        stopping = [n for n in data if n in _STOPPING]
        if not stopping:
            continue
        _received = stopping[-1]
        stop_calls(stop)
        for _ in range(_NUDGES):
            if _handled.wait(NUDGE_AFTER_S):
                break
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pthread_kill(main, _received)


@contextlib.contextmanager
def stoppable() -> Iterator[threading.Event]:
    """Run the block so that SIGTERM or Ctrl-C stops it within 2 s, in-flight model calls included.

    SIGTERM raises ``SystemExit(143)`` in the main thread (its handler stays for
    the rest of the process, so the exit after the block unwinds the same way);
    SIGINT raises ``KeyboardInterrupt`` (exit 130), and stays ignored when the
    command was started with it ignored. A signal the main thread leaves
    unhandled is delivered again (see the module's note). Model calls made inside the block,
    also on the batch runner's workers, are abandoned as soon as either arrives.
    Outside the main thread (a test runner's thread) the block only gets the stop.

    Yields:
        The stop event the block's model calls obey.
    """
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        with call_limits(stop=stop):
            yield stop
        return
    _handled.clear()
    if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
        signal.signal(signal.SIGTERM, _terminate)
    interrupt = signal.getsignal(signal.SIGINT)
    if interrupt is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupt)
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    watcher = threading.Thread(
        target=_watch,
        args=(read_fd, stop, threading.main_thread().ident),
        name="cypherturn-signals",
        daemon=True,
    )
    watcher.start()
    try:
        with call_limits(stop=stop):
            yield stop
    finally:
        # registered (once) after every cleanup the block registered, so it runs before them
        atexit.unregister(_quiet_at_exit)
        atexit.register(_quiet_at_exit)
        signal.set_wakeup_fd(previous)
        if interrupt is signal.default_int_handler:
            signal.signal(signal.SIGINT, interrupt)
        with contextlib.suppress(OSError):
            os.write(write_fd, b"\0")
        watcher.join(timeout=1.0)
        if not watcher.is_alive():
            os.close(read_fd)
        os.close(write_fd)

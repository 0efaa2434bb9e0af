"""Ending a llama.cpp computation from another thread, within milliseconds.

A GGUF call spends its time inside ``llama_decode``: one call evaluates up to
``n_batch`` (512) prompt tokens, seconds for a 1.5B model on two cores, and no
Python code runs meanwhile, so neither a signal handler nor a stopping
criterion can end it. llama.cpp polls an *abort callback* between the nodes of
its compute graph (``llama_set_abort_callback``); when it returns true the
decode returns 2, which llama-cpp-python raises as ``RuntimeError``. The
context stays usable: the aborted batch's positions are removed from the KV
cache, and the next evaluation starts after the last batch that completed.

Why the callback is libc's ``strlen``: a Python callback would take the GIL
hundreds of times a token, and wait for it whenever another thread runs Python
(the batch runner's workers, the progress display). ``strlen`` of a two-byte
buffer is 0 until the flag's first byte is set, then 1, read without the GIL,
which is what ``bool (*)(void *)`` needs. Where libc cannot be found the flag
falls back to a Python callback.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import threading
from collections.abc import Iterator
from typing import Any

from cypherturn.errors import CallAbandoned, TimeBudgetSpent
from cypherturn.models._limits import CallLimits

__all__ = ["AbortFlag", "install_log_filter", "limited_call"]

logger = logging.getLogger(__name__)

_SET = b"x"
_CLEAR = b"\0"


def _strlen_address() -> int | None:
    """The address of libc's ``strlen``, or ``None`` when libc cannot be loaded."""
    for name in (None, ctypes.util.find_library("c")):
        try:
            address = ctypes.cast(ctypes.CDLL(name).strlen, ctypes.c_void_p).value
        except (OSError, AttributeError, TypeError):
            continue
        if address:
            return int(address)
    return None


_STRLEN = _strlen_address()

_aborting = 0
"""Flags set and not yet cleared (llama.cpp's log line about the aborted batch is hidden meanwhile)."""
_aborting_lock = threading.Lock()


class AbortFlag:
    """A flag that llama.cpp polls during every decode of one context.

    Args:
        context: the ``llama_context`` pointer (``Llama.ctx``) to watch it.

    Attributes:
        installed: llama.cpp accepted the callback (``False``: the flag is only
            read by :meth:`is_set`, and decodes run to their end).
    """

    def __init__(self, context: Any) -> None:
        self._buffer = ctypes.create_string_buffer(2)
        self._callback: Any = None
        self.installed = False
        try:
            import llama_cpp

            if _STRLEN is not None:
                self._callback = llama_cpp.ggml_abort_callback(_STRLEN)
            else:
                buffer = self._buffer
                self._callback = llama_cpp.ggml_abort_callback(lambda _data: buffer.raw[:1] == _SET)
            llama_cpp.llama_set_abort_callback(
                context, self._callback, ctypes.cast(self._buffer, ctypes.c_void_p)
            )
            self.installed = True
        except (ImportError, AttributeError, TypeError, ctypes.ArgumentError) as e:
            logger.warning("llama.cpp abort callback unavailable (%s); calls run to their end", e)

    def set(self) -> None:
        """Make the decode in progress, and every later one, fail (callable from any thread)."""
        global _aborting
        with _aborting_lock:
            if self._buffer.raw[:1] != _SET:
                _aborting += 1
            self._buffer[0] = _SET

    def clear(self) -> None:
        """Let decodes run again (before the next call; under the model's lock)."""
        global _aborting
        with _aborting_lock:
            if self._buffer.raw[:1] == _SET:
                _aborting -= 1
            self._buffer[0] = _CLEAR

    def is_set(self) -> bool:
        """Whether the flag is set."""
        return self._buffer.raw[:1] == _SET


_FILTER_INSTALLED = False
_HIDDEN = ("decode: removing memory module entries", "llama_decode: failed to decode")


def install_log_filter() -> None:
    """Hide llama.cpp's error line about an aborted decode while a flag is set.

    An answer cut at its deadline or a Ctrl-C would otherwise print
    ``decode: removing memory module entries for seq_id = 0, pos = [0, +inf)`` on
    the user's terminal. Every other line goes to llama-cpp-python's own log
    callback unchanged. Installed once per process, after llama-cpp-python set its
    callback (on the first model load).
    """
    global _FILTER_INSTALLED
    if _FILTER_INSTALLED:
        return
    try:
        import llama_cpp
        from llama_cpp import _logger
    except ImportError:
        return
    original = _logger.llama_log_callback

    @llama_cpp.llama_log_callback
    def filtered(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if _aborting and text.decode("utf-8", errors="replace").lstrip().startswith(_HIDDEN):
            return
        original(level, text, user_data)

    llama_cpp.llama_log_set(filtered, ctypes.c_void_p(0))
    # the callback object must outlive every llama.cpp call that may log
    globals()["_filter_callback"] = filtered
    _FILTER_INSTALLED = True


_LOCK_POLL_S = 0.1
"""How often a call waiting for a model another thread is using looks at its limits, seconds."""


@contextlib.contextmanager
def limited_call(
    lock: threading.Lock, abort: AbortFlag | None, limits: CallLimits, spec: str
) -> Iterator[None]:
    """Hold a model's ``lock`` for one call that ``limits`` can end, as the call's errors.

    The lock is waited for only while the limits allow (another thread's call
    may hold it for a minute). While the block runs, a stop set through
    :func:`~cypherturn.models.stop_calls` or the deadline sets the context's abort
    flag, and llama.cpp's decode then fails with ``RuntimeError``, raised here as
    the limit that ended it. A call that completed although a stop came at its
    very end is abandoned too: its caller would go on to log or act on it.

    Args:
        lock: serialises the calls into one llama.cpp context.
        abort: that context's flag (``None``: calls cannot be ended in flight).
        limits: the limits of the calling context.
        spec: the model's spec, prefixed to the messages.

    Raises:
        CallAbandoned: a stop ended the call (or the wait for the lock).
        TimeBudgetSpent: the deadline did.
    """
    while not lock.acquire(timeout=_LOCK_POLL_S):
        limits.check(spec)
    try:
        if abort is not None:
            # a timer of an earlier call may have fired as that call ended
            abort.clear()
        if abort is None or not (limits.stops or limits.deadline is not None):
            yield
            return
        with limits.watching(abort.set):
            limits.check(spec)
            try:
                yield
            except RuntimeError as e:
                if not abort.is_set():
                    raise
                ended = limits.ended() or (
                    TimeBudgetSpent("the time budget of the answer was spent")
                    if limits.deadline is not None
                    else CallAbandoned("the call was abandoned: the process is stopping")
                )
                raise type(ended)(f"{spec}: {ended}") from e
            if limits.stopped:
                raise CallAbandoned(f"{spec}: the call was abandoned: the process is stopping")
    finally:
        if abort is not None:
            abort.clear()
        lock.release()

"""A fixed pool of engine connections on one graph, so the read tools run side by side.

One engine object is not shared between threads: a ``FalkorDBEngine`` keeps
the client's schema cache, which a refresh empties and refills in place, and a
reply decoded while another thread refreshes it could name the wrong labels.
So each call borrows an engine of its own for its whole duration. The engine
serves several connections at once (the embedded FalkorDB runs 8 or more
worker threads), so one client's slow query holds one connection and the
others keep answering.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

from cypherturn.errors import CypherTurnError
from cypherturn.graph import GraphEngine

__all__ = ["EnginePool"]

log = logging.getLogger(__name__)


class EnginePool:
    """Up to ``size`` engines on one graph, opened on demand; a call borrows one.

    Args:
        first: an open engine on the graph (closed by its owner, not by the
            pool). Used as the only engine when ``open_more`` is ``None`` or
            cannot open any; otherwise the pool's engines are all opened by
            ``open_more``, so they share its limits.
        open_more: opens another engine on the same graph. If it fails, the pool
            logs it and serves on the engines it has.
        size: the most engines, hence the most calls running at once (>= 1).
    """

    def __init__(
        self,
        first: GraphEngine,
        open_more: Callable[[], GraphEngine] | None,
        size: int,
    ) -> None:
        self._idle: queue.LifoQueue[GraphEngine] = queue.LifoQueue()
        self._first = first
        self._open_more = open_more
        self._size = max(1, size)
        self._count = 0
        self._opened: list[GraphEngine] = []
        self._lock = threading.Lock()
        if open_more is None:
            self._use_first()

    @property
    def size(self) -> int:
        """The most engines the pool holds."""
        return self._size

    def acquire(self, wait_s: float) -> GraphEngine:
        """Take an engine no other call uses until :meth:`release` gives it back.

        Args:
            wait_s: how long to wait for one when all are busy, seconds.

        Returns:
            An idle engine, or a newly opened one while the pool is not full.

        Raises:
            TimeoutError: every engine stayed busy for ``wait_s``.
        """
        return self._take(wait_s)

    def release(self, engine: GraphEngine) -> None:
        """Give back an engine from :meth:`acquire`."""
        self._idle.put(engine)

    def _use_first(self) -> None:
        self._count += 1
        self._idle.put(self._first)

    def _take(self, wait_s: float) -> GraphEngine:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        opener = None
        with self._lock:
            if self._open_more is not None and self._count < self._size:
                self._count += 1
                opener = self._open_more
        if opener is not None:
            try:
                engine = opener()
            except CypherTurnError as e:
                # Serve on the engines already open (or the caller's own) rather than fail.
                log.warning("cannot open another engine connection: %s", e)
                with self._lock:
                    self._count -= 1
                    self._open_more = None
                    if self._count == 0:
                        self._use_first()
            else:
                with self._lock:
                    self._opened.append(engine)
                return engine
        try:
            return self._idle.get(timeout=max(wait_s, 0.0))
        except queue.Empty:
            raise TimeoutError(f"all {self._count} engine connections stayed busy") from None

    def close(self) -> None:
        """Close the engines the pool opened (not ``first``); borrowed ones too, so call it last."""
        with self._lock:
            opened, self._opened = self._opened, []
            self._open_more = None
        for engine in opened:
            try:
                engine.close()
            except CypherTurnError as e:
                log.debug("closing a pooled engine: %s", e)

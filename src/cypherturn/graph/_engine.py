"""The one interface every graph engine implements (FalkorDB embedded or by URL, Neo4j over Bolt)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from cypherturn.graph._data import GraphData, LoadStats
from cypherturn.graph._result import QueryResult
from cypherturn.graph._schema import GraphSchema

__all__ = ["DEFAULT_ROW_CAP", "DEFAULT_TIMEOUT_S", "GraphEngine", "timeout_promise_s"]

DEFAULT_TIMEOUT_S = 120.0
"""Hard query timeout, seconds (CypherTurn appendix D.5)."""

DEFAULT_ROW_CAP = 10_000
"""Rows kept from one generated query; more are dropped and the result is marked truncated."""


def timeout_promise_s(timeout_s: float) -> float:
    """When control returns to the caller of ``execute`` at the latest, for a limit of ``timeout_s``.

    ``max(2 * limit, limit + 1 s)``: the engine's own timeout, plus room for
    a query the engine stops late (docs/design/engine-reliability.md, "The timeout
    is a promise"). Engines that keep a client-side
    deadline give up at this bound and raise ``QueryTimeoutError``.

    Args:
        timeout_s: the query's time limit, seconds (> 0).

    Returns:
        Seconds.
    """
    return max(2.0 * timeout_s, timeout_s + 1.0)


@runtime_checkable
class GraphEngine(Protocol):
    """A connection to one named graph on one engine.

    ``execute`` is the only entry point for untrusted (generated) Cypher: it runs
    read-only, under a timeout and a row cap. ``write`` and ``load`` are for
    cypherturn's own trusted loaders.
    """

    @property
    def graph(self) -> str:
        """Name of the graph (FalkorDB key or Neo4j database) this engine talks to."""
        ...

    @property
    def spec(self) -> str:
        """A string that reopens the same engine and graph (recorded in run logs)."""
        ...

    def execute(
        self,
        query: str,
        params: dict[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        row_cap: int | None = None,
    ) -> QueryResult:
        """Run untrusted Cypher read-only.

        Raises:
            WriteRefusedError: the query would write; nothing was changed.
            QueryTimeoutError: it ran past ``timeout_s`` (default 120 s).
            QueryError: any other engine refusal, classified, with the engine's message.
            EngineConnectionError: the engine is unreachable.
        """
        ...

    def write(self, query: str, params: dict[str, Any] | None = None) -> QueryResult:
        """Run trusted Cypher that may write (loaders, index creation)."""
        ...

    def load(self, data: GraphData, *, batch_size: int = 5_000, replace: bool = False) -> LoadStats:
        """Write a whole :class:`GraphData` with batched parameterised queries and create its indexes."""
        ...

    def await_indexes(self, timeout_s: float = 120.0) -> None:
        """Block until every index of the graph is built (results must not depend on timing)."""
        ...

    def schema(self, *, sample: int = 1_000) -> GraphSchema:
        """Introspect labels, relationship types, property types, patterns and counts (no APOC)."""
        ...

    def node_count(self) -> int:
        """Number of nodes in the graph."""
        ...

    def relationship_count(self) -> int:
        """Number of relationships in the graph."""
        ...

    def exists(self) -> bool:
        """True when the graph holds at least one node."""
        ...

    def drop(self) -> None:
        """Delete the whole graph."""
        ...

    def close(self) -> None:
        """Release connections (an embedded server is stopped by its owner, not here)."""
        ...

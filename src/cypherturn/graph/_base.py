"""Behaviour shared by the engines: the read-only gate, limits, load, schema and counts."""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from typing import Any

from cypherturn.errors import ConfigError, DatasetError, GraphError, QueryError, WriteRefusedError
from cypherturn.graph._cost import check_cost
from cypherturn.graph._data import GraphData, LoadStats
from cypherturn.graph._engine import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S
from cypherturn.graph._guard import (
    NUL,
    find_parameter_problem,
    find_plan_prefix,
    find_write_clause,
)
from cypherturn.graph._introspect import introspect
from cypherturn.graph._load import load_graph
from cypherturn.graph._result import QueryResult
from cypherturn.graph._schema import GraphSchema
from cypherturn.graph._values import to_plain

__all__ = ["EngineBase"]

log = logging.getLogger(__name__)

_INDEX_WAIT_S = 120.0
_INDEX_POLL_S = 0.02


def _check_limits(timeout_s: float, row_cap: int) -> None:
    if not timeout_s > 0:
        raise ConfigError(f"query timeout must be positive seconds, got {timeout_s!r}")
    if row_cap < 0:
        raise ConfigError(f"row cap must be >= 0, got {row_cap!r}")


class EngineBase(ABC):
    """Common part of :class:`~cypherturn.graph.GraphEngine` implementations.

    Subclasses supply the engine calls (``_run_read_only``, ``_run_trusted``,
    ``_graph_exists``, ``drop``, ``close``); this class adds the tokenizer layer
    of the read-only gate, argument checks, bulk load, introspection and counts.

    Args:
        graph: graph (FalkorDB key) or database (Neo4j) name.
        spec: the string that reopens this engine and graph (no secrets).
        timeout_s: default query timeout, seconds.
        row_cap: default row cap for ``execute``.
    """

    id_function = "id"
    """Cypher function returning an entity's engine id (used by bulk load)."""

    naive_datetimes = False
    """Whether the engine's datetimes are zone-less (see ``to_plain``)."""

    parameters_in_text = False
    """Whether parameters travel inside the query text (FalkorDB's ``CYPHER k=v`` prefix),
    so their values are checked like text (:func:`~cypherturn.graph._guard.find_parameter_problem`)."""

    def __init__(
        self,
        graph: str,
        spec: str,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        row_cap: int = DEFAULT_ROW_CAP,
    ) -> None:
        if not graph:
            raise ConfigError("graph name must not be empty")
        _check_limits(timeout_s, row_cap)
        self._graph_name = graph
        self._spec = spec
        self.timeout_s = timeout_s
        self.row_cap = row_cap

    @property
    def graph(self) -> str:
        """Name of the graph (FalkorDB key or Neo4j database) this engine talks to."""
        return self._graph_name

    @property
    def spec(self) -> str:
        """A string that reopens the same engine and graph (``open_engine(spec)``); no secrets."""
        return self._spec

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._spec!r})"

    # ------------------------------------------------------------------ engine calls

    @abstractmethod
    def _run_read_only(
        self, query: str, params: dict[str, Any], timeout_s: float, row_cap: int
    ) -> QueryResult:
        """Run untrusted Cypher in the engine's read-only mode (the final guard)."""

    @abstractmethod
    def _run_trusted(
        self, query: str, params: dict[str, Any], *, write: bool
    ) -> tuple[list[str], list[list[Any]]]:
        """Run trusted Cypher; return column names and raw driver rows (no cap, no timeout)."""

    @abstractmethod
    def _graph_exists(self) -> bool:
        """True when the graph (key or database) exists, even if empty."""

    @abstractmethod
    def _index_statement(self, label: str, key: str) -> str:
        """Cypher creating an index on quoted ``label`` and quoted property ``key``."""

    @abstractmethod
    def _pending_indexes(self) -> int:
        """Number of indexes of the graph the engine is still building."""

    @abstractmethod
    def drop(self) -> None:
        """Delete the whole graph (no error when it does not exist)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""

    # ------------------------------------------------------------------ protocol

    def execute(
        self,
        query: str,
        params: dict[str, Any] | None = None,
        *,
        timeout_s: float | None = None,
        row_cap: int | None = None,
    ) -> QueryResult:
        """Run untrusted (generated) Cypher read-only, under a timeout and a row cap.

        The read-only gate has two layers: a tokenizer that names the first
        write clause (:func:`~cypherturn.graph._guard.find_write_clause`), then
        the engine's own read-only mode. A query whose constant ``range`` calls
        would build more values than any timeout can interrupt is refused
        before it is sent (:func:`~cypherturn.graph._cost.check_cost`), with
        numeric parameters read as the constants the engine will substitute.
        Parameters are checked like the text, before anything else: every name
        an identifier, and where they travel inside the text (FalkorDB) every
        value one the engine reads back unchanged
        (:func:`~cypherturn.graph._guard.find_parameter_problem`); a NUL
        character in the text is refused, because the engine would read only
        the text before it. Control returns within
        :func:`~cypherturn.graph._engine.timeout_promise_s` of the limit on
        FalkorDB, whatever the query does.

        Args:
            query: Cypher text.
            params: query parameters.
            timeout_s: time limit in seconds (default: the engine's, 120 s).
            row_cap: rows kept (default 10,000); more set ``truncated``.

        Returns:
            Columns and plain-value rows (see :class:`QueryResult`).

        Raises:
            WriteRefusedError: the query would write; nothing was changed.
            QueryError: a parameter name that is not an identifier or a value the
                engine cannot take (the message names the parameter), a NUL
                character in the text, or an ``EXPLAIN``/``PROFILE`` prefix
                (FalkorDB would run the query, Neo4j return no rows), refused
                before it runs.
            QueryTimeoutError: it ran past the timeout and was stopped (or the client
                stopped waiting); :class:`~cypherturn.errors.QueryCostError`, a subclass,
                when it was refused before running.
            QueryError: any other engine refusal, classified, engine message verbatim.
            DatasetError: the graph does not exist.
            EngineConnectionError: the engine is unreachable.
            ConfigError: a non-positive timeout or negative row cap.
        """
        timeout = self.timeout_s if timeout_s is None else timeout_s
        cap = self.row_cap if row_cap is None else row_cap
        _check_limits(timeout, cap)
        values = params or {}
        problem = find_parameter_problem(values, values=self.parameters_in_text)
        if problem is not None:
            raise QueryError(problem, query)
        if NUL in query:
            raise QueryError(
                f"the query holds a NUL character at offset {query.index(NUL)}; the engine "
                "would read only the text before it",
                query,
            )
        clause = find_write_clause(query)
        if clause is not None:
            raise WriteRefusedError(
                f"{clause} is not allowed: generated queries run read-only", query, clause
            )
        prefix = find_plan_prefix(query)
        if prefix is not None:
            raise QueryError(f"{prefix} is not supported: send the query without {prefix}", query)
        check_cost(query, values)
        return self._run_read_only(query, values, timeout, cap)

    def write(self, query: str, params: dict[str, Any] | None = None) -> QueryResult:
        """Run trusted Cypher that may write (loaders, index creation); no cap, no timeout.

        Args:
            query: Cypher text from cypherturn's own code.
            params: query parameters.

        Returns:
            All rows, as plain values.

        Raises:
            QueryError: the engine refused the query (classified).
            EngineConnectionError: the engine is unreachable.
        """
        started = time.perf_counter()
        columns, rows = self._run_trusted(query, params or {}, write=True)
        naive = self.naive_datetimes
        return QueryResult.model_construct(
            columns=columns,
            rows=[[to_plain(value, naive) for value in row] for row in rows],
            truncated=False,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
        )

    def _read(self, query: str, params: dict[str, Any]) -> list[list[Any]]:
        return self._run_trusted(query, params, write=False)[1]

    def _write_rows(self, query: str, params: dict[str, Any]) -> list[list[Any]]:
        return self._run_trusted(query, params, write=True)[1]

    def load(self, data: GraphData, *, batch_size: int = 5_000, replace: bool = False) -> LoadStats:
        """Write a whole :class:`GraphData` with batched parameterised queries and its indexes.

        The graph becomes visible only when complete where the engine can swap a
        graph in one step (FalkorDB): the load goes to a staging graph, its counts
        are checked, and it replaces the graph atomically; an interrupted load
        leaves the graph as it was (docs/design/engine-reliability.md, "Nothing
        half-loaded"). Elsewhere it loads in place.

        Args:
            data: nodes, relationships and indexes (from a trusted loader).
            batch_size: rows per ``UNWIND`` batch.
            replace: replace the graph (kept servable until the swap where the
                engine swaps); without it a graph that already holds nodes is
                refused rather than doubled.

        Returns:
            Node and relationship counts read back from the engine, and wall time.

        Raises:
            ConfigError: ``batch_size`` < 1.
            DatasetError: the graph already holds nodes and ``replace`` is False,
                or ``data`` is malformed (duplicate keys, dangling endpoints, bad names
                or values).
            GraphError: the counts read back differ from ``data``.
            QueryError: the engine refused a load query.
        """
        if batch_size < 1:
            raise ConfigError(f"batch size must be >= 1, got {batch_size!r}")
        started = time.perf_counter()
        if not replace and self.exists():
            raise DatasetError(
                f"graph {self.graph!r} already holds {self.node_count()} nodes on {self.spec}; "
                "load with replace=True to overwrite it"
            )
        target = self._staging()
        try:
            if target is self and replace:
                self.drop()
            load_graph(
                target._write_rows,
                data,
                batch_size=batch_size,
                id_function=self.id_function,
                index_statement=target._index_statement,
            )
            target.await_indexes()
            nodes, relationships = target.node_count(), target.relationship_count()
            if (nodes, relationships) != (len(data.nodes), len(data.relationships)):
                raise GraphError(
                    f"graph {self.graph!r}: loaded {nodes} nodes and {relationships} relationships, "
                    f"expected {len(data.nodes)} and {len(data.relationships)}"
                )
            if target is not self:
                self._publish(target)
        except BaseException:
            if target is not self:
                target.drop()
            raise
        stats = LoadStats(
            graph=self.graph,
            nodes=nodes,
            relationships=relationships,
            seconds=time.perf_counter() - started,
        )
        log.info(
            "loaded graph %s: %d nodes, %d relationships in %.1f s",
            self.graph,
            nodes,
            relationships,
            stats.seconds,
        )
        return stats

    def _staging(self) -> EngineBase:
        """Where :meth:`load` writes: a fresh graph swapped in when complete, or this graph.

        An engine that can swap a whole graph in one step (FalkorDB: ``RENAME``)
        returns a new, empty staging graph, so a load that is interrupted (a
        signal, ``kill -9``, a failed write) leaves the served graph as it was and
        never half-written; :meth:`_publish` swaps the staging graph in. Engines
        without such a step (Neo4j) load in place: there, a graph found with
        other counts than its world's is refused at start
        (:func:`cypherturn.api.connect`).
        """
        return self

    def _publish(self, staging: EngineBase) -> None:
        """Make the complete ``staging`` graph this graph, in one step (see :meth:`_staging`)."""
        raise NotImplementedError(f"{type(self).__name__} loads in place")

    def await_indexes(self, timeout_s: float = _INDEX_WAIT_S) -> None:
        """Block until every index of the graph is built.

        Both engines build an index in the background after ``CREATE INDEX``
        returns, and a query planned while it is building scans instead: on
        FalkorDB the two plans can return different rows (a filter on a component
        of an indexed temporal value), so a gold result read before the index is
        ready would depend on timing.

        Args:
            timeout_s: longest wait, seconds.

        Raises:
            GraphError: an index is still building after ``timeout_s``.
            EngineConnectionError: the engine is unreachable.
        """
        if not self._graph_exists():
            return
        deadline = time.monotonic() + timeout_s
        while (pending := self._pending_indexes()) > 0:
            if time.monotonic() > deadline:
                raise GraphError(
                    f"graph {self.graph!r}: {pending} index(es) still building after {timeout_s:g} s"
                )
            time.sleep(_INDEX_POLL_S)

    def schema(self, *, sample: int = 1_000) -> GraphSchema:
        """Introspect labels, relationship types, property types, patterns and counts (no APOC).

        Args:
            sample: entities sampled per label and per type for property types.

        Returns:
            The schema (empty when the graph does not exist).
        """
        if not self._graph_exists():
            return GraphSchema()
        return introspect(self._read, sample=sample)

    def node_count(self) -> int:
        """Number of nodes in the graph (0 when it does not exist)."""
        if not self._graph_exists():
            return 0
        rows = self._read("MATCH (n) RETURN count(n)", {})
        return int(rows[0][0])

    def relationship_count(self) -> int:
        """Number of relationships in the graph (0 when it does not exist)."""
        if not self._graph_exists():
            return 0
        rows = self._read("MATCH ()-[r]->() RETURN count(r)", {})
        return int(rows[0][0])

    def exists(self) -> bool:
        """True when the graph holds at least one node."""
        return self._graph_exists() and bool(self._read("MATCH (n) RETURN 1 LIMIT 1", {}))

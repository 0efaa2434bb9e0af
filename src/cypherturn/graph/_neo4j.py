"""Neo4j engine over Bolt, with the official ``neo4j`` driver.

Untrusted Cypher passes three layers: the tokenizer gate (shared with every
engine), an ``EXPLAIN`` of the query whose summary must report query type
``r`` (read only), and execution in a session opened with READ access mode
(Neo4j refuses writes there). The timeout is the transaction timeout
(``Query(timeout=...)``); the row cap stops pulling records and discards the
rest on the server.

A server that answers ``EXPLAIN`` without a query type (FalkorDB's
experimental Bolt endpoint does so, executes the query instead of planning it,
and ignores the access mode and the transaction timeout) is detected once per
engine: the EXPLAIN layer is then skipped and logged, and the tokenizer gate is
what keeps such a server read-only (docs/design/engine-errors.md).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import neo4j
import neo4j.exceptions

from cypherturn.errors import DatasetError, EngineConnectionError, QueryError, WriteRefusedError
from cypherturn.graph._base import EngineBase
from cypherturn.graph._engine import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S
from cypherturn.graph._errors import neo4j_error, neo4j_notification_class
from cypherturn.graph._result import QueryResult
from cypherturn.graph._values import to_plain

__all__ = ["Neo4jEngine"]

log = logging.getLogger(__name__)

_NEO4J_PENDING = "SHOW INDEXES YIELD state WHERE state <> 'ONLINE' RETURN count(*)"
_FALKORDB_PENDING = "CALL db.indexes() YIELD status WHERE status <> 'OPERATIONAL' RETURN count(*)"

_READ_QUERY_TYPES = frozenset({"r"})
_CONNECTION_ERRORS = (
    neo4j.exceptions.ServiceUnavailable,
    neo4j.exceptions.SessionExpired,
    neo4j.exceptions.AuthError,
    neo4j.exceptions.ConnectionAcquisitionTimeoutError,
    OSError,
)


class Neo4jEngine(EngineBase):
    """A connection to one database on a Neo4j (or Bolt-speaking) server.

    Build it with :func:`~cypherturn.graph.open_engine` (``bolt://``,
    ``neo4j://``, ``+s``/``+ssc`` variants) rather than directly.

    Args:
        driver: a ``neo4j.Driver``; the engine closes it on :meth:`close`.
        database: the database name (``None``: the server's default database).
        spec: the string that reopens this engine (no password).
        timeout_s: default transaction timeout of ``execute``, seconds.
        row_cap: default row cap of ``execute``.
    """

    id_function = "elementId"
    naive_datetimes = False

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str | None,
        *,
        spec: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        row_cap: int = DEFAULT_ROW_CAP,
    ) -> None:
        super().__init__(database or "neo4j", spec, timeout_s=timeout_s, row_cap=row_cap)
        self._driver = driver
        self._database = database
        self._explain_reports_type: bool | None = None

    @property
    def explain_checked(self) -> bool | None:
        """Whether the EXPLAIN query-type layer is active (``None`` until first checked)."""
        return self._explain_reports_type

    # ------------------------------------------------------------------ engine calls

    def _session(self, write: bool) -> neo4j.Session:
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        return self._driver.session(database=self._database, default_access_mode=mode)

    def _fail(self, error: Exception, query: str) -> Exception:
        if isinstance(error, _CONNECTION_ERRORS):
            return EngineConnectionError(f"Neo4j at {self.spec} is unreachable: {error}")
        if isinstance(error, neo4j.exceptions.Neo4jError):
            code = error.code or ""
            if code.endswith("DatabaseNotFound"):
                return DatasetError(f"database {self.graph!r} does not exist on {self.spec}")
            return neo4j_error(code, error.message or str(error), query)
        return error

    def _explain_type(self, query: str, params: dict[str, Any]) -> str | None:
        with self._session(write=False) as session:
            summary = session.run(neo4j.Query("EXPLAIN " + query), params).consume()
        return summary.query_type

    def _check_read_only(self, query: str, params: dict[str, Any]) -> None:
        if self._explain_reports_type is None:
            self._explain_reports_type = self._explain_type("RETURN 1", {}) is not None
            if not self._explain_reports_type:
                log.warning(
                    "%s reports no query type for EXPLAIN (FalkorDB Bolt?); the read-only "
                    "gate relies on the tokenizer and READ access mode",
                    self.spec,
                )
        if not self._explain_reports_type:
            return
        query_type = self._explain_type(query, params)
        if query_type not in _READ_QUERY_TYPES:
            raise WriteRefusedError(
                f"query type {query_type!r} is not read-only: generated queries run read-only",
                query,
                # what the refusal names: EXPLAIN gives the query's type, not its clause
                clause=f"a query of type {query_type!r}",
            )

    def _log_notifications(self, summary: neo4j.ResultSummary) -> None:
        for status in summary.gql_status_objects:
            error_class = neo4j_notification_class(status.status_description)
            if error_class is not None:
                log.info(
                    "%s: %s (GQLSTATUS %s)",
                    error_class.value,
                    status.status_description,
                    status.gql_status,
                )

    def _run_read_only(
        self, query: str, params: dict[str, Any], timeout_s: float, row_cap: int
    ) -> QueryResult:
        started = time.perf_counter()
        try:
            self._check_read_only(query, params)
            with self._session(write=False) as session:
                result = session.run(neo4j.Query(query, timeout=timeout_s), params)
                columns = list(result.keys())
                rows: list[list[Any]] = []
                truncated = False
                for record in result:
                    if len(rows) >= row_cap:
                        truncated = True
                        break
                    rows.append([to_plain(value) for value in record.values()])
                self._log_notifications(result.consume())
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError) as e:
            raise self._fail(e, query) from e
        return QueryResult.model_construct(
            columns=columns,
            rows=rows,
            truncated=truncated,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
        )

    def _run_trusted(
        self, query: str, params: dict[str, Any], *, write: bool
    ) -> tuple[list[str], list[list[Any]]]:
        try:
            with self._session(write=write) as session:
                result = session.run(neo4j.Query(query), params)
                columns = list(result.keys())
                rows = [list(record.values()) for record in result]
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError) as e:
            raise self._fail(e, query) from e
        return columns, rows

    def _graph_exists(self) -> bool:
        # A session on a missing database fails with DatabaseNotFound (a DatasetError).
        try:
            self._run_trusted("RETURN 1", {}, write=False)
        except DatasetError:
            return False
        return True

    def _index_statement(self, label: str, key: str) -> str:
        return f"CREATE INDEX IF NOT EXISTS FOR (n:{label}) ON (n.{key})"

    def _pending_indexes(self) -> int:
        try:
            _, rows = self._run_trusted(_NEO4J_PENDING, {}, write=False)
        except QueryError:
            # FalkorDB's Bolt endpoint has no SHOW INDEXES; it answers its own procedure.
            _, rows = self._run_trusted(_FALKORDB_PENDING, {}, write=False)
        return int(rows[0][0])

    def drop(self) -> None:
        """Delete every node and relationship in batches, and the indexes on them.

        Neo4j Community has one user database that cannot be dropped, so the
        graph is emptied instead.

        Raises:
            EngineConnectionError: the server is unreachable.
            QueryError: the server refused the deletion.
        """
        if not self._graph_exists():
            return
        self._run_trusted(
            "MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS",
            {},
            write=True,
        )
        _, rows = self._run_trusted(
            "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name", {}, write=False
        )
        for (name,) in rows:
            self._run_trusted(f"DROP INDEX `{name}` IF EXISTS", {}, write=True)

    def close(self) -> None:
        """Close the driver and its connection pool."""
        self._driver.close()

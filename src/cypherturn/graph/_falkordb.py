"""FalkorDB engine over the Redis protocol, with the official ``falkordb`` client.

Untrusted Cypher runs with ``GRAPH.RO_QUERY`` (the server refuses any write),
a per-query ``timeout`` in milliseconds (the server aborts the query and keeps
serving), and a row cap pushed into the query as ``LIMIT cap + 1`` where that
is sound (:mod:`cypherturn.graph._rowcap`), so the engine stops early.

The server checks its timeout between records only; a single expression that
builds a huge list runs past it (docs/design/engine-reliability.md, "The
timeout is a promise"). So the client also keeps a
deadline, :func:`~cypherturn.graph._engine.timeout_promise_s` minus a margin
for decoding: it reads the reply with that socket timeout, on one pooled
connection, without redis-py's retries (by default redis-py re-sends a command
that timed out, up to three times, which ran the runaway query four times),
and on expiry drops the connection and raises :class:`QueryTimeoutError`.

Parameters travel inside the query text, as a ``CYPHER name=value ...``
prefix. That prefix is written here (:func:`_params_header`), not by the
client library: names must be identifiers and values ones the engine reads
back unchanged (:func:`~cypherturn.graph._guard.find_parameter_problem`), so
the prefix only ever binds values and the engine runs the query the guard read
(a crafted name ran another query than the one reported; docs/design/engine-reliability.md,
"Parameters are checked like the query"). For the same
reason a query text of its own starting with a ``CYPHER`` prefix is refused (it
would bind parameters the checks cannot see), and the text as sent, prefix and
pushed ``LIMIT`` included, passes the write guard once more.

Commands carry the client's cached schema ``version``: FalkorDB replies
``version mismatch`` when labels, types or property keys changed since (another
client reloaded the graph), the cache is refreshed and the query re-sent. The
``falkordb`` client's own ``query()`` skips this check, and a stale cache would
silently print the wrong label and property names.
"""

from __future__ import annotations

import logging
import math
import os
import socket
import time
import uuid
from collections.abc import Mapping
from typing import Any

import redis
from falkordb import FalkorDB, Graph
from falkordb.query_result import parse_scalar

from cypherturn.cypher import tokenize
from cypherturn.errors import (
    DatasetError,
    EngineConnectionError,
    QueryError,
    QueryTimeoutError,
    WriteRefusedError,
)
from cypherturn.graph._base import EngineBase
from cypherturn.graph._engine import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, timeout_promise_s
from cypherturn.graph._errors import falkordb_error
from cypherturn.graph._guard import (
    INT64_RANGE,
    MAX_PARAMETER_DEPTH,
    NUL,
    PARAMETER_NAME,
    find_parameter_problem,
    find_write_clause,
)
from cypherturn.graph._result import QueryResult
from cypherturn.graph._rowcap import push_row_cap
from cypherturn.graph._values import to_plain

__all__ = ["FalkorDBEngine"]

log = logging.getLogger(__name__)

_MISSING_GRAPH = "Invalid graph operation on empty key"
_STAGING = ".loading."
"""Infix of a staging graph's key (:meth:`FalkorDBEngine._staging`)."""
_HOST = socket.gethostname().replace(".", "-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_VERSION_MISMATCH = "version mismatch"
_ALREADY_INDEXED = "already indexed"
# Time kept, out of the promised return time, for decoding the rows and handing them back.
_DECODE_MARGIN_S = 0.25


class _NoLiteral(Exception):
    """A parameter the prefix cannot carry unchanged (``find_parameter_problem`` says which)."""


def _literal(value: Any, depth: int = 0) -> str:
    """``value`` as a Cypher literal of the parameter prefix.

    Checks as it writes, in one pass (loads send batches of thousands of rows):
    the rules are those of :func:`~cypherturn.graph._guard.find_parameter_problem`.

    Raises:
        _NoLiteral: the value has no literal the engine reads back unchanged.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not INT64_RANGE[0] <= value <= INT64_RANGE[1]:
            raise _NoLiteral
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NoLiteral
        return repr(value)
    if isinstance(value, str):
        if NUL in value:
            raise _NoLiteral
        # The engine reads \\ and \" inside a double-quoted string; nothing else is special.
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if depth >= MAX_PARAMETER_DEPTH:
        raise _NoLiteral
    if isinstance(value, Mapping):
        parts = []
        for key, item in value.items():
            if not isinstance(key, str) or not key or "`" in key or NUL in key:
                raise _NoLiteral
            parts.append(f"`{key}`:{_literal(item, depth + 1)}")
        return "{" + ",".join(parts) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_literal(item, depth + 1) for item in value) + "]"
    raise _NoLiteral


def _params_header(params: Mapping[str, Any], query: str = "") -> str:
    """The ``CYPHER name=value ... `` prefix that binds ``params`` (empty without any).

    Raises:
        QueryError: a name that is not an identifier or a value the prefix cannot
            carry unchanged; the message names the parameter. Checked on every
            path, trusted loads included, because the prefix is query text.
    """
    if not params:
        return ""
    try:
        parts = []
        for name, value in params.items():
            if not isinstance(name, str) or PARAMETER_NAME.fullmatch(name) is None:
                raise _NoLiteral
            parts.append(f"{name}={_literal(value)}")
    except _NoLiteral:
        problem = find_parameter_problem(params) or "a parameter cannot be sent to FalkorDB"
        raise QueryError(problem, query) from None
    return "CYPHER " + " ".join(parts) + " "


def _starts_with_prefix(query: str) -> bool:
    """True when the text opens with ``CYPHER``: on FalkorDB that binds parameters."""
    tokens = tokenize(query, lenient=True)
    return bool(tokens) and tokens[0].is_name("CYPHER")


class FalkorDBEngine(EngineBase):
    """A connection to one named graph on a FalkorDB server.

    Build it with :func:`~cypherturn.graph.open_engine` (embedded server or
    ``falkordb://`` / ``redis://`` URL) rather than directly.

    Args:
        client: a connected ``falkordb.FalkorDB`` client.
        graph: the graph key.
        spec: the string that reopens this engine (no password).
        timeout_s: default timeout of ``execute``, seconds.
        row_cap: default row cap of ``execute``.
        where: human-readable server address for error messages.
    """

    id_function = "id"
    naive_datetimes = True
    parameters_in_text = True

    def __init__(
        self,
        client: FalkorDB,
        graph: str,
        *,
        spec: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        row_cap: int = DEFAULT_ROW_CAP,
        where: str = "",
    ) -> None:
        super().__init__(graph, spec, timeout_s=timeout_s, row_cap=row_cap)
        self._client = client
        self._graph: Graph = client.select_graph(graph)
        self._where = where or spec

    @property
    def client(self) -> FalkorDB:
        """The underlying ``falkordb.FalkorDB`` client (for benchmarks and tools)."""
        return self._client

    # ------------------------------------------------------------------ engine calls

    def _send(self, args: list[Any], wait_s: float | None) -> Any:
        """Send one command; with ``wait_s``, give up reading the reply after that many seconds."""
        if wait_s is None:
            return self._client.execute_command(*args)
        pool = self._client.connection.connection_pool
        connection = pool.get_connection()
        try:
            connection.send_command(*args)
            return connection.read_response(timeout=max(wait_s, 0.01))
        finally:
            pool.release(connection)

    def _command(
        self,
        command: str,
        query: str,
        params: dict[str, Any],
        timeout_ms: int | None,
        *,
        wait_s: float | None = None,
    ) -> list[Any]:
        """Send one GRAPH command with the schema version; refresh and resend on mismatch.

        Args:
            wait_s: client-side deadline for the reply, seconds (``None``: wait forever).

        Raises:
            QueryTimeoutError: no reply within ``wait_s`` (the connection is dropped).
        """
        text = _params_header(params, query) + query
        started = time.monotonic()
        for _attempt in range(3):
            args: list[Any] = [
                command,
                self.graph,
                text,
                "--compact",
                "version",
                self._graph.schema.version,
            ]
            if timeout_ms is not None:
                args += ["timeout", timeout_ms]
            left = None if wait_s is None else wait_s - (time.monotonic() - started)
            try:
                response = self._send(args, left)
            except redis.TimeoutError as e:
                if wait_s is None:
                    raise EngineConnectionError(
                        f"FalkorDB at {self._where} is unreachable: {e}"
                    ) from e
                raise QueryTimeoutError(
                    f"Query timed out: the engine did not stop it within its {timeout_ms} ms "
                    f"limit; cypherturn gave up waiting after {wait_s:.2f} s",
                    query,
                ) from e
            except redis.ResponseError as e:
                raise self._error(str(e), query) from e
            except redis.ConnectionError as e:
                raise EngineConnectionError(f"FalkorDB at {self._where} is unreachable: {e}") from e
            if response and isinstance(response[0], redis.ResponseError):
                if str(response[0]) == _VERSION_MISMATCH:
                    self._graph.schema.refresh(int(response[1]))
                    continue
                raise self._error(str(response[0]), query)
            if response and isinstance(response[-1], redis.ResponseError):
                raise self._error(str(response[-1]), query)
            return list(response)
        raise QueryError(f"graph schema of {self.graph!r} kept changing during the query", query)

    def _error(self, message: str, query: str) -> Exception:
        if message == _MISSING_GRAPH:
            return DatasetError(f"graph {self.graph!r} does not exist on {self._where}")
        return falkordb_error(message, query)

    def _decode(
        self, response: list[Any], row_cap: int | None
    ) -> tuple[list[str], list[list[Any]], bool]:
        if len(response) < 3:
            return [], [], False
        columns = [str(column[1]) for column in response[0]]
        raw_rows = response[1]
        truncated = row_cap is not None and len(raw_rows) > row_cap
        if truncated:
            raw_rows = raw_rows[:row_cap]
        graph = self._graph
        rows = [[parse_scalar(cell, graph) for cell in row] for row in raw_rows]
        return columns, rows, truncated

    def _run_read_only(
        self, query: str, params: dict[str, Any], timeout_s: float, row_cap: int
    ) -> QueryResult:
        started = time.perf_counter()
        if _starts_with_prefix(query):
            raise QueryError(
                "a query may not start with CYPHER on FalkorDB: the prefix binds parameters "
                "the checks cannot see; pass them as params",
                query,
            )
        timeout_ms = max(1, round(timeout_s * 1000))
        wait_s = timeout_promise_s(timeout_s) - _DECODE_MARGIN_S
        capped = push_row_cap(query, row_cap)
        sent = _params_header(params, query) + capped.text
        clause = find_write_clause(sent)
        if clause is not None:
            # Unreachable while names are identifiers and values literals: kept so that
            # what is sent, not only what was read, passes the guard.
            raise WriteRefusedError(
                f"{clause} is not allowed: generated queries run read-only", query, clause
            )
        try:
            response = self._command(
                "GRAPH.RO_QUERY", capped.text, params, timeout_ms, wait_s=wait_s
            )
        except QueryError as e:
            # Errors carry the query as written, not as sent. The engine's message quotes the
            # query it got, so an error naming the pushed-in LIMIT is asked for again.
            e.query = query
            if (
                isinstance(e, QueryTimeoutError)
                or not capped.rewritten
                or f"LIMIT {capped.limit}" not in e.engine_message
            ):
                raise
            left = wait_s - (time.perf_counter() - started)
            response = self._command("GRAPH.RO_QUERY", query, params, timeout_ms, wait_s=left)
        columns, rows, truncated = self._decode(response, row_cap)
        return QueryResult.model_construct(
            columns=columns,
            rows=[[to_plain(value, True) for value in row] for row in rows],
            truncated=truncated,
            elapsed_ms=(time.perf_counter() - started) * 1000.0,
        )

    def _run_trusted(
        self, query: str, params: dict[str, Any], *, write: bool
    ) -> tuple[list[str], list[list[Any]]]:
        command = "GRAPH.QUERY" if write else "GRAPH.RO_QUERY"
        columns, rows, _ = self._decode(self._command(command, query, params, None), None)
        return columns, rows

    def _graph_exists(self) -> bool:
        try:
            return self.graph in self._client.list_graphs()
        except (redis.ConnectionError, redis.TimeoutError) as e:
            raise EngineConnectionError(f"FalkorDB at {self._where} is unreachable: {e}") from e

    def _index_statement(self, label: str, key: str) -> str:
        return f"CREATE INDEX FOR (n:{label}) ON (n.{key})"

    def _pending_indexes(self) -> int:
        rows = self._read(
            "CALL db.indexes() YIELD status WHERE status <> 'OPERATIONAL' RETURN count(*)", {}
        )
        return int(rows[0][0])

    def _write_rows(self, query: str, params: dict[str, Any]) -> list[list[Any]]:
        try:
            return super()._write_rows(query, params)
        except QueryError as e:
            # A graph emptied by hand keeps its indexes; re-creating one is harmless.
            if _ALREADY_INDEXED in e.engine_message and query.startswith("CREATE INDEX"):
                log.debug("index exists already: %s", query)
                return []
            raise

    def _staging(self) -> FalkorDBEngine:
        """A new, empty staging graph on the same server (see :meth:`EngineBase._staging`).

        Its key is ``<graph>.loading.<host>.<pid>.<random>``. A staging graph left by
        a loader that was killed is deleted first, when its process (on this host)
        is gone; a live loader's staging graph is left alone.
        """
        self._drop_stale_staging()
        name = f"{self.graph}{_STAGING}{_HOST}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        return FalkorDBEngine(
            self._client,
            name,
            spec=f"{self.spec}{_STAGING}",
            timeout_s=self.timeout_s,
            row_cap=self.row_cap,
            where=self._where,
        )

    def _publish(self, staging: EngineBase) -> None:
        """Swap the complete ``staging`` graph in with one ``RENAME`` (atomic on the server)."""
        try:
            self._client.connection.execute_command("RENAME", staging.graph, self.graph)
        except (redis.ConnectionError, redis.TimeoutError) as e:
            raise EngineConnectionError(f"FalkorDB at {self._where} is unreachable: {e}") from e
        self._graph.schema.clear()

    def _drop_stale_staging(self) -> None:
        prefix = f"{self.graph}{_STAGING}{_HOST}."
        try:
            graphs = self._client.list_graphs()
        except (redis.ConnectionError, redis.TimeoutError) as e:
            raise EngineConnectionError(f"FalkorDB at {self._where} is unreachable: {e}") from e
        for name in graphs:
            if not name.startswith(prefix):
                continue
            pid = name[len(prefix) :].split(".", 1)[0]
            if pid.isdigit() and not _alive(int(pid)):
                log.info("deleting %s, the staging graph of a load that did not finish", name)
                self._client.execute_command("GRAPH.DELETE", name)

    def drop(self) -> None:
        """Delete the whole graph key (no error when it does not exist).

        Raises:
            EngineConnectionError: the server is unreachable.
        """
        try:
            self._client.execute_command("GRAPH.DELETE", self.graph)
        except redis.ResponseError as e:
            if _MISSING_GRAPH not in str(e):
                raise falkordb_error(str(e), f"GRAPH.DELETE {self.graph}") from e
        except (redis.ConnectionError, redis.TimeoutError) as e:
            raise EngineConnectionError(f"FalkorDB at {self._where} is unreachable: {e}") from e
        self._graph.schema.clear()

    def ensure_graph(self) -> None:
        """Create the graph key if missing, so read queries work on an empty graph.

        Raises:
            EngineConnectionError: the server is unreachable.
        """
        if not self._graph_exists():
            self._command("GRAPH.QUERY", "RETURN 1", {}, None)

    def close(self) -> None:
        """Close the client's connections (an embedded server keeps running)."""
        self._client.close()

"""The MCP server: :class:`GraphService`'s four operations as tools of the official SDK's ``MCPServer``.

Built on ``mcp`` 2.x (``mcp.server.mcpserver.MCPServer``, formerly FastMCP).
Each tool has typed, described arguments: the SDK derives the input schema
from the signature and validates the arguments (a bad argument becomes a tool
error result, ``isError: true``, naming the field), and publishes the pydantic
result model as the tool's output schema.

Concurrency: each tool is an ``async`` function that runs its operation on a
worker thread of its own (:class:`_Workers`). Reads run side by side, up to the
service's engine connections; ``ask`` runs one at a time. A read that passes
its time limit (the engine's return promise for the call's timeout, plus a
margin) is abandoned: the client gets a tool error at once, and the thread ends
when the engine stops the query. Threads are abandoned on cancellation too, so
a client that disconnects, or a shutdown, never waits for an engine call.

Results: the structured content carries the result once, and the text content a
short summary (the query, the result's shape, the first rows, and the note when
rows were cut to the byte budget). The SDK's default sends the whole result
twice, as structured content and as JSON text, which made results over about
0.5 MB exceed the client's 1 MiB event limit (issue 43).

A :class:`~cypherturn.errors.CypherTurnError` raised by a tool (an unknown
label, a refused write, an engine error, a model failure) is re-raised as the
SDK's ``ToolError``, so the assistant reads the message; any other exception
is reported by the SDK as ``Error executing tool NAME`` and logged with its
traceback. Neither stops the server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from cypherturn.errors import CypherTurnError
from cypherturn.graph import timeout_promise_s
from cypherturn.mcp_server._limits import (
    MAX_LABELS,
    MAX_NAME_CHARS,
    MAX_PARAMS_BYTES,
    MAX_QUERY_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TEXT_CHARS,
)
from cypherturn.mcp_server._results import (
    AskResult,
    ReadResult,
    SchemaView,
    SearchResult,
    ToolResult,
)
from cypherturn.mcp_server._service import GraphService
from cypherturn.mcp_server._shutdown import Shutdown

__all__ = ["SERVER_NAME", "TOOL_NAMES", "build_server", "serve"]

SERVER_NAME = "cypherturn"
"""The server's name in the MCP ``initialize`` handshake."""

TOOL_NAMES = ("get_schema", "search_values", "read_cypher", "ask")
"""Every tool the server exposes; none of them writes."""

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
_INSTRUCTIONS = (
    "Read-only access to one property graph. Call get_schema first (pass labels to see only "
    "part of a big schema), search_values to find how a value is stored, read_cypher to run "
    "a Cypher query (writes are refused; the schema check and its repairs are reported), "
    "and ask to have a local model write and run the query for a plain-language question."
)


# Time a read call may take beyond the engine's return promise: the schema check, the
# value lookups and the encoding of the result.
_CALL_MARGIN_S = 1.0

_R = TypeVar("_R", bound=ToolResult)


class _Workers:
    """Where tool operations run: reads side by side, ``ask`` one at a time, all abandonable.

    Args:
        reads: reads running at once (the service's engine connections; more
            would only wait for a connection on a thread).
    """

    def __init__(self, reads: int) -> None:
        self._reads = anyio.CapacityLimiter(reads)
        self._model = anyio.CapacityLimiter(1)

    async def read(self, tool: str, operation: Callable[[], _R], limit_s: float) -> CallToolResult:
        """Run a read on a worker thread; past ``limit_s`` abandon it and report a tool error."""
        with anyio.move_on_after(limit_s):
            return await self._run(operation, self._reads)
        # Only the deadline leaves the block without a result or an exception.
        raise ToolError(
            f"{tool} ran past its time limit of {limit_s:.1f} s and was abandoned; "
            "narrow the query or lower its cost"
        )

    async def model(self, operation: Callable[[], _R]) -> CallToolResult:
        """Run an ``ask`` on a worker thread, one at a time (the model decodes one prompt)."""
        return await self._run(operation, self._model)

    async def _run(
        self, operation: Callable[[], _R], limiter: anyio.CapacityLimiter
    ) -> CallToolResult:
        # abandon_on_cancel: a thread blocked on the engine or the model cannot be
        # interrupted, and a cancelled call (client gone, shutdown) must not wait for it.
        return await anyio.to_thread.run_sync(
            lambda: _structured(operation), abandon_on_cancel=True, limiter=limiter
        )


def _structured(operation: Callable[[], _R]) -> CallToolResult:
    """Run a tool's operation: its model once as structured content, its summary as text.

    The JSON is built here, on the worker thread, so a large result does not hold
    the event loop that serves the other clients. A CypherTurnError becomes the
    SDK's ToolError (message kept).
    """
    try:
        result = operation()
    except CypherTurnError as e:
        raise ToolError(str(e)) from e
    return CallToolResult(
        content=[TextContent(type="text", text=result.summary())],
        structured_content=result.model_dump(mode="json"),
    )


def build_server(
    service: GraphService, *, with_ask: bool = True, log_level: str = "WARNING"
) -> MCPServer[Any]:
    """An ``MCPServer`` exposing :data:`TOOL_NAMES` on ``service``.

    Args:
        service: the graph and limits the tools act on.
        with_ask: expose the ``ask`` tool (it needs ``service.model``).
        log_level: the SDK's log level (its handler writes to stderr).

    Returns:
        The server; run it with :func:`serve`.
    """
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = (
        log_level if log_level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL") else "WARNING"  # type: ignore[assignment]
    )
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        instructions=_INSTRUCTIONS,
        log_level=level,
    )
    workers = _Workers(service.connections)
    _add_lookup_tools(server, service, workers)
    _add_read_cypher(server, service, workers)
    if with_ask:
        _add_ask(server, service, workers)
    return server


def _call_limit(service: GraphService, timeout_s: float | None) -> float:
    """Seconds a read call may take: the engine's promise for its timeout, and a margin."""
    asked = service.timeout_s if timeout_s is None else min(timeout_s, service.timeout_s)
    return timeout_promise_s(asked) + _CALL_MARGIN_S


def _add_lookup_tools(server: MCPServer[Any], service: GraphService, workers: _Workers) -> None:
    """Register ``get_schema`` and ``search_values`` on ``server``."""

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    async def get_schema(
        labels: Annotated[
            list[str] | None,
            Field(
                description=f"Only these labels (at most {MAX_LABELS}), their relationship "
                "patterns and properties."
            ),
        ] = None,
    ) -> Annotated[CallToolResult, SchemaView]:
        """The graph's node labels, relationship types, patterns and property keys with types."""
        return await workers.read(
            "get_schema", lambda: service.get_schema(labels), _call_limit(service, None)
        )

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    async def search_values(
        key: Annotated[
            str,
            Field(
                min_length=1,
                description=f"A property key, e.g. name (at most {MAX_NAME_CHARS} characters).",
            ),
        ],
        text: Annotated[
            str,
            Field(
                min_length=1,
                description=f"The text to look for (at most {MAX_TEXT_CHARS:,} characters).",
            ),
        ],
        label: Annotated[
            str | None, Field(description="Only this label or relationship type.")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Most values per label.")] = 5,
    ) -> Annotated[CallToolResult, SearchResult]:
        """The stored values of a property nearest to a text (case, prefix, contains, spelling)."""
        return await workers.read(
            "search_values",
            lambda: service.search_values(key, text, label, limit),
            timeout_promise_s(service.timeout_s) + _CALL_MARGIN_S,
        )


def _add_read_cypher(server: MCPServer[Any], service: GraphService, workers: _Workers) -> None:
    """Register ``read_cypher`` on ``server``."""

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    async def read_cypher(
        query: Annotated[
            str,
            Field(
                min_length=1,
                description=f"A read-only Cypher query (at most {MAX_QUERY_CHARS:,} characters).",
            ),
        ],
        params: Annotated[
            dict[str, Any] | None,
            Field(
                description="Query parameters ($name -> value); names are identifiers, "
                f"at most {MAX_PARAMS_BYTES:,} bytes of JSON."
            ),
        ] = None,
        timeout_s: Annotated[
            float | None, Field(gt=0, description="Time limit, seconds (at most the server's).")
        ] = None,
        row_cap: Annotated[
            int | None, Field(ge=1, description="Rows kept (at most the server's).")
        ] = None,
        repair: Annotated[
            bool, Field(description="Apply the unambiguous schema and value repairs.")
        ] = True,
    ) -> Annotated[CallToolResult, ReadResult]:
        """Run Cypher read-only: schema check, deterministic repairs, timeout, row cap. Writes are refused.

        Large results are cut to a byte budget; the result then says how many rows were shown.
        """
        return await workers.read(
            "read_cypher",
            lambda: service.read_cypher(
                query, params, timeout_s=timeout_s, row_cap=row_cap, repair=repair
            ),
            _call_limit(service, timeout_s),
        )


def _add_ask(server: MCPServer[Any], service: GraphService, workers: _Workers) -> None:
    """Register ``ask`` on ``server`` (it needs ``service.model``)."""

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    async def ask(
        question: Annotated[
            str,
            Field(
                min_length=1,
                description=f"The question, in plain language (at most {MAX_QUESTION_CHARS:,} characters).",
            ),
        ],
        budget: Annotated[
            int | None, Field(ge=1, le=10, description="Most attempts (default the server's).")
        ] = None,
    ) -> Annotated[CallToolResult, AskResult]:
        """Answer a question: a local model writes Cypher (grounded RAS, ras+), run read-only."""
        return await workers.model(lambda: service.ask(question, budget))


class _UvicornServer:
    """Builds a ``uvicorn.Server`` that leaves SIGINT and SIGTERM to :class:`Shutdown`.

    uvicorn installs its own handlers while it serves, waits for open
    connections and in-flight requests on the first signal, and re-raises the
    signal afterwards; a tool call blocked on the engine kept it waiting until
    the query's timeout, and a second Ctrl-C did nothing (issue 43).
    """

    @staticmethod
    def make(app: Any, host: str, port: int, log_level: str) -> Any:
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

            def install_signal_handlers(self) -> None:  # uvicorn < 0.29
                return

        return Server(uvicorn.Config(app, host=host, port=port, log_level=log_level))


def serve(
    server: MCPServer[Any],
    *,
    transport: Literal["stdio", "streamable-http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    shutdown: Shutdown | None = None,
) -> None:
    """Run the server until its client disconnects (stdio), or a signal stops it.

    Args:
        server: from :func:`build_server`.
        transport: ``stdio`` (the client spawned this process) or
            ``streamable-http`` (endpoint ``http://HOST:PORT/mcp``).
        host: the interface to listen on (HTTP); on ``127.0.0.1``/``localhost``
            the SDK turns on DNS-rebinding protection.
        port: the TCP port (HTTP).
        shutdown: owns SIGINT and SIGTERM (installed by the caller); over HTTP
            its first signal makes the server stop accepting and finish quick
            requests. ``None``: signals keep their handlers (uvicorn's own are
            bypassed either way).
    """
    if transport == "stdio":
        server.run("stdio")
        return
    app = server.streamable_http_app(host=host)
    http = _UvicornServer.make(app, host, port, server.settings.log_level.lower())
    if shutdown is not None:

        def stop() -> None:
            http.should_exit = True

        shutdown.on_stop(stop)
    anyio.run(http.serve)

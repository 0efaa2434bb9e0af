"""The MCP server: :class:`GraphService`'s four operations as tools of the official SDK's ``MCPServer``.

Built on ``mcp`` 2.x (``mcp.server.mcpserver.MCPServer``, formerly FastMCP).
Each tool is a synchronous function with typed, described arguments: the SDK
derives the input schema from the signature, validates the arguments (a bad
argument becomes a tool error result, ``isError: true``, naming the field),
runs the function on a worker thread, and publishes the pydantic return type
as the tool's output schema, returning the result as ``structuredContent``
(and as JSON text for clients that read only ``content``).

A :class:`~cypherturn.errors.CypherTurnError` raised by a tool (an unknown
label, a refused write, an engine error, a model failure) is re-raised as the
SDK's ``ToolError``, so the assistant reads the message; any other exception
is reported by the SDK as ``Error executing tool NAME`` and logged with its
traceback. Neither stops the server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from cypherturn.errors import CypherTurnError
from cypherturn.mcp_server._service import (
    AskResult,
    GraphService,
    ReadResult,
    SchemaView,
    SearchResult,
)

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

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def get_schema(
        labels: Annotated[
            list[str] | None,
            Field(description="Only these labels, their relationship patterns and properties."),
        ] = None,
    ) -> SchemaView:
        """The graph's node labels, relationship types, patterns and property keys with types."""
        return _call(lambda: service.get_schema(labels))

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def search_values(
        key: Annotated[str, Field(min_length=1, description="A property key, e.g. name.")],
        text: Annotated[str, Field(min_length=1, description="The text to look for.")],
        label: Annotated[
            str | None, Field(description="Only this label or relationship type.")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=50, description="Most values per label.")] = 5,
    ) -> SearchResult:
        """The stored values of a property nearest to a text (case, prefix, contains, spelling)."""
        return _call(lambda: service.search_values(key, text, label, limit))

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def read_cypher(
        query: Annotated[str, Field(min_length=1, description="A read-only Cypher query.")],
        params: Annotated[
            dict[str, Any] | None, Field(description="Query parameters ($name -> value).")
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
    ) -> ReadResult:
        """Run Cypher read-only: schema check, deterministic repairs, timeout, row cap. Writes are refused."""
        return _call(
            lambda: service.read_cypher(
                query, params, timeout_s=timeout_s, row_cap=row_cap, repair=repair
            )
        )

    if not with_ask:
        return server

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def ask(
        question: Annotated[
            str, Field(min_length=1, description="The question, in plain language.")
        ],
        budget: Annotated[
            int | None, Field(ge=1, le=10, description="Most attempts (default the server's).")
        ] = None,
    ) -> AskResult:
        """Answer a question: a local model writes Cypher (grounded RAS, ras+), run read-only."""
        return _call(lambda: service.ask(question, budget))

    return server


_T = TypeVar("_T")


def _call(operation: Callable[[], _T]) -> _T:
    """Run one tool's operation; a CypherTurnError becomes the SDK's ToolError (message kept)."""
    try:
        return operation()
    except CypherTurnError as e:
        raise ToolError(str(e)) from e


def serve(
    server: MCPServer[Any],
    *,
    transport: Literal["stdio", "streamable-http"] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
) -> None:
    """Run the server until its client disconnects (stdio) or it is interrupted (HTTP).

    Args:
        server: from :func:`build_server`.
        transport: ``stdio`` (the client spawned this process) or
            ``streamable-http`` (endpoint ``http://HOST:PORT/mcp``).
        host: the interface to listen on (HTTP); on ``127.0.0.1``/``localhost``
            the SDK turns on DNS-rebinding protection.
        port: the TCP port (HTTP).
    """
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)

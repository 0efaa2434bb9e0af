"""``cypherturn mcp``: a read-only MCP server on one graph (official ``mcp`` SDK, stdio or HTTP).

Four safe tools, no write tool: ``get_schema`` (optionally projected on some
labels), ``search_values`` (the nearest stored values of a property),
``read_cypher`` (read-only execution with the timeout, the row cap, the schema
check and its deterministic repairs) and ``ask`` (the grounded ``ras+``
strategy). :class:`GraphService` is the tools' logic without MCP, safe to call
from many threads: reads run side by side on a pool of engine connections,
inputs are capped and rows cut to :data:`DEFAULT_RESULT_BYTES` with a note;
:func:`build_server` wraps it in the SDK's ``MCPServer``. The SDK is the
``mcp`` extra (``pip install 'cypherturn[mcp]'``); importing
:mod:`cypherturn.mcp_server._server` without it raises ``ImportError``.
"""

from cypherturn.mcp_server._limits import DEFAULT_CONNECTIONS, DEFAULT_RESULT_BYTES
from cypherturn.mcp_server._service import (
    ASK_STRATEGY,
    AskAttempt,
    AskResult,
    FindingView,
    GraphService,
    LabelView,
    PatternView,
    ReadResult,
    RelationshipTypeView,
    SchemaView,
    SearchResult,
    StoredValue,
    ToolInputError,
    ToolResult,
    ValueMatches,
)

__all__ = [
    "ASK_STRATEGY",
    "DEFAULT_CONNECTIONS",
    "DEFAULT_RESULT_BYTES",
    "AskAttempt",
    "AskResult",
    "FindingView",
    "GraphService",
    "LabelView",
    "PatternView",
    "ReadResult",
    "RelationshipTypeView",
    "SchemaView",
    "SearchResult",
    "StoredValue",
    "ToolInputError",
    "ToolResult",
    "ValueMatches",
]

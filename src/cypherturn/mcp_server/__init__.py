"""``cypherturn mcp``: a read-only MCP server on one graph (official ``mcp`` SDK, stdio or HTTP).

Four safe tools, no write tool: ``get_schema`` (optionally projected on some
labels), ``search_values`` (the nearest stored values of a property),
``read_cypher`` (read-only execution with the timeout, the row cap, the schema
check and its deterministic repairs) and ``ask`` (the grounded ``ras+``
strategy). :class:`GraphService` is the tools' logic without MCP, safe to call
from many threads: reads run side by side on a pool of engine connections,
inputs are capped and rows cut to :data:`DEFAULT_RESULT_BYTES` with a note;
:func:`build_server` wraps it in the SDK's ``MCPServer`` and :func:`serve` runs
it, under :class:`Shutdown`. The SDK is the ``mcp`` extra (``pip install
'cypherturn[mcp]'``), so :func:`build_server`, :func:`serve` and
:data:`TOOL_NAMES` are imported on first use: without the SDK, importing one of
them raises the SDK's ``ImportError``, and the rest of the package still works.
"""

from typing import TYPE_CHECKING, Any

from cypherturn.mcp_server._inputs import ToolInputError
from cypherturn.mcp_server._limits import DEFAULT_CONNECTIONS, DEFAULT_RESULT_BYTES
from cypherturn.mcp_server._results import (
    AskAttempt,
    AskResult,
    FindingView,
    LabelView,
    PatternView,
    ReadResult,
    RelationshipTypeView,
    SchemaView,
    SearchResult,
    StoredValue,
    ToolResult,
    ValueMatches,
)
from cypherturn.mcp_server._service import ASK_STRATEGY, GraphService
from cypherturn.mcp_server._shutdown import Shutdown

if TYPE_CHECKING:
    from cypherturn.mcp_server._server import TOOL_NAMES, build_server, serve

__all__ = [
    "ASK_STRATEGY",
    "DEFAULT_CONNECTIONS",
    "DEFAULT_RESULT_BYTES",
    "TOOL_NAMES",
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
    "Shutdown",
    "StoredValue",
    "ToolInputError",
    "ToolResult",
    "ValueMatches",
    "build_server",
    "serve",
]

_NEEDS_SDK = frozenset({"TOOL_NAMES", "build_server", "serve"})


def __getattr__(name: str) -> Any:
    """The names of ``_server`` on first use: it imports the optional ``mcp`` SDK."""
    if name in _NEEDS_SDK:
        from cypherturn.mcp_server import _server

        return getattr(_server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

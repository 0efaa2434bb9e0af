"""Graph engines behind one interface: embedded FalkorDB (default), FalkorDB by URL, Neo4j over Bolt."""

from cypherturn.graph._data import GraphData, LoadStats, NodeRecord, RelationshipRecord
from cypherturn.graph._dialect import (
    FALKORDB_DIALECT,
    PLAN_PREFIXES,
    TEMPORAL_COMPONENTS,
    Dialect,
    Quirk,
)
from cypherturn.graph._embedded import EmbeddedFalkorDB, default_data_dir
from cypherturn.graph._embedded_discovery import (
    EmbeddedServerStatus,
    find_embedded_servers,
    stop_leftover_servers,
)
from cypherturn.graph._engine import (
    DEFAULT_ROW_CAP,
    DEFAULT_TIMEOUT_S,
    GraphEngine,
    timeout_promise_s,
)
from cypherturn.graph._falkordb import FalkorDBEngine
from cypherturn.graph._guard import NUL, find_parameter_problem, find_plan_prefix, find_write_clause
from cypherturn.graph._introspect import cypher_name, render_schema_prompt
from cypherturn.graph._load import quote_name
from cypherturn.graph._neo4j import Neo4jEngine
from cypherturn.graph._open import (
    ENGINE_SCHEMES,
    EngineOpener,
    EngineOptions,
    embedded_server,
    open_engine,
    register_engine_scheme,
)
from cypherturn.graph._result import QueryResult
from cypherturn.graph._schema import (
    GraphSchema,
    LabelSchema,
    RelationshipPattern,
    RelationshipTypeSchema,
)
from cypherturn.graph._values import to_plain

__all__ = [
    "DEFAULT_ROW_CAP",
    "DEFAULT_TIMEOUT_S",
    "ENGINE_SCHEMES",
    "FALKORDB_DIALECT",
    "NUL",
    "PLAN_PREFIXES",
    "TEMPORAL_COMPONENTS",
    "Dialect",
    "EmbeddedFalkorDB",
    "EmbeddedServerStatus",
    "EngineOpener",
    "EngineOptions",
    "FalkorDBEngine",
    "GraphData",
    "GraphEngine",
    "GraphSchema",
    "LabelSchema",
    "LoadStats",
    "Neo4jEngine",
    "NodeRecord",
    "QueryResult",
    "Quirk",
    "RelationshipPattern",
    "RelationshipRecord",
    "RelationshipTypeSchema",
    "cypher_name",
    "default_data_dir",
    "embedded_server",
    "find_embedded_servers",
    "find_parameter_problem",
    "find_plan_prefix",
    "find_write_clause",
    "open_engine",
    "quote_name",
    "register_engine_scheme",
    "render_schema_prompt",
    "stop_leftover_servers",
    "timeout_promise_s",
    "to_plain",
]

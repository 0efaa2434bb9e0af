"""Graph engines behind one interface: embedded FalkorDB (default), FalkorDB by URL, Neo4j over Bolt."""

from cypherturn.graph._data import GraphData, LoadStats, NodeRecord, RelationshipRecord
from cypherturn.graph._embedded import EmbeddedFalkorDB, default_data_dir
from cypherturn.graph._engine import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, GraphEngine
from cypherturn.graph._falkordb import FalkorDBEngine
from cypherturn.graph._guard import find_write_clause
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
    "EmbeddedFalkorDB",
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
    "RelationshipPattern",
    "RelationshipRecord",
    "RelationshipTypeSchema",
    "cypher_name",
    "default_data_dir",
    "embedded_server",
    "find_write_clause",
    "open_engine",
    "quote_name",
    "register_engine_scheme",
    "render_schema_prompt",
    "to_plain",
]

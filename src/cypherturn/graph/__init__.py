"""Graph engines behind one interface: embedded FalkorDB (default), FalkorDB by URL, Neo4j over Bolt."""

from cypherturn.graph._data import GraphData, LoadStats, NodeRecord, RelationshipRecord
from cypherturn.graph._engine import DEFAULT_ROW_CAP, DEFAULT_TIMEOUT_S, GraphEngine
from cypherturn.graph._result import QueryResult
from cypherturn.graph._schema import GraphSchema, LabelSchema, RelationshipPattern, RelationshipTypeSchema

__all__ = [
    "DEFAULT_ROW_CAP",
    "DEFAULT_TIMEOUT_S",
    "GraphData",
    "GraphEngine",
    "GraphSchema",
    "LabelSchema",
    "LoadStats",
    "NodeRecord",
    "QueryResult",
    "RelationshipPattern",
    "RelationshipTypeSchema",
]

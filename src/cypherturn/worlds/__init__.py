"""Graph sources: public datasets (POLE, Healthcare) and synthetic worlds (CypherTurn §2.1, Fraud)."""

from cypherturn.worlds._base import World, WorldInfo
from cypherturn.worlds._cypher_script import parse_cypher_script
from cypherturn.worlds._export import GraphFileHeader, read_graph_jsonl, write_graph_jsonl
from cypherturn.worlds._load import check_complete, load_world
from cypherturn.worlds._official import (
    OfficialSchema,
    load_official_graph,
    read_official_graph,
    read_official_schema,
)
from cypherturn.worlds._registry import (
    WorldFactory,
    get_world,
    list_worlds,
    register_world,
    registered_world,
    unregister_world,
    world_names,
)
from cypherturn.worlds._synthetic import (
    GraphBuilder,
    PropertyType,
    SyntheticWorld,
    WorldSpec,
    check_conformance,
    spread,
)
from cypherturn.worlds._world_data import WorldData, load_world_data

__all__ = [
    "GraphBuilder",
    "GraphFileHeader",
    "OfficialSchema",
    "PropertyType",
    "SyntheticWorld",
    "World",
    "WorldData",
    "WorldFactory",
    "WorldInfo",
    "WorldSpec",
    "check_complete",
    "check_conformance",
    "get_world",
    "list_worlds",
    "load_official_graph",
    "load_world",
    "load_world_data",
    "parse_cypher_script",
    "read_graph_jsonl",
    "read_official_graph",
    "read_official_schema",
    "register_world",
    "registered_world",
    "spread",
    "unregister_world",
    "world_names",
    "write_graph_jsonl",
]

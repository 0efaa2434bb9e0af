"""Graph sources: public datasets (POLE, Healthcare) and synthetic worlds (CypherTurn §2.1, Fraud)."""

from cypherturn.worlds._base import World, WorldInfo
from cypherturn.worlds._cypher_script import parse_cypher_script
from cypherturn.worlds._export import GraphFileHeader, read_graph_jsonl, write_graph_jsonl
from cypherturn.worlds._load import load_world
from cypherturn.worlds._official import (
    OfficialSchema,
    load_official_graph,
    read_official_graph,
    read_official_schema,
)
from cypherturn.worlds._registry import get_world, list_worlds, world_names
from cypherturn.worlds._synthetic import PropertyType, SyntheticWorld, WorldSpec, check_conformance

__all__ = [
    "GraphFileHeader",
    "OfficialSchema",
    "PropertyType",
    "SyntheticWorld",
    "World",
    "WorldInfo",
    "WorldSpec",
    "check_conformance",
    "get_world",
    "list_worlds",
    "load_official_graph",
    "load_world",
    "parse_cypher_script",
    "read_graph_jsonl",
    "read_official_graph",
    "read_official_schema",
    "world_names",
    "write_graph_jsonl",
]

"""Graph schema: labels, relationship types, property types and the patterns that occur.

The prompt rendering follows the node-properties / relationship-properties /
relationships layout used by LangChain's ``Neo4jGraph.get_structured_schema``
and the Text2Cypher datasets that were built with it, which is also the schema
injection of the RAS paper (§4.4, GraphCypherQAChain).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["GraphSchema", "LabelSchema", "RelationshipPattern", "RelationshipTypeSchema"]

SCHEMA_VERSION = 1


class LabelSchema(BaseModel):
    """One node label."""

    label: str
    count: int = Field(description="Number of nodes carrying this label.")
    properties: dict[str, str] = Field(
        default_factory=dict,
        description="Property key -> value type name (STRING, INTEGER, FLOAT, BOOLEAN, DATE, LIST, ...).",
    )


class RelationshipTypeSchema(BaseModel):
    """One relationship type."""

    type: str
    count: int = Field(description="Number of relationships of this type.")
    properties: dict[str, str] = Field(
        default_factory=dict, description="Property key -> value type name."
    )


class RelationshipPattern(BaseModel):
    """A ``(source label)-[TYPE]->(target label)`` pattern that occurs in the graph."""

    source: str
    type: str
    target: str


class GraphSchema(BaseModel):
    """The schema of a loaded graph, as introspected or as declared by a world."""

    schema_version: int = SCHEMA_VERSION
    labels: list[LabelSchema] = Field(default_factory=list)
    relationship_types: list[RelationshipTypeSchema] = Field(default_factory=list)
    patterns: list[RelationshipPattern] = Field(default_factory=list)

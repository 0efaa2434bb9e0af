"""Schema introspection without APOC, and the schema text given to Text2Cypher models.

:func:`introspect` uses only procedures and clauses that FalkorDB and Neo4j
share: complete label and relationship-type lists (``db.labels()``,
``db.relationshipTypes()``), exact counts per label and type, property keys and
value types sampled from up to ``sample`` entities per label or type, and every
``(source label)-[TYPE]->(target label)`` pattern that occurs, found by one
aggregation over all relationships (about 0.1 s for 100k relationships on
FalkorDB).

:func:`render_schema_prompt` writes the schema in the node-properties /
relationship-properties / relationships layout of LangChain's ``Neo4jGraph``
schema string, the form Text2Cypher models were trained on and the schema
injection of the RAS paper (§4.4).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from cypherturn.graph._load import quote_name
from cypherturn.graph._schema import (
    GraphSchema,
    LabelSchema,
    RelationshipPattern,
    RelationshipTypeSchema,
)
from cypherturn.graph._values import type_name

__all__ = ["introspect", "render_schema_prompt"]

ReadFn = Callable[[str, dict[str, Any]], list[list[Any]]]


def _property_types(maps: list[Any]) -> dict[str, str]:
    """Most frequent non-null type per key over sampled property maps (ties: name order)."""
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for properties in maps:
        if not isinstance(properties, Mapping):
            continue
        for key, value in properties.items():
            if value is not None:
                seen[str(key)][type_name(value)] += 1
    return {
        key: min(counts.items(), key=lambda item: (-item[1], item[0]))[0]
        for key, counts in sorted(seen.items())
    }


def _scalar(rows: list[list[Any]]) -> int:
    return int(rows[0][0]) if rows and rows[0] else 0


def introspect(read: ReadFn, *, sample: int = 1_000) -> GraphSchema:
    """Introspect a graph through a trusted read function.

    Args:
        read: runs one trusted read query with parameters and returns raw rows
            (driver values, before :func:`~cypherturn.graph._values.to_plain`).
        sample: entities sampled per label and per relationship type for
            property keys and types (>= 1).

    Returns:
        The schema; labels, types and patterns sorted by name.
    """
    limit = max(1, int(sample))
    labels = sorted(str(row[0]) for row in read("CALL db.labels()", {}))
    types = sorted(str(row[0]) for row in read("CALL db.relationshipTypes()", {}))
    label_schemas = []
    for label in labels:
        quoted = quote_name(label)
        count = _scalar(read(f"MATCH (n:{quoted}) RETURN count(n)", {}))
        maps = read(f"MATCH (n:{quoted}) WITH n LIMIT {limit} RETURN properties(n)", {})
        label_schemas.append(
            LabelSchema(label=label, count=count, properties=_property_types([m[0] for m in maps]))
        )
    type_schemas = []
    for rel_type in types:
        quoted = quote_name(rel_type)
        count = _scalar(read(f"MATCH ()-[r:{quoted}]->() RETURN count(r)", {}))
        maps = read(f"MATCH ()-[r:{quoted}]->() WITH r LIMIT {limit} RETURN properties(r)", {})
        type_schemas.append(
            RelationshipTypeSchema(
                type=rel_type, count=count, properties=_property_types([m[0] for m in maps])
            )
        )
    triples: set[tuple[str, str, str]] = set()
    for sources, rel_type, targets in read(
        "MATCH (a)-[r]->(b) RETURN DISTINCT labels(a), type(r), labels(b)", {}
    ):
        for source in sources or ():
            for target in targets or ():
                triples.add((str(source), str(rel_type), str(target)))
    patterns = [
        RelationshipPattern(source=source, type=rel_type, target=target)
        for source, rel_type, target in sorted(triples)
    ]
    return GraphSchema(labels=label_schemas, relationship_types=type_schemas, patterns=patterns)


def _properties_line(name: str, properties: dict[str, str]) -> str:
    return f"{name} {{" + ", ".join(f"{key}: {kind}" for key, kind in properties.items()) + "}"


def render_schema_prompt(schema: GraphSchema) -> str:
    """Write a schema as the compact text Text2Cypher prompts embed.

    The layout is exactly LangChain ``Neo4jGraph``'s structured-schema string::

        Node properties:
        Person {name: STRING, born: INTEGER}
        Relationship properties:
        ACTED_IN {roles: LIST}
        The relationships:
        (:Person)-[:ACTED_IN]->(:Movie)

    As there, labels and relationship types without properties are left out of
    their property sections, and an empty section leaves an empty line.

    Args:
        schema: an introspected or declared schema.

    Returns:
        The schema text, lines separated by newlines.
    """
    node_lines = [
        _properties_line(label.label, label.properties)
        for label in schema.labels
        if label.properties
    ]
    rel_lines = [
        _properties_line(rel.type, rel.properties)
        for rel in schema.relationship_types
        if rel.properties
    ]
    pattern_lines = [f"(:{p.source})-[:{p.type}]->(:{p.target})" for p in schema.patterns]
    return "\n".join(
        [
            "Node properties:",
            "\n".join(node_lines),
            "Relationship properties:",
            "\n".join(rel_lines),
            "The relationships:",
            "\n".join(pattern_lines),
        ]
    )

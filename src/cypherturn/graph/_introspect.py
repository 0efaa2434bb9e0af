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

import re
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

__all__ = ["cypher_name", "introspect", "render_schema_prompt"]

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

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


def _census(read: ReadFn, pattern: str, var: str, limit: int) -> tuple[int, dict[str, str]]:
    """Exact count of ``var`` in ``pattern``, and property types sampled from ``limit`` of them."""
    count = _scalar(read(f"MATCH {pattern} RETURN count({var})", {}))
    maps = read(f"MATCH {pattern} WITH {var} LIMIT {limit} RETURN properties({var})", {})
    return count, _property_types([m[0] for m in maps])


def _type_census(
    read: ReadFn, rel_type: str, sources: list[str], limit: int
) -> tuple[int, dict[str, str]]:
    """Exact count of a relationship type, and property types sampled from ``limit`` of them.

    The sample is read from the type's source labels, ``(:Source)-[r:TYPE]->()``:
    FalkorDB plans an unanchored ``()-[r:TYPE]->()`` as a scan of every node
    (31 ms a type on POLE against 1 ms from the label). With ``sources`` empty
    (the graph has an unlabelled node) the sample is read unanchored.
    """
    quoted = quote_name(rel_type)
    count = _scalar(read(f"MATCH ()-[r:{quoted}]->() RETURN count(r)", {}))
    if not sources:
        return count, _census(read, f"()-[r:{quoted}]->()", "r", limit)[1]
    maps: list[Any] = []
    for source in sources:
        if len(maps) >= limit:
            break
        rows = read(
            f"MATCH (:{quote_name(source)})-[r:{quoted}]->() "
            f"WITH r LIMIT {limit - len(maps)} RETURN properties(r)",
            {},
        )
        maps += [row[0] for row in rows]
    return count, _property_types(maps)


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
    triples: set[tuple[str, str, str]] = set()
    for sources, rel_type, targets in read(
        "MATCH (a)-[r]->(b) RETURN DISTINCT labels(a), type(r), labels(b)", {}
    ):
        for source in sources or ():
            for target in targets or ():
                triples.add((str(source), str(rel_type), str(target)))
    label_schemas = []
    for label in labels:
        count, properties = _census(read, f"(n:{quote_name(label)})", "n", limit)
        label_schemas.append(LabelSchema(label=label, count=count, properties=properties))
    # with an unlabelled node some relationships have no source label to start from
    anchored = not read("MATCH (n) WHERE size(labels(n)) = 0 RETURN 1 LIMIT 1", {})
    type_schemas = []
    for rel_type in types:
        sources = (
            sorted({source for source, kind, _ in triples if kind == rel_type}) if anchored else []
        )
        count, properties = _type_census(read, rel_type, sources, limit)
        type_schemas.append(
            RelationshipTypeSchema(type=rel_type, count=count, properties=properties)
        )
    patterns = [
        RelationshipPattern(source=source, type=rel_type, target=target)
        for source, rel_type, target in sorted(triples)
    ]
    return GraphSchema(labels=label_schemas, relationship_types=type_schemas, patterns=patterns)


def cypher_name(name: str) -> str:
    """A label, relationship type or property key as a query must write it.

    Names that are not plain identifiers (a space, a hyphen, a leading digit,
    non-ASCII letters) are backtick-quoted, a backtick doubled, so the schema
    text can be copied into a query as written (``Crime Type`` -> `` `Crime Type` ``).

    Args:
        name: the name as stored.

    Returns:
        ``name`` itself, or its backtick-quoted form.
    """
    if _PLAIN_NAME.fullmatch(name):
        return name
    return "`" + name.replace("`", "``") + "`"


def _properties_line(name: str, properties: dict[str, str]) -> str:
    body = ", ".join(f"{cypher_name(key)}: {kind}" for key, kind in properties.items())
    return f"{cypher_name(name)} {{{body}}}"


def render_schema_prompt(schema: GraphSchema) -> str:
    """Write a schema as the compact text Text2Cypher prompts embed.

    The layout is LangChain ``Neo4jGraph``'s structured-schema string::

        Node properties:
        Person {name: STRING, born: INTEGER}
        Relationship properties:
        ACTED_IN {roles: LIST}
        The relationships:
        (:Person)-[:ACTED_IN]->(:Movie)

    As there, a label or relationship type without properties is left out of
    its property section when a relationship line shows it; one that appears
    nowhere else is listed there with ``{}``, so every label and type is named.
    Names that are not plain identifiers are backtick-quoted
    (:func:`cypher_name`). An empty section leaves an empty line.

    Args:
        schema: an introspected or declared schema.

    Returns:
        The schema text, lines separated by newlines.
    """
    in_patterns = {p.source for p in schema.patterns} | {p.target for p in schema.patterns}
    typed = {p.type for p in schema.patterns}
    node_lines = [
        _properties_line(label.label, label.properties)
        for label in schema.labels
        if label.properties or label.label not in in_patterns
    ]
    rel_lines = [
        _properties_line(rel.type, rel.properties)
        for rel in schema.relationship_types
        if rel.properties or rel.type not in typed
    ]
    pattern_lines = [
        f"(:{cypher_name(p.source)})-[:{cypher_name(p.type)}]->(:{cypher_name(p.target)})"
        for p in schema.patterns
    ]
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

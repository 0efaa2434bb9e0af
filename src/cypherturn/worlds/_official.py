"""Import of the official CypherTurn graph files: ``data.cypher`` + ``schema.json``.

The benchmark's public repository ships each of its seven graphs as
``data/graphs/<graph>/data.cypher`` (a Cypher data script, read by
:func:`~cypherturn.worlds._cypher_script.parse_cypher_script`) and
``schema.json``::

    {"graph_name": "...", "description": "...",
     "nodes": [{"label": "House", "count": 8, "properties": {"name": "string", ...}}, ...],
     "relationships": [{"type": "HEADS_HOUSE", "source": "Professor", "target": "House",
                        "properties": {}}, ...]}

:func:`read_official_graph` parses the script and checks it against the schema
file: node counts per label must equal the declared counts, and every label,
relationship type and ``(source)-[type]->(target)`` pattern in the data must be
declared (a relationship entry may also carry a ``count``, which is then
checked). Property keys or value types the schema does not list are logged,
not refused, since the schema files describe properties loosely.

Released scripts are trusted input. A script the reader cannot interpret (one
release script re-labels nodes with ``MATCH ... WHERE size(labels(n))=0 SET
n:Label, ...``) is run by the engine itself, statement by statement in write
queries, as the release's own loader does; the graph is then read back from the
engine and checked against the schema file the same way (and dropped when it
does not match).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from cypherturn.errors import DatasetError, QueryError
from cypherturn.graph import (
    GraphData,
    GraphEngine,
    GraphSchema,
    LabelSchema,
    LoadStats,
    NodeRecord,
    RelationshipPattern,
    RelationshipRecord,
    RelationshipTypeSchema,
)
from cypherturn.worlds._cypher_script import ScriptPlan, read_cypher_script
from cypherturn.worlds._synthetic import PropertyType

__all__ = [
    "OfficialNode",
    "OfficialRelationship",
    "OfficialSchema",
    "load_official_graph",
    "read_official_graph",
    "read_official_schema",
]

log = logging.getLogger(__name__)

_TYPE_NAMES = {
    "string": PropertyType.STRING,
    "str": PropertyType.STRING,
    "int": PropertyType.INTEGER,
    "integer": PropertyType.INTEGER,
    "long": PropertyType.INTEGER,
    "float": PropertyType.FLOAT,
    "double": PropertyType.FLOAT,
    "bool": PropertyType.BOOLEAN,
    "boolean": PropertyType.BOOLEAN,
    "date": PropertyType.DATE,
}


class OfficialNode(BaseModel):
    """A ``nodes[]`` entry of ``schema.json``."""

    label: str
    count: int = Field(description="Number of nodes with this label in data.cypher.")
    properties: dict[str, str] = Field(
        default_factory=dict, description="key -> type (string, int, ...)."
    )


class OfficialRelationship(BaseModel):
    """A ``relationships[]`` entry of ``schema.json``."""

    type: str
    source: str
    target: str
    properties: dict[str, str] = Field(default_factory=dict)
    count: int | None = Field(default=None, description="Optional; checked when present.")


class OfficialSchema(BaseModel):
    """The ``schema.json`` of one official CypherTurn graph."""

    graph_name: str
    description: str = ""
    nodes: list[OfficialNode]
    relationships: list[OfficialRelationship] = Field(default_factory=list)

    def graph_schema(self) -> GraphSchema:
        """The schema as a :class:`GraphSchema` (type names mapped to STRING/INTEGER/...).

        Relationship types without a declared count get count 0.
        """
        types: dict[str, RelationshipTypeSchema] = {}
        for rel in self.relationships:
            entry = types.setdefault(rel.type, RelationshipTypeSchema(type=rel.type, count=0))
            entry.count += rel.count or 0
            entry.properties.update({k: _type_name(v) for k, v in rel.properties.items()})
        return GraphSchema(
            labels=[
                LabelSchema(
                    label=n.label,
                    count=n.count,
                    properties={k: _type_name(v) for k, v in n.properties.items()},
                )
                for n in self.nodes
            ],
            relationship_types=list(types.values()),
            patterns=[
                RelationshipPattern(source=r.source, type=r.type, target=r.target)
                for r in self.relationships
            ],
        )


def _type_name(name: str) -> str:
    known = _TYPE_NAMES.get(name.strip().lower())
    return known.value if known else name.strip().upper()


def read_official_schema(path: Path) -> OfficialSchema:
    """Read and validate a ``schema.json``.

    Raises:
        DatasetError: the file is missing, not JSON, or not in the official layout.
    """
    try:
        return OfficialSchema.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise DatasetError(f"cannot read schema file {path}: {exc}") from exc
    except ValidationError as exc:
        raise DatasetError(f"{path} is not a CypherTurn schema.json: {exc}") from exc


def check_against_schema(data: GraphData, schema: OfficialSchema, origin: str) -> None:
    """Compare a parsed graph with its schema file.

    Raises:
        DatasetError: listing every count mismatch and every undeclared label,
            relationship type or pattern.
    """
    problems: list[str] = []
    labels = data.label_counts()
    declared = {n.label: n for n in schema.nodes}
    for node in schema.nodes:
        if labels.get(node.label, 0) != node.count:
            problems.append(
                f"{node.label}: {labels.get(node.label, 0)} nodes, schema says {node.count}"
            )
    problems += [
        f"label {label!r} ({n} nodes) is not in the schema"
        for label, n in sorted(labels.items())
        if label not in declared
    ]
    primary = {node.key: node.labels[0] for node in data.nodes}
    patterns = Counter((primary[r.start], r.type, primary[r.end]) for r in data.relationships)
    allowed = {(r.source, r.type, r.target) for r in schema.relationships}
    declared_types = {r.type for r in schema.relationships}
    types = data.type_counts()
    problems += [
        f"relationship type {t!r} ({n}) is not in the schema"
        for t, n in sorted(types.items())
        if t not in declared_types
    ]
    problems += [
        f"pattern ({s})-[:{t}]->({e}) ({n}) is not in the schema"
        for (s, t, e), n in sorted(patterns.items())
        if t in declared_types and (s, t, e) not in allowed
    ]
    for rel in schema.relationships:
        held = patterns.get((rel.source, rel.type, rel.target), 0)
        if rel.count is not None and held != rel.count:
            problems.append(
                f"({rel.source})-[:{rel.type}]->({rel.target}): {held}, schema says {rel.count}"
            )
    if problems:
        raise DatasetError(f"{origin} does not match its schema file: " + "; ".join(problems))
    _log_property_drift(data, schema, origin)


def _log_property_drift(data: GraphData, schema: OfficialSchema, origin: str) -> None:
    declared = {n.label: n.properties for n in schema.nodes}
    reported: set[tuple[str, str]] = set()
    for node in data.nodes:
        props = declared.get(node.labels[0], {})
        for key, value in node.properties.items():
            expected = _TYPE_NAMES.get(props.get(key, "").lower())
            if (node.labels[0], key) in reported:
                continue
            if key not in props:
                log.warning("%s: %s.%s is not in the schema file", origin, node.labels[0], key)
                reported.add((node.labels[0], key))
            elif expected is not None and not expected.accepts(value):
                log.warning(
                    "%s: %s.%s=%r is not %s as the schema file says",
                    origin,
                    node.labels[0],
                    key,
                    value,
                    props[key],
                )
                reported.add((node.labels[0], key))


def _read_script(cypher_script: Path, name: str) -> ScriptPlan:
    try:
        text = cypher_script.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read Cypher script {cypher_script}: {exc}") from exc
    return read_cypher_script(text, name, origin=str(cypher_script))


def read_official_graph(
    cypher_script: Path, schema_file: Path, name: str | None = None
) -> GraphData:
    """Parse an official ``data.cypher`` and check it against its ``schema.json``.

    Args:
        cypher_script: the data script.
        schema_file: the schema file.
        name: graph name of the result (default: the schema's ``graph_name``).

    Returns:
        The graph, with an index on ``name`` for every label whose schema lists it.

    Raises:
        DatasetError: a file is missing or malformed, the data disagree with the
            schema, or the script holds statements only an engine can run (load it
            with :func:`load_official_graph`).
    """
    schema = read_official_schema(schema_file)
    plan = _read_script(cypher_script, name or schema.graph_name)
    if plan.data is None:
        raise DatasetError(
            f"{plan.reason} ({cypher_script} must be run by an engine: use load_official_graph)"
        )
    data = plan.data
    check_against_schema(data, schema, str(cypher_script))
    data.indexes = _indexes(schema)
    data.source = f"CypherTurn official graph {schema.graph_name} ({cypher_script}, {schema_file})"
    return data


def _indexes(schema: OfficialSchema) -> list[tuple[str, str]]:
    return [(n.label, "name") for n in schema.nodes if "name" in n.properties]


def _engine_graph(engine: GraphEngine, name: str) -> GraphData:
    """The graph the engine holds, read back (labels, types, properties) for the schema check."""
    nodes = [
        NodeRecord(int(key), tuple(labels), dict(properties))
        for key, labels, properties in engine.write(
            "MATCH (n) RETURN id(n), labels(n), properties(n)"
        ).rows
    ]
    relationships = [
        RelationshipRecord(int(a), int(b), str(t), dict(properties))
        for a, b, t, properties in engine.write(
            "MATCH (a)-[r]->(b) RETURN id(a), id(b), type(r), properties(r)"
        ).rows
    ]
    return GraphData(name=name, nodes=nodes, relationships=relationships)


def _run_on_engine(
    engine: GraphEngine, plan: ScriptPlan, schema: OfficialSchema, origin: str, replace: bool
) -> GraphData:
    """Run every statement of ``plan`` on the engine, then read the graph back and check it."""
    if replace:
        engine.drop()
    elif engine.exists():
        raise DatasetError(
            f"graph {engine.graph!r} already holds {engine.node_count()} nodes on {engine.spec}; "
            "load with replace=True to overwrite it"
        )
    log.info("%s: %s; the engine runs its %d statements", origin, plan.reason, len(plan.statements))
    try:
        for statement, line in zip(plan.statements, plan.lines, strict=True):
            try:
                engine.write(statement)
            except QueryError as exc:
                raise DatasetError(
                    f"{origin}:{line}: the engine refused a statement of the script: "
                    f"{exc.engine_message}"
                ) from exc
        for label, key in _indexes(schema):
            engine.write(f"CREATE INDEX FOR (n:`{label}`) ON (n.`{key}`)")
        engine.await_indexes()
        loaded = _engine_graph(engine, engine.graph)
        check_against_schema(loaded, schema, origin)
    except DatasetError:
        engine.drop()
        raise
    return loaded


def load_official_graph(
    engine: GraphEngine, cypher_script: Path, schema_file: Path, name: str, *, replace: bool = False
) -> LoadStats:
    """Load an official CypherTurn graph into ``engine`` and verify what the engine holds.

    A script the reader interprets is checked against the schema file before
    anything is written, then bulk-loaded. Any other script (a released script is
    trusted) is run by the engine statement by statement, and the graph it built
    is read back and checked against the schema file.

    Args:
        engine: an engine bound to the target graph.
        cypher_script: ``data.cypher``.
        schema_file: ``schema.json``; its counts are checked.
        name: the graph name recorded on the data (normally ``engine.graph``).
        replace: drop what the graph holds first.

    Returns:
        Counts read back from the engine and the wall time in seconds.

    Raises:
        DatasetError: the files are malformed or disagree, the engine refused a
            statement of the script (the graph is then dropped), or the engine holds
            other counts after loading.
        GraphError: the engine failed while writing.
    """
    started = time.perf_counter()
    schema = read_official_schema(schema_file)
    plan = _read_script(cypher_script, name)
    if plan.data is None:
        data = _run_on_engine(engine, plan, schema, str(cypher_script), replace)
    else:
        data = plan.data
        check_against_schema(data, schema, str(cypher_script))
        data.indexes = _indexes(schema)
        data.source = (
            f"CypherTurn official graph {schema.graph_name} ({cypher_script}, {schema_file})"
        )
        engine.load(data, replace=replace)
    nodes, relationships = engine.node_count(), engine.relationship_count()
    if (nodes, relationships) != (len(data.nodes), len(data.relationships)):
        raise DatasetError(
            f"graph {engine.graph!r} holds {nodes} nodes and {relationships} relationships after "
            f"loading {cypher_script}, expected {len(data.nodes)} and {len(data.relationships)}"
        )
    log.info(
        "loaded %s into %r: %d nodes, %d relationships",
        cypher_script,
        engine.graph,
        nodes,
        relationships,
    )
    return LoadStats(engine.graph, nodes, relationships, time.perf_counter() - started)

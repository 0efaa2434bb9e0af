"""What the generator knows about a loaded world: schema, values (read once by Cypher) and phrases.

:func:`build_profile` reads every node and relationship of the loaded graph once
(two read-only queries through :class:`~cypherturn.graph.GraphEngine`) into a
:class:`GraphSnapshot`, then resolves, per label, the display property, the
categorical and numeric properties and the nouns, and per relationship pattern
the hop phrases, from the world's :class:`~cypherturn.graph.GraphSchema`, the
values actually present and the world's hints (:mod:`._hints`). The snapshot
lets the generator *plan* turns in memory (which value keeps a filter
non-empty, where a ranking ties); every gold query is still executed on the
engine, which has the last word.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphEngine, GraphSchema
from cypherturn.sessions._hints import WorldHints, humanize, pluralize
from cypherturn.sessions._skeleton import Direction

__all__ = ["GraphSnapshot", "Hop", "LabelProfile", "WorldProfile", "build_profile", "load_snapshot"]

_MAX_CATEGORIES = 12
_NUMERIC_TYPES = ("INTEGER", "FLOAT")
_CATEGORY_TYPES = ("STRING", "BOOLEAN")
_ROW_CAP = 10_000_000

Props = Mapping[str, Any]


@dataclass(slots=True)
class GraphSnapshot:
    """Every node and relationship of a graph, keyed by the engine's internal node ids.

    Internal ids are used only in memory, to plan and to perturb; they never
    reach a stored gold query.
    """

    props: dict[int, dict[str, Any]] = field(default_factory=dict)
    labels_of: dict[int, tuple[str, ...]] = field(default_factory=dict)
    by_label: dict[str, list[int]] = field(default_factory=dict)
    adjacency: dict[tuple[str, str], dict[int, list[tuple[int, dict[str, Any]]]]] = field(
        default_factory=dict
    )

    def neighbours(
        self, node: int, rel_type: str, direction: str, target: str
    ) -> list[tuple[int, dict[str, Any]]]:
        """``(neighbour id, relationship properties)`` one hop from ``node`` onto ``target`` nodes."""
        edges = self.adjacency.get((rel_type, direction), {}).get(node, [])
        return [(other, rp) for other, rp in edges if target in self.labels_of[other]]


def load_snapshot(engine: GraphEngine) -> GraphSnapshot:
    """Read the whole graph with two read-only queries.

    Raises:
        DatasetError: the graph is empty.
        QueryError: the engine refused a query.
    """
    snap = GraphSnapshot()
    nodes = engine.execute(
        "MATCH (n) RETURN id(n) AS id, labels(n) AS labels, properties(n) AS props",
        row_cap=_ROW_CAP,
    )
    if not nodes.rows:
        raise DatasetError(
            f"graph {engine.graph!r} is empty; load a world before generating sessions"
        )
    for node_id, labels, props in nodes.rows:
        snap.props[node_id] = dict(props)
        snap.labels_of[node_id] = tuple(labels)
        for label in labels:
            snap.by_label.setdefault(label, []).append(node_id)
    for members in snap.by_label.values():
        members.sort()
    rels = engine.execute(
        "MATCH (a)-[r]->(b) RETURN id(a) AS a, type(r) AS t, id(b) AS b, properties(r) AS props",
        row_cap=_ROW_CAP,
    )
    for start, rel_type, end, props in rels.rows:
        rp = dict(props)
        snap.adjacency.setdefault((rel_type, "out"), {}).setdefault(start, []).append((end, rp))
        snap.adjacency.setdefault((rel_type, "in"), {}).setdefault(end, []).append((start, rp))
    for table in snap.adjacency.values():
        for edges in table.values():
            edges.sort(key=lambda e: e[0])
    return snap


@dataclass(frozen=True, slots=True)
class LabelProfile:
    """One label as the generator uses it.

    Attributes:
        label: the node label.
        noun / plural: how users name one node / several.
        display: the property a returned node is named by (no gaps).
        display_unique: true when no two nodes share a display value.
        categorical: properties with few distinct values (strings or booleans).
        numeric: integer or float properties with at least three distinct values.
        phrases: property key -> noun phrase.
        flags: boolean property key -> predicate ("that are {flag}").
        ids: the label's node ids, sorted.
    """

    label: str
    noun: str
    plural: str
    display: str
    display_unique: bool
    categorical: tuple[str, ...]
    numeric: tuple[str, ...]
    phrases: Mapping[str, str]
    flags: Mapping[str, str]
    ids: tuple[int, ...]

    def phrase(self, prop: str) -> str:
        """Noun phrase of a property key."""
        return self.phrases.get(prop) or humanize(prop)


@dataclass(frozen=True, slots=True)
class Hop:
    """One way to step from a set of ``source`` nodes to ``target`` nodes.

    Attributes:
        phrase: template naming the nodes reached, with ``{tgt}`` and ``{src}``.
        numeric: numeric relationship properties usable in edge filters.
        phrases: relationship property key -> noun phrase.
    """

    source: str
    rel_type: str
    direction: Direction
    target: str
    phrase: str
    numeric: tuple[str, ...]
    phrases: Mapping[str, str]

    def say(self, src: str, tgt: str) -> str:
        """The hop phrase with its slots filled."""
        return self.phrase.format(src=src, tgt=tgt)


@dataclass(slots=True)
class WorldProfile:
    """Labels, hops and the snapshot of one loaded world."""

    world: str
    labels: dict[str, LabelProfile]
    hops: dict[str, list[Hop]]
    snapshot: GraphSnapshot

    def hops_between(self, source: str, target: str) -> list[Hop]:
        """Every hop from ``source`` nodes onto ``target`` nodes."""
        return [h for h in self.hops.get(source, []) if h.target == target]


def _display_of(
    label: str, props: dict[str, str], values: dict[str, list[Any]], hint: str | None
) -> str:
    if hint:
        if hint not in props:
            raise DatasetError(f"hints name display property {hint!r}, which {label} does not have")
        return hint
    complete = [p for p, t in props.items() if t == "STRING" and None not in values[p]]
    for preferred in ("name", "title"):
        if preferred in complete:
            return preferred
    unique = [p for p in complete if len(set(values[p])) == len(values[p])]
    if unique or complete:
        return (unique or complete)[0]
    raise DatasetError(f"label {label} has no string property without gaps to name its nodes by")


def _label_profile(
    label: str, props: dict[str, str], ids: list[int], snap: GraphSnapshot, hints: WorldHints
) -> LabelProfile:
    hint = hints.label(label)
    values = {p: [snap.props[i].get(p) for i in ids] for p in props}
    display = _display_of(label, props, values, hint.display)
    shown = values[display]
    skip = {display, *hint.exclude}
    if hint.categorical is not None:
        categorical = tuple(hint.categorical)
    else:
        categorical = tuple(
            p
            for p, t in props.items()
            if t in _CATEGORY_TYPES
            and p not in skip
            and 2 <= len({v for v in values[p] if v is not None}) <= _MAX_CATEGORIES
        )
    if hint.numeric is not None:
        numeric = tuple(hint.numeric)
    else:
        numeric = tuple(
            p
            for p, t in props.items()
            if t in _NUMERIC_TYPES
            and p not in skip
            and len({v for v in values[p] if v is not None}) >= 3
        )
    noun = hint.noun or humanize(label)
    return LabelProfile(
        label=label,
        noun=noun,
        plural=hint.plural or pluralize(noun),
        display=display,
        display_unique=len(set(shown)) == len(shown),
        categorical=categorical,
        numeric=numeric,
        phrases=dict(hint.properties),
        flags=dict(hint.flags),
        ids=tuple(ids),
    )


def build_profile(
    world: str, schema: GraphSchema, snapshot: GraphSnapshot, hints: WorldHints
) -> WorldProfile:
    """Resolve the generator's view of a world.

    Args:
        world: the world's registry name.
        schema: its declared schema (labels, property types, patterns).
        snapshot: the loaded graph (see :func:`load_snapshot`).
        hints: the world's hints (see :func:`~cypherturn.sessions._hints.load_hints`).

    Returns:
        Profiles of the labels that have nodes, and the hops of every declared pattern.

    Raises:
        DatasetError: a label has nothing to name its nodes by, or hints contradict the schema.
    """
    labels: dict[str, LabelProfile] = {}
    for decl in schema.labels:
        ids = snapshot.by_label.get(decl.label, [])
        if ids:
            labels[decl.label] = _label_profile(decl.label, decl.properties, ids, snapshot, hints)
    rel_props = {r.type: r.properties for r in schema.relationship_types}
    hops: dict[str, list[Hop]] = {}
    seen: set[tuple[str, str, str, str]] = set()
    for pattern in schema.patterns:
        if pattern.source not in labels or pattern.target not in labels:
            continue
        hint = hints.relationship(pattern.type)
        types = rel_props.get(pattern.type, {})
        numeric = (
            tuple(hint.numeric)
            if hint.numeric is not None
            else tuple(p for p, t in types.items() if t in _NUMERIC_TYPES)
        )
        fallback = f"{{tgt}} linked to {{src}} by {humanize(pattern.type)}"
        ways: tuple[tuple[Direction, str, str, str], ...] = (
            ("out", pattern.source, pattern.target, hint.out or fallback),
            ("in", pattern.target, pattern.source, hint.in_ or fallback),
        )
        for direction, source, target, phrase in ways:
            key = (source, pattern.type, direction, target)
            if key in seen:
                continue
            seen.add(key)
            hops.setdefault(source, []).append(
                Hop(source, pattern.type, direction, target, phrase, numeric, dict(hint.properties))
            )
    return WorldProfile(world=world, labels=labels, hops=hops, snapshot=snapshot)

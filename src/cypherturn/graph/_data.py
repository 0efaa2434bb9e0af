"""Engine-neutral in-memory graphs, the unit that loaders and world generators produce.

A :class:`GraphData` is what `cypherturn load` writes into an engine: nodes keyed
by a loader-local key, relationships between keys, and the indexes to create.
Records are slotted dataclasses rather than pydantic models because a scaled
Fraud graph holds millions of them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GraphData", "LoadStats", "NodeRecord", "RelationshipRecord"]

Key = int | str


@dataclass(frozen=True, slots=True)
class NodeRecord:
    """One node to create.

    Attributes:
        key: loader-local identity, unique within one :class:`GraphData`; not stored.
        labels: one or more labels, the first being the primary one.
        properties: property key -> value (str, int, float, bool, ``datetime.date``,
            or a list of those). ``None`` values are not stored.
    """

    key: Key
    labels: tuple[str, ...]
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RelationshipRecord:
    """One directed relationship ``(start)-[:type]->(end)`` between node keys."""

    start: Key
    end: Key
    type: str
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class GraphData:
    """A whole graph ready to load.

    Attributes:
        name: the graph name it is loaded under (e.g. ``"pole"``).
        nodes: every node, keys unique.
        relationships: every relationship, endpoints among the node keys.
        indexes: ``(label, property key)`` pairs to index after loading.
        source: human-readable provenance (dataset repository, generator and seed).
    """

    name: str
    nodes: list[NodeRecord] = field(default_factory=list)
    relationships: list[RelationshipRecord] = field(default_factory=list)
    indexes: list[tuple[str, str]] = field(default_factory=list)
    source: str = ""

    def label_counts(self) -> Counter[str]:
        """Count of nodes per label (a node with two labels counts under both)."""
        counts: Counter[str] = Counter()
        for node in self.nodes:
            counts.update(node.labels)
        return counts

    def type_counts(self) -> Counter[str]:
        """Count of relationships per relationship type."""
        return Counter(rel.type for rel in self.relationships)


@dataclass(frozen=True, slots=True)
class LoadStats:
    """What a load wrote: counts as read back from the engine, and wall time in seconds.

    ``skipped`` is True when the graph already held the expected graph and nothing was written.
    """

    graph: str
    nodes: int
    relationships: int
    seconds: float
    skipped: bool = False

"""Declarations and the graph builder shared by the synthetic worlds (CypherTurn §2.1, appendix D.1).

A world is declared once, as data: its labels (with default counts, property
keys, value types, value distributions and how often an optional property is
missing) and its relationship patterns (with their property keys and types).
The seven CypherTurn worlds read theirs from data files (``_world_data``,
``data/<world>.yaml``); Fraud builds its :class:`WorldSpec` in code. The same
declaration drives three things, so they cannot drift apart:

* :class:`GraphBuilder` fills undeclared values from the declared draws, drops
  optional values at the declared rate and refuses any label, pattern, property
  key or value type the declaration does not have;
* :meth:`WorldSpec.schema` is the world's ``declared_schema()``;
* :func:`check_conformance` verifies a bulk-built graph (Fraud) against it.

Randomness comes from one ``random.Random(seed)`` per build, consumed in a fixed
order (declaration order for properties, insertion order for records), so a
``(seed, scale)`` pair always gives the same graph, byte for byte.
"""

from __future__ import annotations

import datetime as dt
import math
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from cypherturn.errors import ConfigError, DatasetError
from cypherturn.graph import (
    GraphData,
    GraphSchema,
    LabelSchema,
    NodeRecord,
    RelationshipPattern,
    RelationshipRecord,
    RelationshipTypeSchema,
)
from cypherturn.worlds._base import WorldInfo

__all__ = [
    "Draw",
    "GraphBuilder",
    "LabelDecl",
    "Prop",
    "PropertyType",
    "RelDecl",
    "SyntheticWorld",
    "WorldSpec",
    "beta_float",
    "chance",
    "check_conformance",
    "date_between",
    "lognormal_float",
    "lognormal_int",
    "normal_float",
    "normal_int",
    "one_of",
    "prefer",
    "spread",
    "uniform_int",
]

T = TypeVar("T")
Draw = Callable[[random.Random], Any]
"""A value distribution: takes the world's generator, returns one property value."""


class PropertyType(StrEnum):
    """Property value types, named as schema introspection names them."""

    STRING = "STRING"
    INTEGER = "INTEGER"
    FLOAT = "FLOAT"
    BOOLEAN = "BOOLEAN"
    DATE = "DATE"

    def accepts(self, value: object) -> bool:
        """True when ``value`` is a Python value of this type (``bool`` is not an INTEGER)."""
        if self is PropertyType.BOOLEAN:
            return isinstance(value, bool)
        if self is PropertyType.INTEGER:
            return isinstance(value, int) and not isinstance(value, bool)
        if self is PropertyType.FLOAT:
            return isinstance(value, float)
        if self is PropertyType.DATE:
            return isinstance(value, dt.date) and not isinstance(value, dt.datetime)
        return isinstance(value, str)


@dataclass(frozen=True, slots=True)
class Prop:
    """One declared property key.

    Attributes:
        name: the property key.
        type: its value type.
        draw: default value distribution; ``None`` means the generator always
            supplies the value itself (it depends on the topology).
        missing: probability that a record lacks the property (0 = always present);
            models the gaps of real data, so ``IS NOT NULL`` filters matter.
        optional: the generator itself may leave the property out (a due date on a
            paid invoice, spoilage days of metal), independently of ``missing``.
    """

    name: str
    type: PropertyType
    draw: Draw | None = None
    missing: float = 0.0
    optional: bool = False

    @property
    def may_be_absent(self) -> bool:
        """True when some records may lack this property."""
        return self.optional or self.missing > 0


@dataclass(frozen=True, slots=True)
class LabelDecl:
    """One declared node label.

    Attributes:
        label: the label.
        count: number of nodes at scale 1.0 (``0`` for a secondary label).
        properties: the property keys, in the order values are drawn.
        key: identifying property (unique per label, indexed), or ``None``.
        minimum: the fewest nodes at any scale (keeps the topology intact when scaled down).
        extends: for a secondary label, the primary label whose nodes carry it as an
            extra label (Fraud's ``Mule`` on Clients, ``CashIn`` on Transactions); a
            secondary label is never a node's first label and has no patterns of its own.
    """

    label: str
    count: int
    properties: tuple[Prop, ...]
    key: str | None = "name"
    minimum: int = 1
    extends: str | None = None

    @property
    def secondary(self) -> bool:
        """True for an extra label carried by nodes of the ``extends`` label."""
        return self.extends is not None


@dataclass(frozen=True, slots=True)
class RelDecl:
    """One declared relationship pattern ``(source)-[:type]->(target)`` with its property keys."""

    type: str
    source: str
    target: str
    properties: tuple[Prop, ...] = ()


@dataclass(frozen=True)
class WorldSpec:
    """A whole world's declaration: catalogue entry, labels and relationship patterns."""

    info: WorldInfo
    labels: tuple[LabelDecl, ...]
    relationships: tuple[RelDecl, ...]

    def label(self, name: str) -> LabelDecl:
        """The declaration of ``name``.

        Raises:
            DatasetError: the world does not declare that label.
        """
        for decl in self.labels:
            if decl.label == name:
                return decl
        raise DatasetError(f"world {self.info.name!r} declares no label {name!r}")

    def count(self, label: str, scale: float) -> int:
        """Number of ``label`` nodes at ``scale``: ``max(minimum, round(count * scale))``."""
        decl = self.label(label)
        return max(decl.minimum, round(decl.count * scale))

    def schema(
        self, label_counts: Mapping[str, int], type_counts: Mapping[str, int]
    ) -> GraphSchema:
        """The declared schema, with the given counts (labels and types absent count 0).

        Args:
            label_counts: nodes per label (a node with two labels counts under both).
            type_counts: relationships per type.

        Returns:
            Labels and relationship types in declaration order with type names
            STRING/INTEGER/FLOAT/BOOLEAN/DATE, and every declared pattern.
        """
        types: dict[str, dict[str, str]] = {}
        for rel in self.relationships:
            types.setdefault(rel.type, {}).update({p.name: p.type.value for p in rel.properties})
        return GraphSchema(
            labels=[
                LabelSchema(
                    label=decl.label,
                    count=label_counts.get(decl.label, 0),
                    properties={p.name: p.type.value for p in decl.properties},
                )
                for decl in self.labels
            ],
            relationship_types=[
                RelationshipTypeSchema(type=name, count=type_counts.get(name, 0), properties=props)
                for name, props in types.items()
            ],
            patterns=[
                RelationshipPattern(source=rel.source, type=rel.type, target=rel.target)
                for rel in self.relationships
            ],
        )

    def primary_of(self, label: str) -> str:
        """The primary label behind ``label`` (itself when it is primary)."""
        return self.label(label).extends or label

    def indexes(self) -> list[tuple[str, str]]:
        """``(label, key)`` for every primary label with an identifying property."""
        return [(d.label, d.key) for d in self.labels if d.key is not None and not d.secondary]


# ---------------------------------------------------------------------------- value distributions


def uniform_int(low: int, high: int) -> Draw:
    """Integers uniform on ``[low, high]``."""
    return lambda rng: rng.randint(low, high)


def normal_int(mean: float, sd: float, low: int, high: int) -> Draw:
    """Rounded normal values clipped to ``[low, high]`` (scores, ages, levels)."""
    return lambda rng: min(high, max(low, round(rng.gauss(mean, sd))))


def lognormal_int(
    median: float, sigma: float, low: int = 1, high: int | None = None, step: int = 1
) -> Draw:
    """Right-skewed positive integers (populations, budgets, values), rounded to ``step``.

    Args:
        median: the distribution's median (``exp(mu)``).
        sigma: the log-scale standard deviation; 0.5 is mild skew, 1.0 heavy.
        low: the smallest value returned.
        high: the largest value returned, if any.
        step: values are multiples of ``step`` (round populations look real).
    """
    mu = math.log(median)

    def draw(rng: random.Random) -> int:
        value = max(low, round(rng.lognormvariate(mu, sigma) / step) * step)
        return value if high is None else min(high, value)

    return draw


def lognormal_float(median: float, sigma: float, digits: int = 2) -> Draw:
    """Right-skewed positive floats (wealth, prices), rounded to ``digits``."""
    mu = math.log(median)
    return lambda rng: round(rng.lognormvariate(mu, sigma), digits)


def normal_float(mean: float, sd: float, low: float, high: float, digits: int = 2) -> Draw:
    """Normal floats clipped to ``[low, high]`` and rounded to ``digits``."""
    return lambda rng: round(float(min(high, max(low, rng.gauss(mean, sd)))), digits)


def beta_float(
    alpha: float, beta: float, low: float = 0.0, high: float = 1.0, digits: int = 2
) -> Draw:
    """Beta-distributed floats rescaled to ``[low, high]`` (rates, shares, condition scores)."""
    return lambda rng: round(float(low + (high - low) * rng.betavariate(alpha, beta)), digits)


def one_of(options: Iterable[str], weights: Iterable[float] | None = None) -> Draw:
    """A categorical value, uniform or with relative ``weights``."""
    values = tuple(options)
    if weights is None:
        return lambda rng: values[rng.randrange(len(values))]
    cumulative = tuple(_accumulate(tuple(weights)))
    return lambda rng: rng.choices(values, cum_weights=cumulative)[0]


def chance(probability: float) -> Draw:
    """``True`` with ``probability``."""
    return lambda rng: rng.random() < probability


def date_between(start: dt.date, end: dt.date) -> Draw:
    """Dates uniform on ``[start, end]``."""
    span = (end - start).days
    return lambda rng: start + dt.timedelta(days=rng.randint(0, span))


def spread(
    rng: random.Random, parents: list[int], children: int, weights: list[float] | None = None
) -> list[int]:
    """Choose a parent for each of ``children`` so that every parent gets at least one.

    The first ``len(parents)`` children cover the parents in a shuffled order (when
    there are enough children); the rest pick parents with relative ``weights``
    (uniform when ``None``), which gives the skewed fan-outs of real hierarchies.

    Returns:
        One parent key per child, in child order.
    """
    covering = list(parents)
    rng.shuffle(covering)
    chosen = covering[:children]
    extra = children - len(chosen)
    if extra > 0:
        chosen.extend(rng.choices(parents, weights=weights, k=extra))
    return chosen


def prefer(rng: random.Random, local: Sequence[T], others: Sequence[T], probability: float) -> T:
    """One of ``local`` with ``probability`` (when there is any), else one of ``others``.

    The generators' "mostly the nearby one" rule: a citizen finds treasure in
    its own city, joins a faction of its own colony, sells its own cargo. No
    draw is spent on the probability when ``local`` is empty.
    """
    if local and rng.random() < probability:
        return local[rng.randrange(len(local))]
    return others[rng.randrange(len(others))]


def _accumulate(weights: tuple[float, ...]) -> Iterable[float]:
    total = 0.0
    for weight in weights:
        total += weight
        yield total


# ---------------------------------------------------------------------------- builder


class GraphBuilder:
    """Accumulates one world's nodes and relationships, enforcing its declaration.

    Node keys are consecutive integers in insertion order. Values not passed
    explicitly are drawn from the declaration; an optional property (``missing >
    0``) is dropped with its declared probability whether drawn or passed.

    Args:
        spec: the world's declaration.
        rng: the build's only source of randomness.
        source: provenance text stored on the :class:`GraphData`.
        scale: the build's size multiplier, for :meth:`count`.
    """

    def __init__(
        self, spec: WorldSpec, rng: random.Random, source: str, scale: float = 1.0
    ) -> None:
        self.spec = spec
        self.rng = rng
        self.scale = scale
        self._source = source
        self._labels = {decl.label: decl for decl in spec.labels}
        self._rel_props: dict[str, tuple[Prop, ...]] = {}
        self._patterns: set[tuple[str, str, str]] = set()
        for rel in spec.relationships:
            self._rel_props.setdefault(rel.type, rel.properties)
            self._patterns.add((rel.type, rel.source, rel.target))
        self._nodes: list[NodeRecord] = []
        self._relationships: list[RelationshipRecord] = []
        self._seen_keys: dict[str, set[Any]] = {}

    def node(self, label: str, /, *, extra_labels: tuple[str, ...] = (), **given: Any) -> int:
        """Add a node of ``label`` and return its key.

        Args:
            label: a declared primary label.
            extra_labels: declared secondary labels the node also carries.
            **given: property values decided by the generator (override the draws);
                ``None`` means "absent".

        Returns:
            The new node's key.

        Raises:
            DatasetError: undeclared label or property, wrong value type, or a
                duplicate identifying value passed explicitly.
        """
        decl = self._labels.get(label)
        if decl is None or decl.secondary:
            raise DatasetError(f"{self.spec.info.name}: {label!r} is not a declared primary label")
        for extra in extra_labels:
            if extra not in self._labels or self._labels[extra].extends != label:
                raise DatasetError(
                    f"{self.spec.info.name}: {extra!r} is not a secondary label of {label}"
                )
        properties = self._fill(label, decl.properties, given)
        if decl.key is not None:
            properties[decl.key] = self._unique(decl, properties.get(decl.key), decl.key in given)
        key = len(self._nodes)
        self._nodes.append(
            NodeRecord(key=key, labels=(label, *extra_labels), properties=properties)
        )
        return key

    def rel(self, rel_type: str, start: int, end: int, /, **given: Any) -> None:
        """Add ``(start)-[:rel_type]->(end)``.

        Raises:
            DatasetError: the pattern (type between the endpoints' labels) or a
                property is not declared, or a value has the wrong type.
        """
        pattern = (rel_type, self.label_of(start), self.label_of(end))
        if pattern not in self._patterns:
            raise DatasetError(f"{self.spec.info.name}: undeclared pattern {pattern}")
        properties = self._fill(rel_type, self._rel_props[rel_type], given)
        self._relationships.append(RelationshipRecord(start, end, rel_type, properties))

    def count(self, label: str) -> int:
        """Number of ``label`` nodes this build makes (:meth:`WorldSpec.count` at its scale)."""
        return self.spec.count(label, self.scale)

    def get(self, key: int, prop: str) -> Any:
        """The value of ``prop`` on node ``key`` (``None`` when absent)."""
        return self._nodes[key].properties.get(prop)

    def label_of(self, key: int) -> str:
        """The primary label of node ``key``."""
        return self._nodes[key].labels[0]

    def finish(self, name: str) -> GraphData:
        """The accumulated graph, to be loaded under ``name``."""
        return GraphData(
            name=name,
            nodes=self._nodes,
            relationships=self._relationships,
            indexes=self.spec.indexes(),
            source=self._source,
        )

    def _fill(
        self, owner: str, declared: tuple[Prop, ...], given: Mapping[str, Any]
    ) -> dict[str, Any]:
        names = {p.name for p in declared}
        unknown = [k for k in given if k not in names]
        if unknown:
            raise DatasetError(f"{self.spec.info.name}: {owner} has no declared property {unknown}")
        rng = self.rng
        values: dict[str, Any] = {}
        for prop in declared:
            if prop.name in given:
                value = given[prop.name]
            elif prop.draw is not None:
                value = prop.draw(rng)
            else:
                raise DatasetError(f"{self.spec.info.name}: {owner}.{prop.name} needs a value")
            if prop.missing and rng.random() < prop.missing:
                continue
            if value is None:
                if not prop.may_be_absent:
                    raise DatasetError(f"{self.spec.info.name}: {owner}.{prop.name} is required")
                continue
            if not prop.type.accepts(value):
                raise DatasetError(
                    f"{self.spec.info.name}: {owner}.{prop.name}={value!r} is not {prop.type}"
                )
            values[prop.name] = value
        return values

    def fresh(self, label: str, make: Callable[[random.Random], Any]) -> Any:
        """An identifying value for ``label`` not used yet, drawn from ``make``.

        Redraws on collision; when the inventory is exhausted at a large scale the
        value gets a number (``"Varrix Copper 2"``), as real registries do.
        """
        seen = self._seen_keys.setdefault(label, set())
        value = make(self.rng)
        for _ in range(50):
            if value not in seen:
                return value
            value = make(self.rng)
        suffix = 2
        while f"{value} {suffix}" in seen:
            suffix += 1
        return f"{value} {suffix}"

    def _unique(self, decl: LabelDecl, value: Any, explicit: bool) -> Any:
        seen = self._seen_keys.setdefault(decl.label, set())
        if value is None:
            raise DatasetError(f"{self.spec.info.name}: {decl.label}.{decl.key} may not be missing")
        if value in seen:
            if explicit:
                raise DatasetError(
                    f"{self.spec.info.name}: duplicate {decl.label}.{decl.key} {value!r}"
                )
            draw = next(p.draw for p in decl.properties if p.name == decl.key)
            if draw is not None:
                value = self.fresh(decl.label, draw)
        seen.add(value)
        return value


# ---------------------------------------------------------------------------- conformance


def check_conformance(data: GraphData, spec: WorldSpec) -> None:
    """Verify that every record of ``data`` follows ``spec``.

    Checks labels (first label primary, the others secondary), relationship
    patterns (on primary labels), property keys, value types, presence of
    non-optional properties and uniqueness of identifying properties.

    Raises:
        DatasetError: listing the first problems found.
    """
    labels = {decl.label: decl for decl in spec.labels}
    rel_props = {rel.type: {p.name: p for p in rel.properties} for rel in spec.relationships}
    patterns = {(rel.type, rel.source, rel.target) for rel in spec.relationships}
    problems: list[str] = []
    primary: dict[Any, str] = {}
    seen: dict[str, set[Any]] = {}
    for node in data.nodes:
        decl = labels.get(node.labels[0])
        if decl is None or decl.secondary:
            problems.append(f"node {node.key}: bad primary label {node.labels[0]!r}")
            continue
        primary[node.key] = decl.label
        for extra in node.labels[1:]:
            if extra not in labels or labels[extra].extends != decl.label:
                problems.append(f"node {node.key}: bad secondary label {extra!r} on {decl.label}")
        problems.extend(
            _property_problems(
                f"node {node.key}", node.properties, {p.name: p for p in decl.properties}
            )
        )
        if decl.key is not None:
            value = node.properties.get(decl.key)
            if value in seen.setdefault(decl.label, set()):
                problems.append(f"node {node.key}: duplicate {decl.label}.{decl.key} {value!r}")
            seen[decl.label].add(value)
        if len(problems) > 20:
            break
    for rel in data.relationships:
        pattern = (rel.type, primary.get(rel.start, "?"), primary.get(rel.end, "?"))
        if pattern not in patterns:
            problems.append(f"relationship {pattern}: undeclared pattern")
        else:
            problems.extend(
                _property_problems(f"relationship {pattern}", rel.properties, rel_props[rel.type])
            )
        if len(problems) > 20:
            break
    if problems:
        raise DatasetError(
            f"{spec.info.name} violates its declaration: " + "; ".join(problems[:20])
        )


def _property_problems(
    where: str, values: Mapping[str, Any], declared: Mapping[str, Prop]
) -> list[str]:
    problems = [f"{where}: undeclared property {k!r}" for k in values if k not in declared]
    for name, prop in declared.items():
        value = values.get(name)
        if value is None:
            if not prop.may_be_absent:
                problems.append(f"{where}: missing required {name!r}")
        elif not prop.type.accepts(value):
            problems.append(f"{where}: {name}={value!r} is not {prop.type}")
    return problems


# ---------------------------------------------------------------------------- world base class


class SyntheticWorld:
    """Base of the generated worlds: ``build(seed, scale)`` is deterministic; ``path`` is ignored.

    Subclasses set ``SPEC`` (usually ``load_world_data(name).spec``) and implement
    :meth:`generate`, the topology rules. The declared schema's
    counts are those of the default build (seed 0, scale 1.0), computed once per
    process; label sets, property types and patterns come from ``SPEC`` alone.
    """

    SPEC: ClassVar[WorldSpec]

    @property
    def info(self) -> WorldInfo:
        """The catalogue entry (counts at scale 1.0, seed 0)."""
        return self.SPEC.info

    def declared_schema(self) -> GraphSchema:
        """The schema this world promises, with the default build's counts."""
        labels, types = _default_counts(type(self))
        return self.SPEC.schema(labels, types)

    def build(self, *, seed: int = 0, scale: float = 1.0, path: Path | None = None) -> GraphData:
        """Generate the world.

        Args:
            seed: any integer; the same ``(seed, scale)`` always gives the same graph.
            scale: size multiplier (> 0); node counts per label are
                ``max(minimum, round(count * scale))``.
            path: ignored (nothing is read).

        Returns:
            The graph, named after the world.

        Raises:
            ConfigError: ``scale`` is not a finite positive number or ``seed`` is not an integer.
        """
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError(f"seed must be an integer, got {seed!r}")
        if not (isinstance(scale, int | float) and math.isfinite(scale) and scale > 0):
            raise ConfigError(f"scale must be a positive number, got {scale!r}")
        rng = random.Random(seed)
        source = (
            f"cypherturn synthetic world {self.SPEC.info.name} (seed={seed}, scale={scale:g}); "
            f"{self.SPEC.info.source}"
        )
        return self.generate(rng, float(scale), source)

    def generate(self, rng: random.Random, scale: float, source: str) -> GraphData:
        """Produce the graph from ``rng``; implemented by each world."""
        raise NotImplementedError

    def builder(self, rng: random.Random, source: str, scale: float = 1.0) -> GraphBuilder:
        """A :class:`GraphBuilder` bound to this world's declaration and the build's scale."""
        return GraphBuilder(self.SPEC, rng, source, scale)


_DEFAULT_COUNTS: dict[str, tuple[Counter[str], Counter[str]]] = {}


def _default_counts(world: type[SyntheticWorld]) -> tuple[Counter[str], Counter[str]]:
    """Label and type counts of the default build, computed once per process."""
    name = world.SPEC.info.name
    if name not in _DEFAULT_COUNTS:
        data = world().build()
        _DEFAULT_COUNTS[name] = (data.label_counts(), data.type_counts())
    return _DEFAULT_COUNTS[name]

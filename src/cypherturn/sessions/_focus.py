"""In-memory mirror of a turn's set derivation, used to plan turns before they are executed.

A :class:`Focus` is the entity set a turn leaves in focus, plus what the
composer's *open stage* holds for it (the candidate nodes before conditions,
and the condition groups), so that a FILTER, VALUE_FILTER, MULTI_CONDITION or
REFINE can be evaluated exactly as the composed query will evaluate it. The
engine still executes every gold; a disagreement rejects the turn.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cypherturn.sessions._format import AmbiguityInfo
from cypherturn.sessions._profile import Hop, WorldProfile
from cypherturn.sessions._skeleton import Condition, Skeleton
from cypherturn.sessions._vocab import Phenomenon

__all__ = ["Answer", "Candidate", "Focus", "Group", "Record", "answers_equal", "evaluate", "holds"]

Props = Mapping[str, Any]
Group = tuple[tuple[Condition, ...], str]
Answer = frozenset[Any] | int | float | None
"""A predicted result: the set of display values of a set turn, or an aggregate's value."""


def holds(condition: Condition, props: Props, rel: Props | None) -> bool:
    """Whether a node (reached through ``rel``) satisfies ``condition``, with Cypher null semantics."""
    source = rel if condition.on_relationship else props
    value = source.get(condition.property) if source is not None else None
    if condition.operator == "IS NOT NULL":
        return value is not None
    if value is None:
        return False
    target = condition.value
    op = condition.operator
    if op == "=":
        return bool(
            (value == target and type(value) is type(target)) or _numbers_equal(value, target)
        )
    if op == "<>":
        return not (
            (value == target and type(value) is type(target)) or _numbers_equal(value, target)
        )
    if op == "IN":
        return isinstance(target, list) and any(
            value == t and type(value) is type(t) for t in target
        )
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not isinstance(target, int | float)
    ):
        return False
    if op == ">":
        return value > target
    if op == ">=":
        return value >= target
    if op == "<":
        return value < target
    return value <= target


def _numbers_equal(a: object, b: object) -> bool:
    numeric = (int, float)
    return (
        isinstance(a, numeric)
        and isinstance(b, numeric)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
        and a == b
    )


def evaluate(
    profile: WorldProfile, base: Iterable[tuple[int, Props | None]], groups: Iterable[Group]
) -> frozenset[int]:
    """Members of an open stage: candidates satisfying every group (OR inside a group)."""
    groups = tuple(groups)
    props = profile.snapshot.props
    kept: set[int] = set()
    for node, rel in base:
        if node in kept:
            continue
        if all(
            (any if connective == "OR" else all)(holds(c, props[node], rel) for c in conditions)
            for conditions, connective in groups
        ):
            kept.add(node)
    return frozenset(kept)


def answers_equal(a: Answer, b: Answer) -> bool:
    """Equality of answers, numbers compared with a relative tolerance of 1e-9."""
    if isinstance(a, frozenset) or isinstance(b, frozenset):
        return a == b
    if a is None or b is None:
        return a is b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


@dataclass(frozen=True, slots=True)
class Focus:
    """The entity set in focus after a turn, with the open stage that derives it.

    Attributes:
        label: the members' label.
        ids: the members (internal node ids).
        base: the open stage's candidates ``(node, relationship properties)`` before
            its conditions; relationship properties are present after a traversal.
        groups: the open stage's condition groups, in composition order.
        traversal: the hop of the open stage when it is a traversal (edge filters allowed).
        filterable: conditions may be added; false right after a top-k cut, because
            FalkorDB evaluates a ``WITH v WHERE`` that follows ``ORDER BY ... LIMIT``
            before the cut (filter pushdown), so such a gold would be wrong there.
    """

    label: str
    ids: frozenset[int]
    base: tuple[tuple[int, Props | None], ...]
    groups: tuple[Group, ...] = ()
    traversal: Hop | None = None
    filterable: bool = True


@dataclass(slots=True)
class Record:
    """An accepted turn as later turns see it."""

    index: int
    phenomena: tuple[Phenomenon, ...]
    skeleton: Skeleton
    focus: Focus
    aggregate: bool
    gold: str


@dataclass(slots=True)
class Candidate:
    """A planned turn, not yet executed.

    Attributes:
        phenomenon: the turn's phenomenon (``None`` for a session's first turn).
        depends_on: the turn it builds on (``None`` when independent).
        skeleton: what its gold is composed from.
        focus: the set it leaves in focus.
        aggregate: the turn returns an aggregate instead of a set.
        answer: the predicted result.
        predict: the predicted result when the given node ids are removed from the
            depends-on turn's set (perturbation check); ``None`` for independent turns.
        key: template key of the utterance; ``slots`` its slot values.
        shift: render with a topic-shift marker.
        ambiguity: disambiguation for ASK_USER, when the utterance is ambiguous.
        reference_description: which earlier element a positional reference means.
    """

    phenomenon: Phenomenon | None
    depends_on: int | None
    skeleton: Skeleton
    focus: Focus
    aggregate: bool
    answer: Answer
    predict: Callable[[frozenset[int]], Answer] | None
    key: str
    slots: dict[str, str]
    shift: bool = False
    ambiguity: AmbiguityInfo | None = None
    reference_description: str | None = None

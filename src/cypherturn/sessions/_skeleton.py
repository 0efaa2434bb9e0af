"""Typed query skeletons: the structured form every gold query is composed from (CypherTurn §2.5).

A turn's skeleton is a short list of blocks. Its first block is either an
``origin`` (a fresh query: first turn or TOPIC_SHIFT) or a ``reference`` to an
earlier turn, whose *set derivation* the turn re-derives inside its own query
(see :mod:`cypherturn.sessions._compose`). The block vocabulary follows the
official release (origin, traverse, filter, sort_limit, project, an anaphora
reference and an aggregate) plus ``complement`` for CONTRAST.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AggFunc",
    "BlockType",
    "Condition",
    "Direction",
    "Operator",
    "Position",
    "QueryBlock",
    "Skeleton",
    "SortKey",
]

Scalar = str | int | float | bool
Direction = Literal["out", "in"]
Operator = Literal["=", "<>", ">", ">=", "<", "<=", "IN", "IS NOT NULL"]
Position = Literal["first", "second", "last"]


class BlockType(StrEnum):
    """Kinds of skeleton blocks."""

    ORIGIN = "origin"
    """Start a fresh set: every node of ``label``."""
    REFERENCE = "reference"
    """Start from the set an earlier turn (``ref_turn``) ended with (anaphora)."""
    TRAVERSE = "traverse"
    """One hop from the current set along ``relationship_type`` to ``label``."""
    FILTER = "filter"
    """Keep the members satisfying ``conditions`` joined by ``connective``."""
    SORT_LIMIT = "sort_limit"
    """Rank the current set by ``sort`` and keep ``limit`` members after ``skip``."""
    COMPLEMENT = "complement"
    """Replace the current set by the other nodes of the same ``label`` (CONTRAST)."""
    AGGREGATE = "aggregate"
    """Return ``agg_func`` over the current set (the set stays in focus)."""
    PROJECT = "project"
    """Return the distinct values of ``property`` (the display property) of the current set."""


class AggFunc(StrEnum):
    """Aggregate functions of COUNT and the AGG_* phenomena."""

    COUNT = "count"
    SUM = "sum"
    AVG = "avg"
    MAX = "max"
    MIN = "min"


class Condition(BaseModel):
    """One predicate on the current set's nodes, or on the relationship that reached them.

    Attributes:
        property: property key tested.
        operator: comparison; ``IN`` takes a list value, ``IS NOT NULL`` none.
        value: the literal compared with (``None`` for ``IS NOT NULL``).
        on_relationship: test the relationship of the traversal that produced the
            current set instead of its nodes (edge-property filter).
    """

    model_config = ConfigDict(frozen=True)

    property: str
    operator: Operator
    value: Scalar | list[Scalar] | None = None
    on_relationship: bool = False


class SortKey(BaseModel):
    """One ORDER BY key over a property of the current set.

    Attributes:
        property: property key sorted on.
        descending: DESC when true, ASC otherwise.
        tie_breaker: true when this key was added only to make the cut deterministic.
    """

    model_config = ConfigDict(frozen=True)

    property: str
    descending: bool = False
    tie_breaker: bool = False


class QueryBlock(BaseModel):
    """One block of a skeleton; which fields matter depends on ``block_type``."""

    model_config = ConfigDict(frozen=True)

    block_type: BlockType
    label: str | None = Field(default=None, description="origin/traverse/complement: node label.")
    relationship_type: str | None = Field(default=None, description="traverse: relationship type.")
    direction: Direction | None = Field(
        default=None,
        description="traverse: `out` follows (set)-[]->(label), `in` (set)<-[]-(label).",
    )
    conditions: list[Condition] = Field(default_factory=list, description="filter: the predicates.")
    connective: Literal["AND", "OR"] = Field(
        default="AND", description="filter: how conditions combine."
    )
    refines: bool = Field(
        default=False,
        description="filter: replace the latest condition on the same property instead of adding (REFINE).",
    )
    sort: list[SortKey] = Field(default_factory=list, description="sort_limit: ORDER BY keys.")
    skip: int = Field(default=0, ge=0, description="sort_limit: members skipped after sorting.")
    limit: int | None = Field(default=None, ge=1, description="sort_limit: members kept.")
    ref_turn: int | None = Field(
        default=None, ge=1, description="reference: 1-based turn index referred to."
    )
    ref_position: Position | None = Field(
        default=None, description="reference: position in that turn's listed result (FIRST)."
    )
    agg_func: AggFunc | None = Field(default=None, description="aggregate: the function.")
    property: str | None = Field(
        default=None,
        description="aggregate: property aggregated (none for count); project: display property.",
    )


class Skeleton(BaseModel):
    """The typed skeleton of one turn's gold query.

    Attributes:
        blocks: the blocks in application order.
        result_label: label of the entity set in focus after the turn (the set a
            follow-up's anaphora resolves to); for aggregate turns the set aggregated.
    """

    blocks: list[QueryBlock]
    result_label: str

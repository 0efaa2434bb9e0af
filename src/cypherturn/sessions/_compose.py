"""Gold Cypher composition from skeletons: chain-dependent turns re-derive the prior set in-query.

A turn that refers to an earlier one does not paste that turn's result as a
literal list; it repeats the clauses that *derived* it and continues from there
(CypherTurn §2.3: "each turn's Cypher must reference the result of its
predecessor"). :func:`compose_session` walks a session's skeletons in order,
keeps the set derivation each turn ends with, and renders every gold query
from it, one clause per line, in the style of the official release::

    MATCH (n:Spell)
    WHERE n.school = 'Evocation'
    WITH n ORDER BY n.power_level DESC, n.name ASC LIMIT 1
    MATCH (n)<-[:REQUIRES]-(m1:Course)
    RETURN DISTINCT m1.name AS name

Composition is pure: the same skeletons always give the same text, so stored
golds can be re-derived from stored skeletons (a test checks this).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from cypherturn.errors import DatasetError
from cypherturn.sessions._skeleton import (
    AggFunc,
    BlockType,
    Condition,
    QueryBlock,
    Skeleton,
    SortKey,
)

__all__ = [
    "ComposedTurn",
    "Derivation",
    "compose_session",
    "compose_turn",
    "cypher_literal",
    "cypher_name",
    "exclude_members",
]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

StageKind = Literal["match", "select", "restrict", "complement"]


def cypher_name(name: str) -> str:
    """Quote a label, relationship type or property key with backticks when needed.

    Example:
        >>> cypher_name("power_level"), cypher_name("birth year")
        ('power_level', '`birth year`')
    """
    return name if _IDENT.match(name) else "`" + name.replace("`", "``") + "`"


def cypher_literal(value: object) -> str:
    """Render a Python scalar or list as a Cypher literal.

    Raises:
        DatasetError: the value has a type Cypher literals cannot express here.

    Example:
        >>> cypher_literal("O'Brien"), cypher_literal([1, 2.5]), cypher_literal(True)
        ("'O\\\\'Brien'", '[1, 2.5]', 'true')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, list):
        return "[" + ", ".join(cypher_literal(v) for v in value) + "]"
    raise DatasetError(f"cannot render {value!r} as a Cypher literal")


@dataclass(slots=True)
class _Group:
    """Predicates joined by one connective; rendered in parentheses when OR-ed."""

    items: list[Condition | str]
    connective: str = "AND"


@dataclass(slots=True)
class _Stage:
    kind: StageKind
    var: str
    label: str
    groups: list[_Group] = field(default_factory=list)
    source_var: str | None = None
    rel_type: str | None = None
    direction: str | None = None
    rel_var: str | None = None
    sort: list[SortKey] = field(default_factory=list)
    skip: int = 0
    limit: int | None = None
    distinct: bool = False
    prior_var: str | None = None
    prior_alias: str | None = None
    regroup: bool = False


@dataclass(slots=True)
class Derivation:
    """The clauses that derive the entity set in focus after a turn.

    Attributes:
        var: Cypher variable bound to the set's members at the end of the clauses.
        label: the members' node label.
        may_repeat: true when a member can appear on several rows (after a traversal).
    """

    stages: list[_Stage]
    var: str
    label: str
    may_repeat: bool = False
    traversals: int = 0
    complements: int = 0

    def clauses(self) -> list[str]:
        """The derivation as Cypher clause lines."""
        lines: list[str] = []
        for stage in self.stages:
            lines.extend(_render_stage(stage))
        return lines


@dataclass(slots=True)
class ComposedTurn:
    """A turn's gold query and the set derivation it leaves in focus."""

    gold: str
    focus: Derivation


def _render_condition(item: Condition | str, var: str, rel_var: str | None) -> str:
    if isinstance(item, str):
        return item
    target = rel_var if item.on_relationship else var
    if target is None:
        raise DatasetError(
            f"condition on relationship property {item.property!r} without a traversal"
        )
    lhs = f"{target}.{cypher_name(item.property)}"
    if item.operator == "IS NOT NULL":
        return f"{lhs} IS NOT NULL"
    return f"{lhs} {item.operator} {cypher_literal(item.value)}"


def _render_where(stage: _Stage, extra: list[str] | None = None) -> list[str]:
    parts = list(extra or [])
    for group in stage.groups:
        rendered = [_render_condition(i, stage.var, stage.rel_var) for i in group.items]
        if group.connective == "OR" and len(rendered) > 1:
            parts.append("(" + " OR ".join(rendered) + ")")
        else:
            parts.extend(rendered)
    return ["WHERE " + " AND ".join(parts)] if parts else []


def _render_stage(stage: _Stage) -> list[str]:
    var, label = stage.var, cypher_name(stage.label)
    if stage.kind == "match":
        if stage.source_var is None:
            pattern = f"({var}:{label})"
        else:
            uses_rel = any(
                isinstance(i, Condition) and i.on_relationship
                for g in stage.groups
                for i in g.items
            )
            rel = f"[{stage.rel_var if uses_rel else ''}:{cypher_name(stage.rel_type or '')}]"
            left, right = ("-", "->") if stage.direction == "out" else ("<-", "-")
            pattern = f"({stage.source_var}){left}{rel}{right}({var}:{label})"
        return [f"MATCH {pattern}", *_render_where(stage)]
    if stage.kind == "select":
        keys = ", ".join(
            f"{var}.{cypher_name(k.property)} {'DESC' if k.descending else 'ASC'}"
            for k in stage.sort
        )
        skip = f" SKIP {stage.skip}" if stage.skip else ""
        distinct = "DISTINCT " if stage.distinct else ""
        return [f"WITH {distinct}{var} ORDER BY {keys}{skip} LIMIT {stage.limit}"]
    if stage.kind == "restrict":
        distinct = "DISTINCT " if stage.distinct else ""
        # FalkorDB pushes a `WITH v WHERE` filter below a preceding ORDER BY ... LIMIT
        # (filtering before the cut); collecting and unwinding the kept rows first fences it.
        fence = (
            [f"WITH collect({var}) AS {var}_kept", f"UNWIND {var}_kept AS {var}"]
            if stage.regroup
            else []
        )
        return [*fence, f"WITH {distinct}{var}", *_render_where(stage)]
    return [
        f"WITH collect(DISTINCT {stage.prior_var}) AS {stage.prior_alias}",
        f"MATCH ({var}:{label})",
        *_render_where(stage, [f"NOT {var} IN {stage.prior_alias}"]),
    ]


def _open_stage(d: Derivation) -> _Stage:
    """The stage new predicates on the current set attach to (a restrict stage is added if needed)."""
    last = d.stages[-1]
    if last.var == d.var and last.kind in ("match", "restrict", "complement"):
        return last
    stage = _Stage(kind="restrict", var=d.var, label=d.label, distinct=d.may_repeat)
    d.stages.append(stage)
    d.may_repeat = False
    return stage


def _refine(d: Derivation, new: Condition) -> None:
    for stage in reversed(d.stages):
        if stage.var != d.var or stage.kind == "select":
            break
        for group in reversed(stage.groups):
            for i, item in enumerate(group.items):
                if (
                    isinstance(item, Condition)
                    and item.property == new.property
                    and item.on_relationship == new.on_relationship
                ):
                    group.items[i] = new
                    return
    raise DatasetError(
        f"REFINE: no earlier condition on {new.property!r} of the current {d.label} set"
    )


def _apply(d: Derivation, block: QueryBlock) -> None:
    kind = block.block_type
    if kind is BlockType.TRAVERSE:
        if not (block.label and block.relationship_type and block.direction):
            raise DatasetError("traverse block needs label, relationship_type and direction")
        d.traversals += 1
        new_var = f"m{d.traversals}"
        d.stages.append(
            _Stage(
                kind="match",
                var=new_var,
                label=block.label,
                source_var=d.var,
                rel_type=block.relationship_type,
                direction=block.direction,
                rel_var=f"r{d.traversals}",
            )
        )
        d.var, d.label, d.may_repeat = new_var, block.label, True
    elif kind is BlockType.FILTER:
        if not block.conditions:
            raise DatasetError("filter block without conditions")
        if block.refines:
            if len(block.conditions) != 1:
                raise DatasetError("a refining filter carries exactly one condition")
            _refine(d, block.conditions[0])
            return
        stage = _open_stage(d)
        if any(c.on_relationship for c in block.conditions) and stage.source_var is None:
            raise DatasetError(
                "relationship-property filter needs the set to come from a traversal"
            )
        stage.groups.append(_Group(list(block.conditions), block.connective))
    elif kind is BlockType.SORT_LIMIT:
        if not block.sort or block.limit is None:
            raise DatasetError("sort_limit block needs sort keys and a limit")
        d.stages.append(
            _Stage(
                kind="select",
                var=d.var,
                label=d.label,
                sort=list(block.sort),
                skip=block.skip,
                limit=block.limit,
                distinct=d.may_repeat,
            )
        )
        d.may_repeat = False
    elif kind is BlockType.COMPLEMENT:
        if block.label != d.label:
            raise DatasetError(
                f"complement over {block.label!r} but the set in focus holds {d.label!r}"
            )
        d.complements += 1
        suffix = "" if d.complements == 1 else str(d.complements)
        d.stages.append(
            _Stage(
                kind="complement",
                var=f"c{suffix}",
                label=d.label,
                prior_var=d.var,
                prior_alias=f"prior{suffix}",
            )
        )
        d.var, d.may_repeat = f"c{suffix}", False
    else:
        raise DatasetError(f"block {kind.value!r} cannot appear inside a derivation")


def _render_return(d: Derivation, block: QueryBlock) -> list[str]:
    if block.block_type is BlockType.PROJECT:
        if not block.property:
            raise DatasetError("project block needs the display property")
        prop = cypher_name(block.property)
        return [f"RETURN DISTINCT {d.var}.{prop} AS {prop}"]
    func = block.agg_func
    if func is None:
        raise DatasetError("aggregate block needs agg_func")
    if func is AggFunc.COUNT:
        return [f"RETURN count(DISTINCT {d.var}) AS count"]
    if not block.property:
        raise DatasetError(f"{func.value} needs a property")
    prop = cypher_name(block.property)
    head = [f"WITH DISTINCT {d.var}"] if d.may_repeat else []
    alias = f"{func.value}_{re.sub(r'[^A-Za-z0-9_]+', '_', block.property)}"
    return [*head, f"RETURN {func.value}({d.var}.{prop}) AS {alias}"]


def exclude_members(derivation: Derivation, node_ids: Sequence[int]) -> Derivation:
    """A copy of ``derivation`` whose set also drops the given internal node ids (perturbation check).

    The exclusion is a predicate ``NOT id(v) IN [...]`` on the set's open stage, so
    every turn composed on top of the copy re-derives the changed set.
    """
    d = copy.deepcopy(derivation)
    after_cut = d.stages[-1].kind == "select"
    stage = _open_stage(d)
    stage.regroup = after_cut
    ids = ", ".join(str(i) for i in node_ids)
    stage.groups.append(_Group([f"NOT id({d.var}) IN [{ids}]"]))
    return d


def compose_turn(focuses: Sequence[Derivation], skeleton: Skeleton, index: int) -> ComposedTurn:
    """Compose one turn's gold from the set derivations its predecessors left in focus.

    Args:
        focuses: ``focuses[i]`` is the derivation turn ``i + 1`` left in focus.
        skeleton: the turn's skeleton; it starts with ``origin`` or with a
            ``reference`` to a turn among ``focuses``, and ends with ``project`` or
            ``aggregate``.
        index: the turn's 1-based index (for messages and reference checks).

    Returns:
        The gold query and the derivation the turn leaves in focus.

    Raises:
        DatasetError: the skeleton is malformed or refers to a turn not in ``focuses``.
    """
    blocks = skeleton.blocks
    if len(blocks) < 2:
        raise DatasetError(f"turn {index}: a skeleton needs a start block and a return block")
    head, body, tail = blocks[0], blocks[1:-1], blocks[-1]
    if head.block_type is BlockType.ORIGIN:
        if not head.label:
            raise DatasetError(f"turn {index}: origin block without a label")
        d = Derivation(
            stages=[_Stage(kind="match", var="n", label=head.label)], var="n", label=head.label
        )
    elif head.block_type is BlockType.REFERENCE:
        ref = head.ref_turn
        if ref is None or not 1 <= ref <= len(focuses) or ref >= index:
            raise DatasetError(
                f"turn {index}: reference to turn {ref}, which is not an earlier turn"
            )
        d = copy.deepcopy(focuses[ref - 1])
    else:
        raise DatasetError(f"turn {index}: a skeleton starts with origin or reference")
    for block in body:
        _apply(d, block)
    if tail.block_type not in (BlockType.PROJECT, BlockType.AGGREGATE):
        raise DatasetError(f"turn {index}: a skeleton ends with project or aggregate")
    gold = "\n".join([*d.clauses(), *_render_return(d, tail)])
    return ComposedTurn(gold=gold, focus=d)


def compose_session(skeletons: Sequence[Skeleton]) -> list[ComposedTurn]:
    """Compose the gold query of every turn of a session, in order (see :func:`compose_turn`).

    Raises:
        DatasetError: a skeleton is malformed or refers to a later turn.
    """
    composed: list[ComposedTurn] = []
    for index, skeleton in enumerate(skeletons, start=1):
        composed.append(compose_turn([c.focus for c in composed], skeleton, index))
    return composed

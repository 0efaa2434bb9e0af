"""The table of phenomena: one plan per phenomenon, each building a candidate turn with a :class:`Planner`.

A plan turns "the next turn should be a PIVOT" into a concrete
:class:`~._focus.Candidate` (see :mod:`cypherturn.sessions._planner` for the
choices every plan shares); ``None`` means the phenomenon does not fit the
conversation's state. :data:`PLANS` maps each of the 13 phenomena to its
plan, and :func:`plan_turn` reads it (a session's first turn has no phenomenon).
Adding a phenomenon is a plan function here and a row in the table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from cypherturn.sessions._audit import MAX_ROWS
from cypherturn.sessions._focus import Answer, Candidate, Focus, Group, Record, evaluate
from cypherturn.sessions._format import AmbiguityInfo, AmbiguityKind
from cypherturn.sessions._planner import NOT_ADDITIVE, Planner, nice
from cypherturn.sessions._profile import LabelProfile
from cypherturn.sessions._skeleton import (
    AggFunc,
    BlockType,
    Condition,
    Position,
    QueryBlock,
    Skeleton,
    SortKey,
)
from cypherturn.sessions._vocab import AGGREGATION_PHENOMENA, Phenomenon

__all__ = ["PLANS", "Plan", "plan_turn"]

Plan = Callable[[Planner, Phenomenon], Candidate | None]
"""A phenomenon's plan: the candidate turn, or ``None`` when it does not fit."""


def plan_turn(planner: Planner, phenomenon: Phenomenon | None) -> Candidate | None:
    """A candidate for ``phenomenon`` (``None``: a session's first turn), or ``None`` if it does not fit."""
    if phenomenon is None:
        return _origin(planner, shift=False)
    return PLANS[phenomenon](planner, phenomenon)


def _origin(planner: Planner, *, shift: bool) -> Candidate | None:
    """A fresh query (first turn, or TOPIC_SHIFT onto another label than the one in focus)."""
    avoid = planner.records[-1].focus.label if shift and planner.records else None
    labels = [
        lp for lp in planner.profile.labels.values() if lp.label != avoid and len(lp.ids) >= 2
    ]
    if not labels:
        return None
    kind = planner.rng.choices(("all", "filter", "top", "anchor"), weights=(1.0, 2.0, 1.5, 2.0))[0]
    lp = planner.rng.choice(labels)
    phenomenon = Phenomenon.TOPIC_SHIFT if shift else None
    origin = QueryBlock(block_type=BlockType.ORIGIN, label=lp.label)
    base = tuple((i, None) for i in lp.ids)
    everyone = frozenset(lp.ids)
    slots = {"tgt": lp.plural, "noun": lp.noun}
    if kind == "all":
        focus = Focus(lp.label, everyone, base)
        return planner.set_candidate(
            phenomenon, None, [origin], focus, None, "ORIGIN_ALL", slots, shift=shift
        )
    if kind == "filter":
        pool = planner.pool(Focus(lp.label, everyone, base), {"categorical", "numeric"})
        if not pool:
            return None
        cond, ids = planner.rng.choice(pool)
        focus = Focus(lp.label, ids, base, (((cond,), "AND"),))
        blocks = [origin, QueryBlock(block_type=BlockType.FILTER, conditions=[cond])]
        slots["cond"] = planner.cond_text(lp.label, None, cond)
        return planner.set_candidate(
            phenomenon, None, blocks, focus, None, "ORIGIN_FILTER", slots, shift=shift
        )
    if kind == "top":
        return _origin_top(planner, lp, origin, phenomenon, shift)
    return _origin_anchor(planner, lp, origin, phenomenon, shift)


def _origin_top(
    planner: Planner,
    lp: LabelProfile,
    origin: QueryBlock,
    phenomenon: Phenomenon | None,
    shift: bool,
) -> Candidate | None:
    sizes = [k for k in (3, 5, 10) if k < len(lp.ids)]
    if not lp.numeric or not sizes:
        return None
    prop, k, descending = (
        planner.rng.choice(lp.numeric),
        planner.rng.choice(sizes),
        planner.rng.random() < 0.75,
    )
    ranked = planner.ranked(frozenset(lp.ids), prop, descending, lp.label)
    if ranked is None:
        return None
    keys = planner.sort_keys(ranked, prop, descending, k, lp.label)
    if keys is None:
        return None
    sort, tied = keys
    chosen = frozenset(ranked[:k])
    focus = Focus(lp.label, chosen, tuple((i, None) for i in sorted(chosen)), filterable=False)
    blocks = [origin, QueryBlock(block_type=BlockType.SORT_LIMIT, sort=sort, limit=k)]
    slots = {
        "tgt": lp.plural,
        "noun": lp.noun,
        "k": str(k),
        "prop": lp.phrase(prop),
        "extreme": str(planner.bank.phrase("extreme", "desc" if descending else "asc")),
    }
    return planner.set_candidate(
        phenomenon, None, blocks, focus, None, "ORIGIN_TOP", slots, shift=shift,
        ambiguity=planner.tie_info(lp.label, prop, k) if tied else None,
    )  # fmt: skip


def _origin_anchor(
    planner: Planner,
    lp: LabelProfile,
    origin: QueryBlock,
    phenomenon: Phenomenon | None,
    shift: bool,
) -> Candidate | None:
    hops = planner.profile.hops.get(lp.label, [])
    if not hops or not lp.display_unique:
        return None
    hop = planner.rng.choice(hops)
    anchors = [a for a in lp.ids if 2 <= len(planner.targets([a], hop)) <= 60]
    if not anchors:
        return None
    anchor = planner.rng.choice(anchors)
    name = planner.value(anchor, lp.display)
    pairs = planner.pairs([anchor], hop)
    focus = Focus(hop.target, frozenset(n for n, _ in pairs), pairs, (), hop)
    cond = Condition(property=lp.display, operator="=", value=name)
    blocks = [
        origin,
        QueryBlock(block_type=BlockType.FILTER, conditions=[cond]),
        QueryBlock(
            block_type=BlockType.TRAVERSE,
            label=hop.target,
            relationship_type=hop.rel_type,
            direction=hop.direction,
        ),
    ]
    phrase, info = planner.hop_phrase(hop, str(name))
    return planner.set_candidate(
        phenomenon,
        None,
        blocks,
        focus,
        None,
        "ORIGIN_ANCHOR",
        {"hop": phrase},
        shift=shift,
        ambiguity=info,
    )


def _expand(planner: Planner) -> Candidate | None:
    """EXPAND: one hop out of the prior result set."""
    prior = planner.records[-1]
    options = [
        (hop, targets)
        for hop in planner.profile.hops.get(prior.focus.label, [])
        if 0 < len(targets := planner.targets(prior.focus.ids, hop)) <= MAX_ROWS
    ]
    if not options:
        return None
    hop, _ = planner.rng.choice(options)
    pairs = planner.pairs(prior.focus.ids, hop)
    focus = Focus(hop.target, frozenset(n for n, _ in pairs), pairs, (), hop)
    members = prior.focus.ids
    phrase, info = planner.hop_phrase(hop, planner.anaphor(planner.label(prior.focus.label).plural))

    def predict(excluded: frozenset[int]) -> Answer:
        return planner.display(hop.target, planner.targets(members - excluded, hop))

    return planner.set_candidate(
        Phenomenon.EXPAND, prior.index, [planner.reference(prior.index), planner.traverse_block(hop)], focus,
        predict, "EXPAND", {"hop": phrase}, ambiguity=info,
    )  # fmt: skip


def _pivot(planner: Planner) -> Candidate | None:
    """PIVOT: rank the prior set by a property, take the top one, then traverse."""
    prior = planner.records[-1]
    members, label = prior.focus.ids, prior.focus.label
    lp = planner.label(label)
    if len(members) < 2 or not lp.numeric:
        return None
    prop, descending = planner.rng.choice(lp.numeric), planner.rng.random() < 0.7
    ranked = planner.ranked(members, prop, descending, label)
    if ranked is None or len({planner.value(i, prop) for i in ranked}) < 2:
        return None
    keys = planner.sort_keys(ranked, prop, descending, 1, label)
    if keys is None:
        return None
    sort, tied = keys
    hops = [h for h in planner.profile.hops.get(label, []) if planner.targets([ranked[0]], h)]
    if not hops:
        return None
    hop = planner.rng.choice(hops)
    pairs = planner.pairs([ranked[0]], hop)
    focus = Focus(hop.target, frozenset(n for n, _ in pairs), pairs, (), hop)
    extreme = str(planner.bank.phrase("extreme", "desc" if descending else "asc"))
    source = planner.bank.pick(planner.rng, "pivot_source").format(
        set=planner.anaphor(lp.plural), extreme=extreme, prop=lp.phrase(prop), noun=lp.noun
    )
    phrase, info = planner.hop_phrase(hop, source)

    def predict(excluded: frozenset[int]) -> Answer:
        rest = planner.ranked(members - excluded, prop, descending, label) or []
        return planner.display(hop.target, planner.targets(rest[:1], hop))

    blocks = [
        planner.reference(prior.index),
        QueryBlock(block_type=BlockType.SORT_LIMIT, sort=sort, limit=1),
        planner.traverse_block(hop),
    ]
    return planner.set_candidate(
        Phenomenon.PIVOT, prior.index, blocks, focus, predict, "PIVOT", {"hop": phrase},
        ambiguity=planner.tie_info(label, prop, 1) if tied else info,
    )  # fmt: skip


def _first(planner: Planner) -> Candidate | None:
    """FIRST: pick an earlier result's element by its listed position, then traverse from it."""
    listed = [
        r
        for r in planner.records
        if not r.aggregate and len(r.focus.ids) >= 2 and planner.label(r.focus.label).display_unique
    ]
    if not listed:
        return None
    far = [r for r in listed if r.index < planner.records[-1].index]
    ref = planner.rng.choice(far if far and planner.rng.random() < 0.6 else listed)
    label, members = ref.focus.label, ref.focus.ids
    lp = planner.label(label)
    positions: list[Position] = ["first", "last"]
    if len(members) >= 3:
        positions.append("second")
    position = planner.rng.choice(positions)
    order = sorted(members, key=lambda i: planner.value(i, lp.display))
    index = {"first": 0, "second": 1, "last": -1}[position]
    picked = order[index]
    hops = [h for h in planner.profile.hops.get(label, []) if planner.targets([picked], h)]
    if not hops:
        return None
    hop = planner.rng.choice(hops)
    pairs = planner.pairs([picked], hop)
    focus = Focus(hop.target, frozenset(n for n, _ in pairs), pairs, (), hop)
    sort = [SortKey(property=lp.display, descending=position == "last")]
    select = QueryBlock(
        block_type=BlockType.SORT_LIMIT,
        sort=sort,
        skip=1 if position == "second" else 0,
        limit=1,
    )
    distance = "far" if ref.index < planner.records[-1].index else "near"
    source = planner.bank.pick(planner.rng, "first_source", distance).format(
        pos=planner.bank.phrase("position", position),
        noun=lp.noun,
        plural=lp.plural,
        ref=ref.index,
    )
    phrase, _ = planner.hop_phrase(hop, source)
    name = planner.value(picked, lp.display)
    info = AmbiguityInfo(
        kind=AmbiguityKind.POSITION,
        description=f"'{position}' refers to the listed order of turn {ref.index}'s result",
        simulator_reply=f"I mean the order in which you listed them back in turn {ref.index}, "
        f"which was alphabetical by {lp.phrase(lp.display)}.",
    )

    needed = 2 if position == "second" else 1

    def predict(excluded: frozenset[int]) -> Answer:
        rest = sorted(members - excluded, key=lambda i: planner.value(i, lp.display))
        if len(rest) < needed:
            return frozenset()
        return planner.display(hop.target, planner.targets([rest[index]], hop))

    return planner.set_candidate(
        Phenomenon.FIRST, ref.index, [planner.reference(ref.index, position), select, planner.traverse_block(hop)],
        focus, predict, "FIRST", {"hop": phrase}, ambiguity=info,
        reference_description=f"the {position} of the {lp.plural} listed in turn {ref.index} "
        f"(alphabetical by {lp.phrase(lp.display)}): {name}",
    )  # fmt: skip


def _aggregate(planner: Planner, phenomenon: Phenomenon) -> Candidate | None:
    """COUNT or an AGG_* over the prior set (the set stays in focus)."""
    prior = planner.records[-1]
    if AGGREGATION_PHENOMENA & set(prior.phenomena):
        return None
    focus = prior.focus
    members = focus.ids
    lp = planner.label(focus.label)
    plural = lp.plural
    slots = {"set": planner.anaphor(plural), "plural": plural, "noun": lp.noun}
    if phenomenon is Phenomenon.COUNT:
        block = QueryBlock(block_type=BlockType.AGGREGATE, agg_func=AggFunc.COUNT)

        def count(excluded: frozenset[int]) -> Answer:
            return len(members - excluded)

        return _aggregate_candidate(
            planner, phenomenon, prior, block, count(frozenset()), count, slots
        )
    props = [
        p
        for p in lp.numeric
        if sum(1 for i in members if planner.value(i, p) is not None) >= 2
        and not (phenomenon is Phenomenon.AGG_SUM and NOT_ADDITIVE.search(p))
    ]
    if len(members) < 2 or not props:
        return None
    prop = planner.rng.choice(props)
    if phenomenon is Phenomenon.AGG_MAX:
        func = AggFunc.MAX if planner.rng.random() < 0.6 else AggFunc.MIN
        slots["extreme"] = str(
            planner.bank.phrase("extreme", "desc" if func is AggFunc.MAX else "asc")
        )
    else:
        func = AggFunc.SUM if phenomenon is Phenomenon.AGG_SUM else AggFunc.AVG
    slots["prop"] = lp.phrase(prop)
    block = QueryBlock(block_type=BlockType.AGGREGATE, agg_func=func, property=prop)

    def compute(excluded: frozenset[int]) -> Answer:
        values = [
            v for i in sorted(members - excluded) if (v := planner.value(i, prop)) is not None
        ]
        if not values:
            return None
        if func is AggFunc.SUM:
            return sum(values)
        if func is AggFunc.AVG:
            return sum(values) / len(values)
        return max(values) if func is AggFunc.MAX else min(values)

    return _aggregate_candidate(
        planner, phenomenon, prior, block, compute(frozenset()), compute, slots
    )


def _aggregate_candidate(
    planner: Planner,
    phenomenon: Phenomenon,
    prior: Record,
    block: QueryBlock,
    answer: Answer,
    predict: Callable[[frozenset[int]], Answer],
    slots: dict[str, str],
) -> Candidate:
    return Candidate(
        phenomenon=phenomenon,
        depends_on=prior.index,
        skeleton=Skeleton(
            blocks=[planner.reference(prior.index), block], result_label=prior.focus.label
        ),
        focus=prior.focus,
        aggregate=True,
        answer=answer,
        predict=predict,
        key=phenomenon.value,
        slots=slots,
    )


def _narrowed(
    planner: Planner,
    phenomenon: Phenomenon,
    groups: tuple[Group, ...],
    block: QueryBlock,
    text: str,
) -> Candidate | None:
    prior = planner.records[-1]
    focus = prior.focus
    ids = evaluate(planner.profile, focus.base, groups)
    if not ids or len(ids) >= len(focus.ids):
        return None
    new = Focus(focus.label, ids, focus.base, groups, focus.traversal)
    slots = {"set": planner.anaphor(planner.label(focus.label).plural), "cond": text}

    def predict(excluded: frozenset[int]) -> Answer:
        return planner.display(focus.label, ids - excluded)

    return planner.set_candidate(
        phenomenon,
        prior.index,
        [planner.reference(prior.index), block],
        new,
        predict,
        phenomenon.value,
        slots,
    )


def _filter(planner: Planner, phenomenon: Phenomenon) -> Candidate | None:
    """FILTER (categorical) or VALUE_FILTER (numeric, on nodes or on the traversed relationship)."""
    focus = planner.records[-1].focus
    kinds = {"categorical"} if phenomenon is Phenomenon.FILTER else {"numeric", "edge"}
    pool = planner.pool(focus, kinds) if focus.filterable else []
    if not pool:
        return None
    cond, _ = planner.rng.choice(pool)
    block = QueryBlock(block_type=BlockType.FILTER, conditions=[cond])
    return _narrowed(
        planner,
        phenomenon,
        (*focus.groups, ((cond,), "AND")),
        block,
        planner.cond_text(focus.label, focus.traversal, cond),
    )


def _multi_condition(planner: Planner) -> Candidate | None:
    """MULTI_CONDITION: two conditions on different properties joined by AND (or OR)."""
    focus = planner.records[-1].focus
    pool = planner.pool(focus, {"categorical", "numeric", "edge"}) if focus.filterable else []
    planner.rng.shuffle(pool)
    connective: Literal["AND", "OR"] = "OR" if planner.rng.random() < 0.25 else "AND"
    for (a, ra), (b, rb) in ((x, y) for i, x in enumerate(pool) for y in pool[i + 1 :]):
        if (a.property, a.on_relationship) == (b.property, b.on_relationship):
            continue
        both = ra & rb if connective == "AND" else ra | rb
        if both and len(both) < len(focus.ids) and both not in (ra, rb):
            block = QueryBlock(
                block_type=BlockType.FILTER, conditions=[a, b], connective=connective
            )
            join = " and " if connective == "AND" else " or "
            text = (
                planner.cond_text(focus.label, focus.traversal, a)
                + join
                + planner.cond_text(focus.label, focus.traversal, b)
            )
            groups = (*focus.groups, ((a, b), connective))
            return _narrowed(planner, Phenomenon.MULTI_CONDITION, groups, block, text)
    return None


def _refine(planner: Planner) -> Candidate | None:
    """REFINE: tighten the latest condition on a property, as the composer will replace it."""
    focus = planner.records[-1].focus
    first_hit: dict[tuple[str, bool], tuple[int, int]] = {}
    for g in range(len(focus.groups) - 1, -1, -1):
        for c, cond in enumerate(focus.groups[g][0]):
            first_hit.setdefault((cond.property, cond.on_relationship), (g, c))
    options: list[tuple[int, int, Condition]] = []
    for g, c in first_hit.values():
        conditions, connective = focus.groups[g]
        cond = conditions[c]
        if connective != "AND":
            continue
        for tighter in _tighter(planner, focus, cond):
            options.append((g, c, tighter))
    planner.rng.shuffle(options)
    for g, c, tighter in options:
        conditions, connective = focus.groups[g]
        replaced = (*conditions[:c], tighter, *conditions[c + 1 :])
        groups = (*focus.groups[:g], (replaced, connective), *focus.groups[g + 1 :])
        block = QueryBlock(block_type=BlockType.FILTER, conditions=[tighter], refines=True)
        candidate = _narrowed(
            planner,
            Phenomenon.REFINE,
            groups,
            block,
            planner.cond_text(focus.label, focus.traversal, tighter),
        )
        if candidate is not None:
            return candidate
    return None


def _tighter(planner: Planner, focus: Focus, cond: Condition) -> list[Condition]:
    if cond.operator == "IN" and isinstance(cond.value, list):
        return [Condition(property=cond.property, operator="=", value=v) for v in cond.value]
    if cond.operator not in (">", ">=", "<", "<=") or not isinstance(cond.value, int | float):
        return []
    if cond.on_relationship:
        values = [rel.get(cond.property) for node, rel in focus.base if node in focus.ids and rel]
    else:
        values = [planner.value(i, cond.property) for i in focus.ids]
    upward = cond.operator in (">", ">=")
    current = cond.value
    better = sorted(
        {
            v
            for v in values
            if isinstance(v, int | float)
            and not isinstance(v, bool)
            and (v > current if upward else v < current)
        }
    )
    if not better:
        return []
    raw = planner.rng.choice(better)
    return [
        Condition(
            property=cond.property,
            operator=cond.operator,
            value=v,
            on_relationship=cond.on_relationship,
        )
        for v in dict.fromkeys((nice(raw), raw))
        if (v > current if upward else v < current)
    ]


def _contrast(planner: Planner) -> Candidate | None:
    """CONTRAST: the other nodes of the prior result's label."""
    prior = planner.records[-1]
    if Phenomenon.CONTRAST in prior.phenomena:
        return None
    label, members = prior.focus.label, prior.focus.ids
    lp = planner.label(label)
    everyone = frozenset(lp.ids)
    rest = everyone - members
    focus = Focus(label, rest, tuple((i, None) for i in sorted(rest)))
    slots = {"plural": lp.plural, "noun": lp.noun, "set": planner.anaphor(lp.plural)}

    def predict(excluded: frozenset[int]) -> Answer:
        return planner.display(label, everyone - (members - excluded))

    blocks = [
        planner.reference(prior.index),
        QueryBlock(block_type=BlockType.COMPLEMENT, label=label),
    ]
    return planner.set_candidate(
        Phenomenon.CONTRAST, prior.index, blocks, focus, predict, "CONTRAST", slots
    )


PLANS: dict[Phenomenon, Plan] = {
    Phenomenon.TOPIC_SHIFT: lambda planner, _: _origin(planner, shift=True),
    Phenomenon.EXPAND: lambda planner, _: _expand(planner),
    Phenomenon.PIVOT: lambda planner, _: _pivot(planner),
    Phenomenon.FIRST: lambda planner, _: _first(planner),
    **dict.fromkeys(sorted(AGGREGATION_PHENOMENA), _aggregate),
    Phenomenon.FILTER: _filter,
    Phenomenon.VALUE_FILTER: _filter,
    Phenomenon.MULTI_CONDITION: lambda planner, _: _multi_condition(planner),
    Phenomenon.REFINE: lambda planner, _: _refine(planner),
    Phenomenon.CONTRAST: lambda planner, _: _contrast(planner),
}
"""Every phenomenon's plan."""

"""Turn planning: a candidate skeleton per phenomenon, valid for the world and predicted in memory.

:class:`Planner` turns "the next turn should be a PIVOT" into a concrete
:class:`~._focus.Candidate`: which property to rank by, which hop to take,
which value keeps a filter non-empty and strictly narrowing, whether a ranking
ties at its cut (then a tie-breaker on the display property is added and the
turn carries a TIE disambiguation), plus the slot values of its utterance. All
choices come from the world's profile and the session's random generator.
Returning ``None`` means the phenomenon does not fit the conversation's state.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cypherturn.sessions._audit import MAX_ROWS
from cypherturn.sessions._focus import Answer, Candidate, Focus, Group, Record, evaluate
from cypherturn.sessions._format import AmbiguityInfo, AmbiguityKind
from cypherturn.sessions._profile import Hop, LabelProfile, WorldProfile
from cypherturn.sessions._skeleton import (
    AggFunc,
    BlockType,
    Condition,
    Operator,
    Position,
    QueryBlock,
    Skeleton,
    SortKey,
)
from cypherturn.sessions._templates import TemplateBank
from cypherturn.sessions._vocab import AGGREGATION_PHENOMENA, Persona, Phenomenon

__all__ = ["Planner"]

_VAGUE_RATE = {"low": 0.6, "medium": 0.3, "high": 0.0}
_NOT_ADDITIVE = re.compile(r"year|rank|tier|code|level|_on$")
"""Numeric properties whose total means nothing (calendar years, ranks, tiers): no AGG_SUM."""
_THRESHOLD_OPS: tuple[tuple[Operator, int, int], ...] = (
    (">", 0, 2),
    (">=", 1, 1),
    ("<", 1, 1),
    ("<=", 0, 2),
)
"""Comparison operators with the range of distinct-value indices (from the bottom, from the top)
whose use as threshold keeps at least one value on each side."""


def _value_key(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def _say(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}" if abs(value) < 1e6 else f"{value:.0f}"
    return str(value)


def _nice(value: int | float) -> int | float:
    """``value`` rounded to two significant figures (integers) or two decimals (floats)."""
    if isinstance(value, int):
        if abs(value) < 100:
            return value
        digits = math.floor(math.log10(abs(value))) - 1
        return int(round(value, -digits))
    return round(value, 2)


@dataclass(slots=True)
class Planner:
    """Plans candidate turns for one session.

    Attributes:
        profile: the world.
        bank: templates and personas.
        persona: the session's persona.
        rng: the session's random generator.
        records: the turns accepted so far.
    """

    profile: WorldProfile
    bank: TemplateBank
    persona: Persona
    rng: random.Random
    records: list[Record]

    # ----------------------------------------------------------------- helpers

    def _label(self, label: str) -> LabelProfile:
        return self.profile.labels[label]

    def _display(self, label: str, ids: frozenset[int]) -> frozenset[Any]:
        prop = self._label(label).display
        props = self.profile.snapshot.props
        return frozenset(props[i].get(prop) for i in ids)

    def _pairs(self, ids: Sequence[int] | frozenset[int], hop: Hop) -> tuple[tuple[int, Any], ...]:
        snap = self.profile.snapshot
        return tuple(
            p
            for n in sorted(ids)
            for p in snap.neighbours(n, hop.rel_type, hop.direction, hop.target)
        )

    def _targets(self, ids: Sequence[int] | frozenset[int], hop: Hop) -> frozenset[int]:
        return frozenset(n for n, _ in self._pairs(ids, hop))

    def _value(self, node: int, prop: str) -> Any:
        return self.profile.snapshot.props[node].get(prop)

    def _anaphor(self, plural: str) -> str:
        density = self.bank.persona(self.persona).speech_register.density
        return self.bank.pick(self.rng, "anaphor", density).format(plural=plural)

    def _ranked(
        self, ids: frozenset[int], prop: str, descending: bool, label: str
    ) -> list[int] | None:
        """Members sorted as ``ORDER BY prop [DESC], display ASC``; ``None`` if a member lacks ``prop``."""
        display = self._label(label).display
        values = {i: self._value(i, prop) for i in ids}
        if any(v is None or isinstance(v, bool) for v in values.values()):
            return None
        sign = -1 if descending else 1
        return sorted(ids, key=lambda i: (sign * values[i], self._value(i, display)))

    def _sort_keys(
        self, ranked: list[int], prop: str, descending: bool, k: int, label: str
    ) -> tuple[list[SortKey], bool] | None:
        """Sort keys for a top-k cut and whether a tie-breaker was needed (``None``: no safe tie-breaker)."""
        keys = [SortKey(property=prop, descending=descending)]
        if len(ranked) <= k or self._value(ranked[k - 1], prop) != self._value(ranked[k], prop):
            return keys, False
        lp = self._label(label)
        if not lp.display_unique:
            return None
        return [*keys, SortKey(property=lp.display, tie_breaker=True)], True

    def _tie_info(self, label: str, prop: str, top_k: int) -> AmbiguityInfo:
        lp = self._label(label)
        what = "the top one" if top_k == 1 else f"the cut-off at {top_k}"
        return AmbiguityInfo(
            kind=AmbiguityKind.TIE,
            description=f"several {lp.plural} share the {lp.phrase(prop)} at {what}; ties are broken by "
            f"{lp.phrase(lp.display)} in alphabetical order",
            simulator_reply=f"If there is a tie, go alphabetically by {lp.phrase(lp.display)} and take "
            f"the first {'one' if top_k == 1 else 'ones'}.",
        )

    def _hop_phrase(self, hop: Hop, src: str) -> tuple[str, AmbiguityInfo | None]:
        tgt = self._label(hop.target).plural
        rivals = self.profile.hops_between(hop.source, hop.target)
        density = self.bank.persona(self.persona).speech_register.density
        if len(rivals) > 1 and self.rng.random() < _VAGUE_RATE[density]:
            vague = self.bank.pick(self.rng, "vague_hop").format(tgt=tgt, src=src)
            meant = hop.say(src="them", tgt=tgt)
            info = AmbiguityInfo(
                kind=AmbiguityKind.RELATIONSHIP,
                description=f"{len(rivals)} relationships lead from {self._label(hop.source).plural} to {tgt}; "
                f"meant: {hop.rel_type} ({hop.direction})",
                simulator_reply=f"I mean the {meant}.",
            )
            return vague, info
        return hop.say(src=src, tgt=tgt), None

    def _cond_text(self, label: str, hop: Hop | None, cond: Condition) -> str:
        phrases = self.bank.phrase("cond")
        if cond.on_relationship and hop is not None:
            noun = hop.phrases.get(cond.property) or cond.property.replace("_", " ")
            cmp = self.bank.pick(self.rng, "compare", cond.operator)
            return str(phrases["edge_compare"]).format(prop=noun, cmp=cmp, value=_say(cond.value))
        noun = self._label(label).phrase(cond.property)
        if cond.operator == "IN" and isinstance(cond.value, list):
            first, second = cond.value[0], cond.value[1]
            return str(phrases["one_of"]).format(prop=noun, value=_say(first), value2=_say(second))
        if cond.operator == "=" and isinstance(cond.value, bool):
            flag = self._label(label).flags.get(cond.property)
            if flag is not None:
                key = "flag_named_true" if cond.value else "flag_named_false"
                return str(phrases[key]).format(flag=flag)
            return str(phrases["flag_true" if cond.value else "flag_false"]).format(prop=noun)
        if cond.operator == "=":
            return str(phrases["equals"]).format(prop=noun, value=_say(cond.value))
        cmp = self.bank.pick(self.rng, "compare", cond.operator)
        return str(phrases["compare"]).format(prop=noun, cmp=cmp, value=_say(cond.value))

    def _thresholds(self, values: list[Any], prop: str, on_rel: bool) -> list[Condition]:
        """One numeric comparison per operator, thresholds drawn from the observed values."""
        distinct = sorted({v for v in values if v is not None and not isinstance(v, bool)})
        if len(distinct) < 2:
            return []
        out: list[Condition] = []
        for op, low, from_top in _THRESHOLD_OPS:
            raw = distinct[self.rng.randint(low, len(distinct) - from_top)]
            for value in dict.fromkeys((_nice(raw), raw)):
                out.append(
                    Condition(property=prop, operator=op, value=value, on_relationship=on_rel)
                )
        return out

    def _pool(self, focus: Focus, kinds: set[str]) -> list[tuple[Condition, frozenset[int]]]:
        """Single conditions that keep a non-empty, strictly smaller part of ``focus``."""
        lp = self._label(focus.label)
        members = sorted(focus.ids)
        conditions: list[Condition] = []
        if "categorical" in kinds:
            for prop in lp.categorical:
                counts = Counter(v for i in members if (v := self._value(i, prop)) is not None)
                values = sorted(counts, key=_value_key)
                conditions.extend(Condition(property=prop, operator="=", value=v) for v in values)
                if len(values) >= 3 and all(isinstance(v, str) for v in values):
                    pair = self.rng.sample(values, 2)
                    conditions.append(Condition(property=prop, operator="IN", value=sorted(pair)))
        if "numeric" in kinds:
            for prop in lp.numeric:
                conditions.extend(
                    self._thresholds([self._value(i, prop) for i in members], prop, False)
                )
        if "edge" in kinds and focus.traversal is not None:
            kept = focus.ids
            for prop in focus.traversal.numeric:
                values = [
                    rel.get(prop) for node, rel in focus.base if node in kept and rel is not None
                ]
                conditions.extend(self._thresholds(values, prop, True))
        pool: list[tuple[Condition, frozenset[int]]] = []
        seen: set[tuple[str, bool, frozenset[int]]] = set()
        for cond in conditions:
            result = evaluate(self.profile, focus.base, (*focus.groups, ((cond,), "AND")))
            key = (cond.property, cond.on_relationship, result)
            if result and len(result) < len(focus.ids) and key not in seen:
                seen.add(key)
                pool.append((cond, result))
        return pool

    def _set_candidate(
        self,
        phenomenon: Phenomenon | None,
        depends_on: int | None,
        blocks: list[QueryBlock],
        focus: Focus,
        predict: Callable[[frozenset[int]], Answer] | None,
        key: str,
        slots: dict[str, str],
        **extra: Any,
    ) -> Candidate | None:
        if not focus.ids or len(focus.ids) > MAX_ROWS:
            return None
        display = self._label(focus.label).display
        blocks = [*blocks, QueryBlock(block_type=BlockType.PROJECT, property=display)]
        return Candidate(
            phenomenon=phenomenon,
            depends_on=depends_on,
            skeleton=Skeleton(blocks=blocks, result_label=focus.label),
            focus=focus,
            aggregate=False,
            answer=self._display(focus.label, focus.ids),
            predict=predict,
            key=key,
            slots=slots,
            **extra,
        )

    # ------------------------------------------------------------------ origin

    def origin(self, *, shift: bool) -> Candidate | None:
        """A fresh query (first turn, or TOPIC_SHIFT onto another label than the one in focus)."""
        avoid = self.records[-1].focus.label if shift and self.records else None
        labels = [
            lp for lp in self.profile.labels.values() if lp.label != avoid and len(lp.ids) >= 2
        ]
        if not labels:
            return None
        kind = self.rng.choices(("all", "filter", "top", "anchor"), weights=(1.0, 2.0, 1.5, 2.0))[0]
        lp = self.rng.choice(labels)
        phenomenon = Phenomenon.TOPIC_SHIFT if shift else None
        origin = QueryBlock(block_type=BlockType.ORIGIN, label=lp.label)
        base = tuple((i, None) for i in lp.ids)
        everyone = frozenset(lp.ids)
        slots = {"tgt": lp.plural, "noun": lp.noun}
        if kind == "all":
            focus = Focus(lp.label, everyone, base)
            return self._set_candidate(
                phenomenon, None, [origin], focus, None, "ORIGIN_ALL", slots, shift=shift
            )
        if kind == "filter":
            pool = self._pool(Focus(lp.label, everyone, base), {"categorical", "numeric"})
            if not pool:
                return None
            cond, ids = self.rng.choice(pool)
            focus = Focus(lp.label, ids, base, (((cond,), "AND"),))
            blocks = [origin, QueryBlock(block_type=BlockType.FILTER, conditions=[cond])]
            slots["cond"] = self._cond_text(lp.label, None, cond)
            return self._set_candidate(
                phenomenon, None, blocks, focus, None, "ORIGIN_FILTER", slots, shift=shift
            )
        if kind == "top":
            return self._origin_top(lp, origin, phenomenon, shift)
        return self._origin_anchor(lp, origin, phenomenon, shift)

    def _origin_top(
        self, lp: LabelProfile, origin: QueryBlock, phenomenon: Phenomenon | None, shift: bool
    ) -> Candidate | None:
        sizes = [k for k in (3, 5, 10) if k < len(lp.ids)]
        if not lp.numeric or not sizes:
            return None
        prop, k, descending = (
            self.rng.choice(lp.numeric),
            self.rng.choice(sizes),
            self.rng.random() < 0.75,
        )
        ranked = self._ranked(frozenset(lp.ids), prop, descending, lp.label)
        if ranked is None:
            return None
        keys = self._sort_keys(ranked, prop, descending, k, lp.label)
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
            "extreme": str(self.bank.phrase("extreme", "desc" if descending else "asc")),
        }
        return self._set_candidate(
            phenomenon, None, blocks, focus, None, "ORIGIN_TOP", slots, shift=shift,
            ambiguity=self._tie_info(lp.label, prop, k) if tied else None,
        )  # fmt: skip

    def _origin_anchor(
        self, lp: LabelProfile, origin: QueryBlock, phenomenon: Phenomenon | None, shift: bool
    ) -> Candidate | None:
        hops = self.profile.hops.get(lp.label, [])
        if not hops or not lp.display_unique:
            return None
        hop = self.rng.choice(hops)
        anchors = [a for a in lp.ids if 2 <= len(self._targets([a], hop)) <= 60]
        if not anchors:
            return None
        anchor = self.rng.choice(anchors)
        name = self._value(anchor, lp.display)
        pairs = self._pairs([anchor], hop)
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
        phrase, info = self._hop_phrase(hop, str(name))
        return self._set_candidate(
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

    # -------------------------------------------------------------- navigation

    def _traverse_block(self, hop: Hop) -> QueryBlock:
        return QueryBlock(
            block_type=BlockType.TRAVERSE,
            label=hop.target,
            relationship_type=hop.rel_type,
            direction=hop.direction,
        )

    def _reference(self, turn: int, position: Position | None = None) -> QueryBlock:
        return QueryBlock(block_type=BlockType.REFERENCE, ref_turn=turn, ref_position=position)

    def expand(self) -> Candidate | None:
        """EXPAND: one hop out of the prior result set."""
        prior = self.records[-1]
        options = [
            (hop, targets)
            for hop in self.profile.hops.get(prior.focus.label, [])
            if 0 < len(targets := self._targets(prior.focus.ids, hop)) <= MAX_ROWS
        ]
        if not options:
            return None
        hop, _ = self.rng.choice(options)
        pairs = self._pairs(prior.focus.ids, hop)
        focus = Focus(hop.target, frozenset(n for n, _ in pairs), pairs, (), hop)
        members = prior.focus.ids
        phrase, info = self._hop_phrase(hop, self._anaphor(self._label(prior.focus.label).plural))

        def predict(excluded: frozenset[int]) -> Answer:
            return self._display(hop.target, self._targets(members - excluded, hop))

        return self._set_candidate(
            Phenomenon.EXPAND, prior.index, [self._reference(prior.index), self._traverse_block(hop)], focus,
            predict, "EXPAND", {"hop": phrase}, ambiguity=info,
        )  # fmt: skip

    def pivot(self) -> Candidate | None:
        """PIVOT: rank the prior set by a property, take the top one, then traverse."""
        prior = self.records[-1]
        members, label = prior.focus.ids, prior.focus.label
        lp = self._label(label)
        if len(members) < 2 or not lp.numeric:
            return None
        prop, descending = self.rng.choice(lp.numeric), self.rng.random() < 0.7
        ranked = self._ranked(members, prop, descending, label)
        if ranked is None or len({self._value(i, prop) for i in ranked}) < 2:
            return None
        keys = self._sort_keys(ranked, prop, descending, 1, label)
        if keys is None:
            return None
        sort, tied = keys
        hops = [h for h in self.profile.hops.get(label, []) if self._targets([ranked[0]], h)]
        if not hops:
            return None
        hop = self.rng.choice(hops)
        pairs = self._pairs([ranked[0]], hop)
        focus = Focus(hop.target, frozenset(n for n, _ in pairs), pairs, (), hop)
        extreme = str(self.bank.phrase("extreme", "desc" if descending else "asc"))
        source = self.bank.pick(self.rng, "pivot_source").format(
            set=self._anaphor(lp.plural), extreme=extreme, prop=lp.phrase(prop), noun=lp.noun
        )
        phrase, info = self._hop_phrase(hop, source)

        def predict(excluded: frozenset[int]) -> Answer:
            rest = self._ranked(members - excluded, prop, descending, label) or []
            return self._display(hop.target, self._targets(rest[:1], hop))

        blocks = [
            self._reference(prior.index),
            QueryBlock(block_type=BlockType.SORT_LIMIT, sort=sort, limit=1),
            self._traverse_block(hop),
        ]
        return self._set_candidate(
            Phenomenon.PIVOT, prior.index, blocks, focus, predict, "PIVOT", {"hop": phrase},
            ambiguity=self._tie_info(label, prop, 1) if tied else info,
        )  # fmt: skip

    def first(self) -> Candidate | None:
        """FIRST: pick an earlier result's element by its listed position, then traverse from it."""
        listed = [
            r
            for r in self.records
            if not r.aggregate
            and len(r.focus.ids) >= 2
            and self._label(r.focus.label).display_unique
        ]
        if not listed:
            return None
        far = [r for r in listed if r.index < self.records[-1].index]
        ref = self.rng.choice(far if far and self.rng.random() < 0.6 else listed)
        label, members = ref.focus.label, ref.focus.ids
        lp = self._label(label)
        positions: list[Position] = ["first", "last"]
        if len(members) >= 3:
            positions.append("second")
        position = self.rng.choice(positions)
        order = sorted(members, key=lambda i: self._value(i, lp.display))
        index = {"first": 0, "second": 1, "last": -1}[position]
        picked = order[index]
        hops = [h for h in self.profile.hops.get(label, []) if self._targets([picked], h)]
        if not hops:
            return None
        hop = self.rng.choice(hops)
        pairs = self._pairs([picked], hop)
        focus = Focus(hop.target, frozenset(n for n, _ in pairs), pairs, (), hop)
        sort = [SortKey(property=lp.display, descending=position == "last")]
        select = QueryBlock(
            block_type=BlockType.SORT_LIMIT,
            sort=sort,
            skip=1 if position == "second" else 0,
            limit=1,
        )
        distance = "far" if ref.index < self.records[-1].index else "near"
        source = self.bank.pick(self.rng, "first_source", distance).format(
            pos=self.bank.phrase("position", position),
            noun=lp.noun,
            plural=lp.plural,
            ref=ref.index,
        )
        phrase, _ = self._hop_phrase(hop, source)
        name = self._value(picked, lp.display)
        info = AmbiguityInfo(
            kind=AmbiguityKind.POSITION,
            description=f"'{position}' refers to the listed order of turn {ref.index}'s result",
            simulator_reply=f"I mean the order in which you listed them back in turn {ref.index}, "
            f"which was alphabetical by {lp.phrase(lp.display)}.",
        )

        needed = 2 if position == "second" else 1

        def predict(excluded: frozenset[int]) -> Answer:
            rest = sorted(members - excluded, key=lambda i: self._value(i, lp.display))
            if len(rest) < needed:
                return frozenset()
            return self._display(hop.target, self._targets([rest[index]], hop))

        return self._set_candidate(
            Phenomenon.FIRST, ref.index, [self._reference(ref.index, position), select, self._traverse_block(hop)],
            focus, predict, "FIRST", {"hop": phrase}, ambiguity=info,
            reference_description=f"the {position} of the {lp.plural} listed in turn {ref.index} "
            f"(alphabetical by {lp.phrase(lp.display)}): {name}",
        )  # fmt: skip

    # ------------------------------------------------------------- aggregation

    def aggregate(self, phenomenon: Phenomenon) -> Candidate | None:
        """COUNT or an AGG_* over the prior set (the set stays in focus)."""
        prior = self.records[-1]
        if AGGREGATION_PHENOMENA & set(prior.phenomena):
            return None
        focus = prior.focus
        members = focus.ids
        lp = self._label(focus.label)
        plural = lp.plural
        slots = {"set": self._anaphor(plural), "plural": plural, "noun": lp.noun}
        if phenomenon is Phenomenon.COUNT:
            block = QueryBlock(block_type=BlockType.AGGREGATE, agg_func=AggFunc.COUNT)

            def count(excluded: frozenset[int]) -> Answer:
                return len(members - excluded)

            return self._aggregate_candidate(
                phenomenon, prior, block, count(frozenset()), count, slots
            )
        props = [
            p
            for p in lp.numeric
            if sum(1 for i in members if self._value(i, p) is not None) >= 2
            and not (phenomenon is Phenomenon.AGG_SUM and _NOT_ADDITIVE.search(p))
        ]
        if len(members) < 2 or not props:
            return None
        prop = self.rng.choice(props)
        if phenomenon is Phenomenon.AGG_MAX:
            func = AggFunc.MAX if self.rng.random() < 0.6 else AggFunc.MIN
            slots["extreme"] = str(
                self.bank.phrase("extreme", "desc" if func is AggFunc.MAX else "asc")
            )
        else:
            func = AggFunc.SUM if phenomenon is Phenomenon.AGG_SUM else AggFunc.AVG
        slots["prop"] = lp.phrase(prop)
        block = QueryBlock(block_type=BlockType.AGGREGATE, agg_func=func, property=prop)

        def compute(excluded: frozenset[int]) -> Answer:
            values = [
                v for i in sorted(members - excluded) if (v := self._value(i, prop)) is not None
            ]
            if not values:
                return None
            if func is AggFunc.SUM:
                return sum(values)
            if func is AggFunc.AVG:
                return sum(values) / len(values)
            return max(values) if func is AggFunc.MAX else min(values)

        return self._aggregate_candidate(
            phenomenon, prior, block, compute(frozenset()), compute, slots
        )

    def _aggregate_candidate(
        self,
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
                blocks=[self._reference(prior.index), block], result_label=prior.focus.label
            ),
            focus=prior.focus,
            aggregate=True,
            answer=answer,
            predict=predict,
            key=phenomenon.value,
            slots=slots,
        )

    # --------------------------------------------------------------- filtering

    def _narrowed(
        self, phenomenon: Phenomenon, groups: tuple[Group, ...], block: QueryBlock, text: str
    ) -> Candidate | None:
        prior = self.records[-1]
        focus = prior.focus
        ids = evaluate(self.profile, focus.base, groups)
        if not ids or len(ids) >= len(focus.ids):
            return None
        new = Focus(focus.label, ids, focus.base, groups, focus.traversal)
        slots = {"set": self._anaphor(self._label(focus.label).plural), "cond": text}

        def predict(excluded: frozenset[int]) -> Answer:
            return self._display(focus.label, ids - excluded)

        return self._set_candidate(
            phenomenon,
            prior.index,
            [self._reference(prior.index), block],
            new,
            predict,
            phenomenon.value,
            slots,
        )

    def filter(self, phenomenon: Phenomenon) -> Candidate | None:
        """FILTER (categorical) or VALUE_FILTER (numeric, on nodes or on the traversed relationship)."""
        focus = self.records[-1].focus
        kinds = {"categorical"} if phenomenon is Phenomenon.FILTER else {"numeric", "edge"}
        pool = self._pool(focus, kinds) if focus.filterable else []
        if not pool:
            return None
        cond, _ = self.rng.choice(pool)
        block = QueryBlock(block_type=BlockType.FILTER, conditions=[cond])
        return self._narrowed(
            phenomenon,
            (*focus.groups, ((cond,), "AND")),
            block,
            self._cond_text(focus.label, focus.traversal, cond),
        )

    def multi_condition(self) -> Candidate | None:
        """MULTI_CONDITION: two conditions on different properties joined by AND (or OR)."""
        focus = self.records[-1].focus
        pool = self._pool(focus, {"categorical", "numeric", "edge"}) if focus.filterable else []
        self.rng.shuffle(pool)
        connective: Literal["AND", "OR"] = "OR" if self.rng.random() < 0.25 else "AND"
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
                    self._cond_text(focus.label, focus.traversal, a)
                    + join
                    + self._cond_text(focus.label, focus.traversal, b)
                )
                groups = (*focus.groups, ((a, b), connective))
                return self._narrowed(Phenomenon.MULTI_CONDITION, groups, block, text)
        return None

    def refine(self) -> Candidate | None:
        """REFINE: tighten the latest condition on a property, as the composer will replace it."""
        focus = self.records[-1].focus
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
            for tighter in self._tighter(focus, cond):
                options.append((g, c, tighter))
        self.rng.shuffle(options)
        for g, c, tighter in options:
            conditions, connective = focus.groups[g]
            replaced = (*conditions[:c], tighter, *conditions[c + 1 :])
            groups = (*focus.groups[:g], (replaced, connective), *focus.groups[g + 1 :])
            block = QueryBlock(block_type=BlockType.FILTER, conditions=[tighter], refines=True)
            candidate = self._narrowed(
                Phenomenon.REFINE,
                groups,
                block,
                self._cond_text(focus.label, focus.traversal, tighter),
            )
            if candidate is not None:
                return candidate
        return None

    def _tighter(self, focus: Focus, cond: Condition) -> list[Condition]:
        if cond.operator == "IN" and isinstance(cond.value, list):
            return [Condition(property=cond.property, operator="=", value=v) for v in cond.value]
        if cond.operator not in (">", ">=", "<", "<=") or not isinstance(cond.value, int | float):
            return []
        if cond.on_relationship:
            values = [
                rel.get(cond.property) for node, rel in focus.base if node in focus.ids and rel
            ]
        else:
            values = [self._value(i, cond.property) for i in focus.ids]
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
        raw = self.rng.choice(better)
        return [
            Condition(
                property=cond.property,
                operator=cond.operator,
                value=v,
                on_relationship=cond.on_relationship,
            )
            for v in dict.fromkeys((_nice(raw), raw))
            if (v > current if upward else v < current)
        ]

    # --------------------------------------------------------------- discourse

    def contrast(self) -> Candidate | None:
        """CONTRAST: the other nodes of the prior result's label."""
        prior = self.records[-1]
        if Phenomenon.CONTRAST in prior.phenomena:
            return None
        label, members = prior.focus.label, prior.focus.ids
        lp = self._label(label)
        everyone = frozenset(lp.ids)
        rest = everyone - members
        focus = Focus(label, rest, tuple((i, None) for i in sorted(rest)))
        slots = {"plural": lp.plural, "noun": lp.noun, "set": self._anaphor(lp.plural)}

        def predict(excluded: frozenset[int]) -> Answer:
            return self._display(label, everyone - (members - excluded))

        blocks = [
            self._reference(prior.index),
            QueryBlock(block_type=BlockType.COMPLEMENT, label=label),
        ]
        return self._set_candidate(
            Phenomenon.CONTRAST, prior.index, blocks, focus, predict, "CONTRAST", slots
        )

    # ---------------------------------------------------------------- dispatch

    def make(self, phenomenon: Phenomenon | None) -> Candidate | None:
        """A candidate for ``phenomenon`` (``None``: a session's first turn), or ``None`` if it does not fit."""
        if phenomenon is None:
            return self.origin(shift=False)
        if phenomenon is Phenomenon.TOPIC_SHIFT:
            return self.origin(shift=True)
        if phenomenon is Phenomenon.EXPAND:
            return self.expand()
        if phenomenon is Phenomenon.PIVOT:
            return self.pivot()
        if phenomenon is Phenomenon.FIRST:
            return self.first()
        if phenomenon in AGGREGATION_PHENOMENA:
            return self.aggregate(phenomenon)
        if phenomenon in (Phenomenon.FILTER, Phenomenon.VALUE_FILTER):
            return self.filter(phenomenon)
        if phenomenon is Phenomenon.MULTI_CONDITION:
            return self.multi_condition()
        if phenomenon is Phenomenon.REFINE:
            return self.refine()
        return self.contrast()

"""Turn planning: the choices every phenomenon's plan shares, on one session's state.

A plan (:mod:`cypherturn.sessions._plans`, one per phenomenon) turns "the
next turn should be a PIVOT" into a concrete :class:`~._focus.Candidate`
with a :class:`Planner`: which property to rank by (:meth:`Planner.ranked`),
which hop to take and how to say it (:meth:`Planner.hop_phrase`), which value
keeps a filter non-empty and strictly narrowing (:meth:`Planner.pool`),
whether a ranking ties at its cut (then a tie-breaker on the display property
is added and the turn carries a TIE disambiguation: :meth:`Planner.sort_keys`),
plus the slot values of its utterance. All choices come from the world's
profile and the session's random generator.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cypherturn.sessions._audit import MAX_ROWS
from cypherturn.sessions._focus import Answer, Candidate, Focus, Record, evaluate
from cypherturn.sessions._format import AmbiguityInfo, AmbiguityKind
from cypherturn.sessions._profile import Hop, LabelProfile, WorldProfile
from cypherturn.sessions._skeleton import (
    BlockType,
    Condition,
    Operator,
    Position,
    QueryBlock,
    Skeleton,
    SortKey,
)
from cypherturn.sessions._templates import TemplateBank
from cypherturn.sessions._vocab import Persona, Phenomenon

__all__ = ["NOT_ADDITIVE", "Planner", "nice"]

_VAGUE_RATE = {"low": 0.6, "medium": 0.3, "high": 0.0}
NOT_ADDITIVE = re.compile(r"year|rank|tier|code|level|_on$")
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


def nice(value: int | float) -> int | float:
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

    def label(self, label: str) -> LabelProfile:
        return self.profile.labels[label]

    def display(self, label: str, ids: frozenset[int]) -> frozenset[Any]:
        prop = self.label(label).display
        props = self.profile.snapshot.props
        return frozenset(props[i].get(prop) for i in ids)

    def pairs(self, ids: Sequence[int] | frozenset[int], hop: Hop) -> tuple[tuple[int, Any], ...]:
        snap = self.profile.snapshot
        return tuple(
            p
            for n in sorted(ids)
            for p in snap.neighbours(n, hop.rel_type, hop.direction, hop.target)
        )

    def targets(self, ids: Sequence[int] | frozenset[int], hop: Hop) -> frozenset[int]:
        return frozenset(n for n, _ in self.pairs(ids, hop))

    def value(self, node: int, prop: str) -> Any:
        return self.profile.snapshot.props[node].get(prop)

    def anaphor(self, plural: str) -> str:
        density = self.bank.persona(self.persona).speech_register.density
        return self.bank.pick(self.rng, "anaphor", density).format(plural=plural)

    def ranked(
        self, ids: frozenset[int], prop: str, descending: bool, label: str
    ) -> list[int] | None:
        """Members sorted as ``ORDER BY prop [DESC], display ASC``; ``None`` if a member lacks ``prop``."""
        display = self.label(label).display
        values = {i: self.value(i, prop) for i in ids}
        if any(v is None or isinstance(v, bool) for v in values.values()):
            return None
        sign = -1 if descending else 1
        return sorted(ids, key=lambda i: (sign * values[i], self.value(i, display)))

    def sort_keys(
        self, ranked: list[int], prop: str, descending: bool, k: int, label: str
    ) -> tuple[list[SortKey], bool] | None:
        """Sort keys for a top-k cut and whether a tie-breaker was needed (``None``: no safe tie-breaker)."""
        keys = [SortKey(property=prop, descending=descending)]
        if len(ranked) <= k or self.value(ranked[k - 1], prop) != self.value(ranked[k], prop):
            return keys, False
        lp = self.label(label)
        if not lp.display_unique:
            return None
        return [*keys, SortKey(property=lp.display, tie_breaker=True)], True

    def tie_info(self, label: str, prop: str, top_k: int) -> AmbiguityInfo:
        lp = self.label(label)
        what = "the top one" if top_k == 1 else f"the cut-off at {top_k}"
        return AmbiguityInfo(
            kind=AmbiguityKind.TIE,
            description=f"several {lp.plural} share the {lp.phrase(prop)} at {what}; ties are broken by "
            f"{lp.phrase(lp.display)} in alphabetical order",
            simulator_reply=f"If there is a tie, go alphabetically by {lp.phrase(lp.display)} and take "
            f"the first {'one' if top_k == 1 else 'ones'}.",
        )

    def hop_phrase(self, hop: Hop, src: str) -> tuple[str, AmbiguityInfo | None]:
        tgt = self.label(hop.target).plural
        rivals = self.profile.hops_between(hop.source, hop.target)
        density = self.bank.persona(self.persona).speech_register.density
        if len(rivals) > 1 and self.rng.random() < _VAGUE_RATE[density]:
            vague = self.bank.pick(self.rng, "vague_hop").format(tgt=tgt, src=src)
            meant = hop.say(src="them", tgt=tgt)
            info = AmbiguityInfo(
                kind=AmbiguityKind.RELATIONSHIP,
                description=f"{len(rivals)} relationships lead from {self.label(hop.source).plural} to {tgt}; "
                f"meant: {hop.rel_type} ({hop.direction})",
                simulator_reply=f"I mean the {meant}.",
            )
            return vague, info
        return hop.say(src=src, tgt=tgt), None

    def cond_text(self, label: str, hop: Hop | None, cond: Condition) -> str:
        phrases = self.bank.phrase("cond")
        if cond.on_relationship and hop is not None:
            noun = hop.phrases.get(cond.property) or cond.property.replace("_", " ")
            cmp = self.bank.pick(self.rng, "compare", cond.operator)
            return str(phrases["edge_compare"]).format(prop=noun, cmp=cmp, value=_say(cond.value))
        noun = self.label(label).phrase(cond.property)
        if cond.operator == "IN" and isinstance(cond.value, list):
            first, second = cond.value[0], cond.value[1]
            return str(phrases["one_of"]).format(prop=noun, value=_say(first), value2=_say(second))
        if cond.operator == "=" and isinstance(cond.value, bool):
            flag = self.label(label).flags.get(cond.property)
            if flag is not None:
                key = "flag_named_true" if cond.value else "flag_named_false"
                return str(phrases[key]).format(flag=flag)
            return str(phrases["flag_true" if cond.value else "flag_false"]).format(prop=noun)
        if cond.operator == "=":
            return str(phrases["equals"]).format(prop=noun, value=_say(cond.value))
        cmp = self.bank.pick(self.rng, "compare", cond.operator)
        return str(phrases["compare"]).format(prop=noun, cmp=cmp, value=_say(cond.value))

    def thresholds(self, values: list[Any], prop: str, on_rel: bool) -> list[Condition]:
        """One numeric comparison per operator, thresholds drawn from the observed values."""
        distinct = sorted({v for v in values if v is not None and not isinstance(v, bool)})
        if len(distinct) < 2:
            return []
        out: list[Condition] = []
        for op, low, from_top in _THRESHOLD_OPS:
            raw = distinct[self.rng.randint(low, len(distinct) - from_top)]
            for value in dict.fromkeys((nice(raw), raw)):
                out.append(
                    Condition(property=prop, operator=op, value=value, on_relationship=on_rel)
                )
        return out

    def pool(self, focus: Focus, kinds: set[str]) -> list[tuple[Condition, frozenset[int]]]:
        """Single conditions that keep a non-empty, strictly smaller part of ``focus``."""
        lp = self.label(focus.label)
        members = sorted(focus.ids)
        conditions: list[Condition] = []
        if "categorical" in kinds:
            for prop in lp.categorical:
                counts = Counter(v for i in members if (v := self.value(i, prop)) is not None)
                values = sorted(counts, key=_value_key)
                conditions.extend(Condition(property=prop, operator="=", value=v) for v in values)
                if len(values) >= 3 and all(isinstance(v, str) for v in values):
                    pair = self.rng.sample(values, 2)
                    conditions.append(Condition(property=prop, operator="IN", value=sorted(pair)))
        if "numeric" in kinds:
            for prop in lp.numeric:
                conditions.extend(
                    self.thresholds([self.value(i, prop) for i in members], prop, False)
                )
        if "edge" in kinds and focus.traversal is not None:
            kept = focus.ids
            for prop in focus.traversal.numeric:
                values = [
                    rel.get(prop) for node, rel in focus.base if node in kept and rel is not None
                ]
                conditions.extend(self.thresholds(values, prop, True))
        pool: list[tuple[Condition, frozenset[int]]] = []
        seen: set[tuple[str, bool, frozenset[int]]] = set()
        for cond in conditions:
            result = evaluate(self.profile, focus.base, (*focus.groups, ((cond,), "AND")))
            key = (cond.property, cond.on_relationship, result)
            if result and len(result) < len(focus.ids) and key not in seen:
                seen.add(key)
                pool.append((cond, result))
        return pool

    def set_candidate(
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
        display = self.label(focus.label).display
        blocks = [*blocks, QueryBlock(block_type=BlockType.PROJECT, property=display)]
        return Candidate(
            phenomenon=phenomenon,
            depends_on=depends_on,
            skeleton=Skeleton(blocks=blocks, result_label=focus.label),
            focus=focus,
            aggregate=False,
            answer=self.display(focus.label, focus.ids),
            predict=predict,
            key=key,
            slots=slots,
            **extra,
        )

    def traverse_block(self, hop: Hop) -> QueryBlock:
        return QueryBlock(
            block_type=BlockType.TRAVERSE,
            label=hop.target,
            relationship_type=hop.rel_type,
            direction=hop.direction,
        )

    def reference(self, turn: int, position: Position | None = None) -> QueryBlock:
        return QueryBlock(block_type=BlockType.REFERENCE, ref_turn=turn, ref_position=position)

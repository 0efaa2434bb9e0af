"""The session generator: ``(world, seed) -> sessions``, every gold verified by execution.

For each turn the generator draws a phenomenon (balanced over the world's
sessions, never two aggregations or two CONTRASTs in a row), lets its plan
(:func:`~._plans.plan_turn`) build a candidate skeleton, composes the gold
(:mod:`._compose`), executes it on the engine and runs the audits
(:mod:`._audit`): size, aggregate label, duplicate gold, consecutive
aggregation, CONTRAST entity type, ties at every ORDER BY ... LIMIT, the
engine-divergence classes (:mod:`._divergence`), agreement
with the in-memory prediction, and - for chain-dependent turns - the
perturbation check: removing members from the set the turn builds on must
change the executed result. A candidate failing any of them is dropped and
another is drawn. Accepted turns get their utterance rendered in the persona's
register.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cypherturn.errors import DatasetError, QueryError
from cypherturn.graph import GraphEngine, GraphSchema, QueryResult
from cypherturn.sessions._audit import (
    MAX_ROWS,
    AuditFinding,
    TieProbe,
    audit_agg_label,
    audit_consecutive_aggregation,
    audit_contrast_type,
    audit_duplicate_gold,
    audit_size,
    audit_ties,
)
from cypherturn.sessions._compose import Derivation, compose_turn, exclude_members
from cypherturn.sessions._divergence import DivergenceAuditor
from cypherturn.sessions._focus import Answer, Candidate, Record, answers_equal
from cypherturn.sessions._format import GoldResult, Session, Turn, canonical_rows
from cypherturn.sessions._hints import WorldHints, load_hints
from cypherturn.sessions._planner import Planner
from cypherturn.sessions._plans import plan_turn
from cypherturn.sessions._profile import WorldProfile, build_profile, load_snapshot
from cypherturn.sessions._templates import TemplateBank, load_bank
from cypherturn.sessions._vocab import (
    AGGREGATION_PHENOMENA,
    ChainMode,
    Persona,
    Phenomenon,
    chain_mode_of,
)

__all__ = ["SessionGenerator"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 10.0
"""Time limit for one gold query or probe while building, seconds."""

_PERTURB_SINGLES = 40
_ATTEMPTS = 3
_FRESH_ATTEMPTS = 30


@dataclass(slots=True)
class _SessionState:
    rng: random.Random
    planner: Planner
    focuses: list[Derivation] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    ties: dict[str, TieProbe] = field(default_factory=dict)


def _engine_answer(result: QueryResult, aggregate: bool) -> Answer:
    if aggregate:
        value = result.rows[0][0] if result.rows and result.rows[0] else None
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    return frozenset(row[0] for row in result.rows)


class SessionGenerator:
    """Generates verified sessions on one loaded world; keeps phenomenon counts across its sessions.

    Args:
        world: the world's registry name (used for hints and session ids).
        engine: an engine on a graph holding the world, loaded.
        schema: the world's declared schema.
        hints: the world's hints (default: the packaged file, if any).
        bank: templates and personas (default: the packaged files).
        timeout_s: limit per executed query, seconds.
        max_rows: largest acceptable gold result.

    Raises:
        DatasetError: the graph is empty or a label has nothing to name its nodes by.
    """

    def __init__(
        self,
        world: str,
        engine: GraphEngine,
        schema: GraphSchema,
        *,
        hints: WorldHints | None = None,
        bank: TemplateBank | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_rows: int = MAX_ROWS,
    ) -> None:
        self.world = world
        self.engine = engine
        self.bank = bank or load_bank()
        self.timeout_s = timeout_s
        self.max_rows = max_rows
        self.profile: WorldProfile = build_profile(
            world, schema, load_snapshot(engine), hints or load_hints(world)
        )
        self.divergence = DivergenceAuditor(engine, timeout_s)
        self.counts: Counter[Phenomenon] = Counter()
        self.rejections: Counter[str] = Counter()
        self.queries = 0

    # ---------------------------------------------------------------- sessions

    def session(
        self,
        *,
        session_id: str,
        persona: Persona,
        length: int,
        seed: int,
        key: str,
        prefer: Sequence[Phenomenon] = (),
    ) -> Session:
        """Generate one session of exactly ``length`` turns.

        Args:
            session_id: the id to give it.
            persona: its persona.
            length: number of turns (at least 1).
            seed: the build seed (recorded in the session).
            key: a string that, with the seed, determines every random choice.
            prefer: phenomena to try first for turns 2, 3, ... (a targeted session);
                a turn whose preferred phenomenon does not fit falls back to the
                balanced choice.

        Raises:
            DatasetError: no phenomenon, not even a TOPIC_SHIFT, could extend the session.
        """
        rng = random.Random(f"{seed}/{key}")
        state = _SessionState(rng, Planner(self.profile, self.bank, persona, rng, []))
        for index in range(1, length + 1):
            order = self._order(state, index)
            if 2 <= index < len(prefer) + 2:
                wanted = prefer[index - 2]
                order = [wanted, *(p for p in order if p is not wanted)]
            for phenomenon in order:
                if self._extend(state, index, phenomenon):
                    break
            else:
                raise DatasetError(f"{session_id}: no verified turn {index} could be generated")
        return Session(
            session_id=session_id, world=self.world, persona=persona, seed=seed, turns=state.turns
        )

    def _order(self, state: _SessionState, index: int) -> list[Phenomenon | None]:
        """Phenomena to try for turn ``index``, most wanted first (weighted draw without replacement)."""
        if index == 1:
            return [None]
        prior = state.planner.records[-1]
        total = sum(self.counts.values()) + 1
        keyed: list[tuple[float, Phenomenon]] = []
        for phenomenon in Phenomenon:
            if phenomenon is Phenomenon.TOPIC_SHIFT and index == 2:
                continue
            if phenomenon in AGGREGATION_PHENOMENA and AGGREGATION_PHENOMENA & set(prior.phenomena):
                continue
            deficit = total / len(Phenomenon) - self.counts[phenomenon]
            weight = 2.0 ** max(-8.0, min(8.0, deficit))
            keyed.append((state.rng.random() ** (1.0 / weight), phenomenon))
        order: list[Phenomenon | None] = [
            p for _, p in sorted(keyed, key=lambda kp: kp[0], reverse=True)
        ]
        if Phenomenon.TOPIC_SHIFT not in order:
            order.append(Phenomenon.TOPIC_SHIFT)
        return order

    def _extend(self, state: _SessionState, index: int, phenomenon: Phenomenon | None) -> bool:
        fresh = phenomenon is None or phenomenon is Phenomenon.TOPIC_SHIFT
        for _ in range(_FRESH_ATTEMPTS if fresh else _ATTEMPTS):
            candidate = plan_turn(state.planner, phenomenon)
            if candidate is None:
                self.rejections["does_not_fit"] += 1
                continue
            if self._accept(state, index, candidate):
                if phenomenon is not None:
                    self.counts[phenomenon] += 1
                return True
        return False

    # ------------------------------------------------------------ verification

    def _execute(self, query: str) -> QueryResult:
        self.queries += 1
        return self.engine.execute(query, timeout_s=self.timeout_s, row_cap=self.max_rows + 1)

    def _reject(self, index: int, findings: Sequence[AuditFinding], gold: str) -> bool:
        for finding in findings:
            self.rejections[finding.code.value] += 1
            log.debug(
                "turn %d rejected (%s): %s\n%s", index, finding.code.value, finding.message, gold
            )
        return False

    def _accept(self, state: _SessionState, index: int, candidate: Candidate) -> bool:
        composed = compose_turn(state.focuses, candidate.skeleton, index)
        gold = composed.gold
        phenomena = [candidate.phenomenon] if candidate.phenomenon is not None else []
        previous = state.turns[-1] if state.turns else None
        findings = [
            *audit_agg_label(index, phenomena, gold),
            *audit_duplicate_gold(index, gold, previous.gold_cypher if previous else None),
            *audit_consecutive_aggregation(
                index, phenomena, previous.phenomena if previous else None
            ),
        ]
        if candidate.phenomenon is Phenomenon.CONTRAST and previous is not None:
            findings += audit_contrast_type(index, gold, previous.gold_cypher)
        if findings:
            return self._reject(index, findings, gold)
        try:
            result = self._execute(gold)
        except QueryError as e:
            self.rejections["execution_error"] += 1
            log.warning("generated gold failed on the engine (%s):\n%s", e.engine_message, gold)
            return False
        findings = audit_size(index, len(result.rows), self.max_rows)
        if findings:
            return self._reject(index, findings, gold)
        answer = _engine_answer(result, candidate.aggregate)
        if not answers_equal(answer, candidate.answer):
            self.rejections["prediction_mismatch"] += 1
            log.warning("engine and plan disagree on turn %d:\n%s", index, gold)
            return False
        findings = audit_ties(index, gold, self.engine, timeout_s=self.timeout_s, cache=state.ties)
        if findings:
            return self._reject(index, findings, gold)
        try:
            findings = self.divergence.findings(index, gold)
        except QueryError as e:
            self.rejections["execution_error"] += 1
            log.warning("divergence probe failed (%s):\n%s", e.engine_message, gold)
            return False
        if findings:
            return self._reject(index, findings, gold)
        dependent = candidate.predict is not None and candidate.depends_on is not None
        if dependent and not self._perturbation_changes(state, index, candidate, answer):
            self.rejections["not_chain_dependent"] += 1
            return False
        self._record(state, index, candidate, composed.focus, gold, result)
        return True

    def _perturbation_changes(
        self, state: _SessionState, index: int, candidate: Candidate, answer: Answer
    ) -> bool:
        """True when removing members of the depends-on set changes the executed gold result."""
        assert candidate.predict is not None and candidate.depends_on is not None
        members = sorted(state.planner.records[candidate.depends_on - 1].focus.ids)
        options = [frozenset({m}) for m in members[:_PERTURB_SINGLES]]
        if len(members) > 1:
            options += [frozenset(members) - {m} for m in members[:3]]
        planned = candidate.answer
        chosen = next(
            (o for o in options if not answers_equal(candidate.predict(o), planned)), None
        )
        if chosen is None:
            return False
        expected = candidate.predict(chosen)
        perturbed = list(state.focuses)
        perturbed[candidate.depends_on - 1] = exclude_members(
            perturbed[candidate.depends_on - 1], sorted(chosen)
        )
        query = compose_turn(perturbed, candidate.skeleton, index).gold
        try:
            result = self._execute(query)
        except QueryError as e:
            log.warning("perturbed gold failed (%s):\n%s", e.engine_message, query)
            return False
        changed = _engine_answer(result, candidate.aggregate)
        if not answers_equal(changed, expected):
            # Legitimate when removing members creates a tie the gold's keys do not break.
            log.debug("perturbed turn %d differs from the plan:\n%s", index, query)
        return not answers_equal(changed, answer)

    def _record(
        self,
        state: _SessionState,
        index: int,
        candidate: Candidate,
        focus: Derivation,
        gold: str,
        result: QueryResult,
    ) -> None:
        persona = state.planner.persona
        utterance = self.bank.render(
            persona,
            candidate.key,
            candidate.slots,
            state.rng,
            topic_shift=candidate.shift,
        )
        phenomena = [candidate.phenomenon] if candidate.phenomenon is not None else []
        mode = (
            chain_mode_of(candidate.phenomenon)
            if candidate.phenomenon is not None
            else ChainMode.NONE
        )
        # FalkorDB sums integers into a float; the stored answer keeps Neo4j's integer
        integral = set(self.divergence.integer_sum_columns(gold)) if candidate.aggregate else set()
        rows: list[list[Any]] = canonical_rows(
            [
                [
                    int(v) if i in integral and isinstance(v, float) and v.is_integer() else v
                    for i, v in enumerate(row)
                ]
                for row in result.rows
            ]
        )
        state.turns.append(
            Turn(
                turn_index=index,
                utterance=utterance,
                phenomena=phenomena,
                chain_mode=mode,
                depends_on=candidate.depends_on,
                gold_cypher=gold,
                gold_result=GoldResult(columns=list(result.columns), rows=rows),
                ambiguity_info=candidate.ambiguity,
                reference_description=candidate.reference_description,
                skeleton=candidate.skeleton,
            )
        )
        state.focuses.append(focus)
        state.planner.records.append(
            Record(
                index,
                tuple(phenomena),
                candidate.skeleton,
                candidate.focus,
                candidate.aggregate,
                gold,
            )
        )

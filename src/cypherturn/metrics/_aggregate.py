"""Turn scores to session and system figures: SEM, CER, cost, action usage, breakdowns.

A *system* is what a row of the CypherTurn main table compares: one model under
one protocol at one budget multiplier and one protocol variant (Table 2, Table 18,
and the appendix F variant tables), under one harness (the settings beyond the
paper, :attr:`~cypherturn.records.TurnRecord.harness`; empty for the paper's agent). Only valid turns (gold executed) enter any figure.
"""

from __future__ import annotations

import functools
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from statistics import fmean

from pydantic import BaseModel, Field

from cypherturn.metrics._registry import METRICS
from cypherturn.records import BASE_VARIANT, Action, ProtocolName, SessionKey, TurnEnd, TurnScore

__all__ = [
    "BREAKDOWN_DIMENSIONS",
    "BreakdownCell",
    "SessionScore",
    "SystemKey",
    "SystemSummary",
    "TurnLoss",
    "breakdown",
    "cer",
    "cer_by_position",
    "ex_by_position",
    "group_by_system",
    "session_scores",
    "summarize",
    "turn_losses",
]

logger = logging.getLogger(__name__)

SystemKey = tuple[str, str, int, str, str]
"""``(model, protocol, budget multiplier, variant, harness)``."""


class SessionScore(BaseModel):
    """Aggregates of one session as played (SEM, cliff, cost).

    Attributes:
        run_id / model / protocol / budget_multiplier / variant / session_id / graph /
            persona: identity, as in :class:`TurnRecord`.
        turns: valid turns scored.
        ex: mean strict EX over the turns.
        sem: session exact match, 1 iff every turn has EX = 1 (CypherTurn §3.2).
        cliff_turns: turns auto-scored 0 by the budget cliff.
        budget_exhausted: the budget ran out in some turn of the session
            (:attr:`TurnRecord.budget_exhausted`: agentic, the shared budget reached
            zero; guided, a turn used its 3 actions without SUBMIT_ANSWER).
        output_tokens: clean output tokens over the session (the Tok/S numerator).
        prompt_tokens: prompt tokens over the session.
        latency_s: summed turn latency, seconds.
    """

    run_id: str
    model: str
    protocol: ProtocolName
    budget_multiplier: int
    variant: str = BASE_VARIANT
    session_id: str
    graph: str
    persona: str
    turns: int
    ex: float
    sem: int
    cliff_turns: int
    budget_exhausted: bool
    output_tokens: int
    prompt_tokens: int
    latency_s: float


BREAKDOWN_DIMENSIONS: dict[str, Callable[[TurnScore], str]] = {
    "graph": lambda s: s.record.graph,
    "phenomenon": lambda s: s.record.phenomenon,
    "chain_mode": lambda s: s.record.chain_mode,
    "persona": lambda s: s.record.persona,
    "turn": lambda s: f"T{s.record.turn}",
    "protocol": lambda s: s.record.protocol.value,
    "budget": lambda s: f"x{s.record.budget_multiplier}",
    "variant": lambda s: s.record.variant,
}
"""The breakdown dimensions of CypherTurn appendix E, by name."""

_NON_SUBMIT = (Action.EXECUTE_CYPHER, Action.INSPECT_SCHEMA, Action.SEARCH_VALUES, Action.ASK_USER)


def _valid(scores: Iterable[TurnScore]) -> list[TurnScore]:
    return [s for s in scores if s.valid]


@functools.cache
def _warn_replayed(runs: tuple[str, ...], system: SystemKey, sessions: tuple[str, ...]) -> None:
    """Log once per process that ``runs`` of ``system`` played the same ``sessions``."""
    logger.warning(
        "runs %s of one system (%s) played the same sessions (%s%s): kept apart",
        ", ".join(runs),
        ", ".join(map(str, system)),
        ", ".join(sessions[:3]),
        ", ..." if len(sessions) > 3 else "",
    )


def _with_data(system: SystemKey, data: str) -> SystemKey:
    """``system`` with the data it played named after its harness (never pooled with other data)."""
    if not data:
        return system
    harness = system[4]
    return (*system[:4], f"{harness}, {data}" if harness else data)


def group_by_system(scores: Iterable[TurnScore]) -> dict[SystemKey, list[TurnScore]]:
    """Valid turn scores grouped by ``(model, protocol, budget, variant, harness)``, keys sorted.

    Turns played on other data than the development sessions (a frozen test
    split, paraphrased utterances: :attr:`TurnRecord.data_label`) are a system of
    their own, the data named after the harness (``explicit, guards, test data``),
    so no figure pools development and test data. Runs of one system are merged
    (a subset split over runs, a run resumed under another id), except when two of
    them played the same session: then each run
    is a system of its own, its harness ending with ``run <run_id>``
    (``explicit, guards, run agentic3-final``), and a warning names the runs.
    Merging them would count the session twice: twice the turns, a bootstrap
    over duplicated sessions, and a paired comparison that sums two plays of one
    session. Kept apart, the report pairs them like any two harnesses of a model.
    """
    merged: dict[SystemKey, list[TurnScore]] = defaultdict(list)
    for score in _valid(scores):
        merged[_with_data(score.record.system, score.record.data_label)].append(score)
    groups: dict[SystemKey, list[TurnScore]] = {}
    for system, turns in merged.items():
        runs_of: dict[str, set[str]] = defaultdict(set)
        for t in turns:
            runs_of[t.record.session_id].add(t.record.run_id)
        replayed = sorted(s for s, runs in runs_of.items() if len(runs) > 1)
        if not replayed:
            groups[system] = turns
            continue
        runs = sorted({t.record.run_id for t in turns})
        _warn_replayed(tuple(runs), system, tuple(replayed))
        for t in turns:
            harness = system[4]
            tag = f"run {t.record.run_id}"
            key = (*system[:4], f"{harness}, {tag}" if harness else tag)
            groups.setdefault(key, []).append(t)
    return dict(sorted(groups.items()))


def _by_session(
    scores: Iterable[TurnScore],
) -> dict[SessionKey, list[TurnScore]]:
    sessions: dict[SessionKey, list[TurnScore]] = defaultdict(list)
    for score in scores:
        sessions[score.record.session_key].append(score)
    for turns in sessions.values():
        turns.sort(key=lambda s: s.record.turn)
    return sessions


def session_scores(scores: Iterable[TurnScore]) -> list[SessionScore]:
    """Aggregate valid turns per session as played.

    Args:
        scores: turn scores of any number of runs and systems.

    Returns:
        One :class:`SessionScore` per session key, sorted by key.
    """
    out = []
    for key, turns in sorted(_by_session(_valid(scores)).items()):
        first = turns[0].record
        exhausted = any(t.record.budget_exhausted for t in turns)
        out.append(
            SessionScore(
                run_id=key[0],
                model=first.model,
                protocol=first.protocol,
                budget_multiplier=first.budget_multiplier,
                variant=first.variant,
                session_id=first.session_id,
                graph=first.graph,
                persona=first.persona,
                turns=len(turns),
                ex=fmean(t.ex for t in turns),
                sem=int(all(t.ex == 1 for t in turns)),
                cliff_turns=sum(t.record.cliff for t in turns),
                budget_exhausted=exhausted,
                output_tokens=sum(t.record.output_tokens for t in turns),
                prompt_tokens=sum(t.record.prompt_tokens for t in turns),
                latency_s=sum(t.record.latency_s for t in turns),
            )
        )
    return out


def _cer_counts(scores: Iterable[TurnScore]) -> dict[int, tuple[int, int]]:
    """Per turn position: (turns failing after a failed dependency, turns after a failed dependency)."""
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for turns in _by_session(_valid(scores)).values():
        by_turn = {t.record.turn: t for t in turns}
        for t in turns:
            dep = t.record.depends_on
            if dep is None or dep not in by_turn or by_turn[dep].ex != 0:
                continue
            cell = counts[t.record.turn]
            cell[1] += 1
            cell[0] += int(t.ex == 0)
    return {pos: (c[0], c[1]) for pos, c in counts.items()}


def cer(scores: Iterable[TurnScore]) -> float | None:
    """Cascade error rate P(EX_t = 0 | EX_dep(t) = 0) over chain-dependent turns.

    The conditioning turn is the one the turn depends on (``depends_on``), which
    is t-1 for the chained turns of CypherTurn (§5.2, Figure 8).

    Args:
        scores: turn scores (usually of one system).

    Returns:
        The rate, or ``None`` when no chain-dependent turn follows a failed one.
    """
    counts = _cer_counts(scores)
    failed = sum(c[0] for c in counts.values())
    total = sum(c[1] for c in counts.values())
    return failed / total if total else None


def cer_by_position(scores: Iterable[TurnScore]) -> dict[int, float | None]:
    """CER per turn position t (T2..T10), as in CypherTurn Figure 8.

    Returns:
        position -> rate (``None`` where no turn at that position follows a failure).
    """
    return {pos: (f / n if n else None) for pos, (f, n) in sorted(_cer_counts(scores).items())}


def ex_by_position(scores: Iterable[TurnScore]) -> dict[int, float]:
    """Mean strict EX per turn position (CypherTurn Figure 6)."""
    groups: dict[int, list[int]] = defaultdict(list)
    for s in _valid(scores):
        groups[s.record.turn].append(s.ex)
    return {pos: fmean(v) for pos, v in sorted(groups.items())}


class BreakdownCell(BaseModel):
    """Mean EX (and relaxed EX, PSJS) of one system on one value of a dimension."""

    n: int
    ex: float
    ex_relaxed: float
    psjs: float | None


def breakdown(
    scores: Iterable[TurnScore], dimension: str
) -> dict[SystemKey, dict[str, BreakdownCell]]:
    """EX by one breakdown dimension, per system (CypherTurn appendix E, Tables 10-17).

    Args:
        scores: turn scores.
        dimension: one of :data:`BREAKDOWN_DIMENSIONS`.

    Returns:
        system -> dimension value -> cell, values sorted.

    Raises:
        KeyError: unknown dimension.
    """
    key_of = BREAKDOWN_DIMENSIONS[dimension]
    out: dict[SystemKey, dict[str, BreakdownCell]] = {}
    for system, turns in group_by_system(scores).items():
        cells: dict[str, list[TurnScore]] = defaultdict(list)
        for t in turns:
            cells[key_of(t)].append(t)
        out[system] = {
            value: _cell(group)
            for value, group in sorted(cells.items(), key=lambda kv: _natural(kv[0]))
        }
    return out


def _natural(value: str) -> tuple[str, int]:
    digits = "".join(ch for ch in value if ch.isdigit())
    return (value.rstrip("0123456789"), int(digits) if digits else -1)


def _cell(turns: Sequence[TurnScore]) -> BreakdownCell:
    psjs = [t.psjs for t in turns if t.psjs is not None]
    return BreakdownCell(
        n=len(turns),
        ex=fmean(t.ex for t in turns),
        ex_relaxed=fmean(t.ex_relaxed for t in turns),
        psjs=fmean(psjs) if psjs else None,
    )


class SystemSummary(BaseModel):
    """One row of the main table, with the cost and cliff figures (CypherTurn Tables 2, 18, 19, 25).

    Attributes:
        model / protocol / budget_multiplier / variant / harness: the system.
        sessions / turns: counts of valid sessions and turns.
        ex / ex_relaxed: mean strict and relaxed EX over turns.
        ex_subset: mean of the gold-columns-subset variant of relaxed EX, over the
            turns scored with it (``None`` for scores written before it existed).
        psjs: mean CypherBench PSJS over turns where it could be computed.
        psjs_coverage: fraction of turns with a CypherBench PSJS value.
        psjs_excluded: turns left out of ``psjs`` (gold provenance missing, or
            scored before the metric existed), counted rather than scored.
        psjs_output: mean output-provenance PSJS (ours) over turns with a value.
        psjs_output_excluded: turns left out of ``psjs_output``.
        sem: fraction of sessions with every turn EX = 1.
        cer: cascade error rate over chain-dependent turns.
        tok_per_session: mean clean output tokens per session (Tok/S).
        prompt_tokens_per_session: mean prompt tokens per session.
        latency_s_per_turn: mean turn latency, seconds.
        qer: fraction of the turns' executed queries that failed (RAS eq. 4).
        executions_per_prediction: engine calls per predicted query when scoring.
        exhaustion_rate: fraction of sessions whose budget ran out
            (:attr:`TurnRecord.budget_exhausted`).
        ex_excl_cliff: mean EX over turns not auto-scored by the cliff.
        action_fractions: share of each non-SUBMIT action among non-SUBMIT actions.
        metrics: the mean of every registered turn metric
            (:data:`~cypherturn.metrics.METRICS`, built-ins included) over the
            turns with a value, by name (``None``: no turn has one).
    """

    model: str
    protocol: ProtocolName
    budget_multiplier: int
    variant: str = "base"
    harness: str = ""
    sessions: int
    turns: int
    ex: float
    ex_relaxed: float
    ex_subset: float | None = None
    psjs: float | None
    psjs_coverage: float
    psjs_excluded: int = 0
    psjs_output: float | None = None
    psjs_output_excluded: int = 0
    sem: float
    cer: float | None
    tok_per_session: float
    prompt_tokens_per_session: float
    latency_s_per_turn: float
    qer: float | None
    executions_per_prediction: float | None
    exhaustion_rate: float
    ex_excl_cliff: float | None
    action_fractions: dict[str, float] = Field(default_factory=dict)
    metrics: dict[str, float | None] = Field(default_factory=dict)

    @property
    def system(self) -> SystemKey:
        """The summarised system, as :func:`group_by_system` keys it."""
        return (self.model, self.protocol.value, self.budget_multiplier, self.variant, self.harness)


def _summary(system: SystemKey, turns: list[TurnScore]) -> SystemSummary:
    sessions = session_scores(turns)
    psjs = [t.psjs for t in turns if t.psjs is not None]
    subset = [t.ex_subset for t in turns if t.ex_subset is not None]
    output = [t.psjs_output for t in turns if t.psjs_output is not None]
    attempts = [a for t in turns for a in t.record.query_attempts]
    predicted = [t for t in turns if t.executions > 0]
    not_cliff = [t.ex for t in turns if not t.record.cliff]
    action_totals = {a: sum(t.record.actions.get(a, 0) for t in turns) for a in _NON_SUBMIT}
    total_actions = sum(action_totals.values())
    return SystemSummary(
        model=system[0],
        protocol=ProtocolName(system[1]),
        budget_multiplier=system[2],
        variant=system[3],
        harness=system[4],
        sessions=len(sessions),
        turns=len(turns),
        ex=fmean(t.ex for t in turns),
        ex_relaxed=fmean(t.ex_relaxed for t in turns),
        ex_subset=fmean(subset) if subset else None,
        psjs=fmean(psjs) if psjs else None,
        psjs_coverage=len(psjs) / len(turns),
        psjs_excluded=len(turns) - len(psjs),
        psjs_output=fmean(output) if output else None,
        psjs_output_excluded=len(turns) - len(output),
        sem=fmean(s.sem for s in sessions),
        cer=cer(turns),
        tok_per_session=fmean(s.output_tokens for s in sessions),
        prompt_tokens_per_session=fmean(s.prompt_tokens for s in sessions),
        latency_s_per_turn=fmean(t.record.latency_s for t in turns),
        qer=sum(not a.ok for a in attempts) / len(attempts) if attempts else None,
        executions_per_prediction=(
            sum(t.executions for t in predicted) / len(predicted) if predicted else None
        ),
        exhaustion_rate=fmean(s.budget_exhausted for s in sessions),
        ex_excl_cliff=fmean(not_cliff) if not_cliff else None,
        action_fractions=(
            {a.value: n / total_actions for a, n in action_totals.items()} if total_actions else {}
        ),
        metrics={m.name: _mean(m.value(t) for t in turns) for m in METRICS.items()},
    )


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def summarize(scores: Iterable[TurnScore]) -> list[SystemSummary]:
    """One :class:`SystemSummary` per system, sorted by model, protocol, budget, variant, harness.

    Args:
        scores: turn scores of any number of systems.

    Returns:
        The summaries (systems with no valid turn are left out).
    """
    return [_summary(system, turns) for system, turns in group_by_system(scores).items()]


class TurnLoss(BaseModel):
    """Where one system's turns were lost: wrong turns by the reason their turn ended.

    Beside the action-level unreadable rate, it says which end of a turn costs EX: a
    model that submits wrong queries needs better queries, one whose turns end stuck,
    capped or over the cliff needs to act differently (the loss-by-cause row of
    docs/design/metrics.md; the reasons are :class:`~cypherturn.records.TurnEnd`, CypherTurn App. D.5).

    Attributes:
        turns: valid turns.
        wrong: of them, turns with EX = 0.
        ends: wrong turns by why their turn ended (only the reasons that occur).
        unrecorded: wrong turns whose record names no end reason (written before
            :attr:`~cypherturn.records.TurnRecord.end` existed, with no session log
            to read it from).
        actions: the model's actions over the turns that count them
            (:attr:`~cypherturn.records.TurnRecord.model_actions`).
        unreadable: of them, replies not read as an action.
        counted_turns: turns that count their actions (the others are left out of
            ``actions`` and ``unreadable``).
    """

    turns: int
    wrong: int
    ends: dict[TurnEnd, int] = Field(default_factory=dict)
    unrecorded: int = 0
    actions: int = 0
    unreadable: int = 0
    counted_turns: int = 0

    @property
    def unreadable_rate(self) -> float | None:
        """Unreadable actions over actions (``None`` when no turn counts them)."""
        return self.unreadable / self.actions if self.actions else None


def turn_losses(scores: Iterable[TurnScore]) -> dict[SystemKey, TurnLoss]:
    """Wrong turns by end reason and the unreadable-action rate, per system.

    Args:
        scores: turn scores of any number of systems (only valid turns count).

    Returns:
        system -> :class:`TurnLoss`, keyed as :func:`group_by_system` keys systems.

    Example:
        >>> turn_losses([])
        {}
    """
    out: dict[SystemKey, TurnLoss] = {}
    for system, turns in group_by_system(scores).items():
        wrong = [t.record for t in turns if t.ex == 0]
        ends: dict[TurnEnd, int] = defaultdict(int)
        for record in wrong:
            if record.end is not None:
                ends[record.end] += 1
        counted = [t.record for t in turns if t.record.model_actions is not None]
        out[system] = TurnLoss(
            turns=len(turns),
            wrong=len(wrong),
            ends={end: ends[end] for end in TurnEnd if end in ends},
            unrecorded=sum(r.end is None for r in wrong),
            actions=sum(r.model_actions or 0 for r in counted),
            unreadable=sum(r.unreadable_actions or 0 for r in counted),
            counted_turns=len(counted),
        )
    return out

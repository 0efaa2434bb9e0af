"""Playing one session and logging it: the runner's unit of work and of resume."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel

from cypherturn.agent import (
    ActionExecutor,
    ActionStep,
    TurnEnd,
    UserSimulator,
    action_grammar,
    tool_definitions,
)
from cypherturn.errors import RunInterrupted
from cypherturn.graph import GraphEngine, GraphSchema
from cypherturn.models import ChatModel, in_own_context
from cypherturn.protocols import (
    GUIDED_ACTIONS,
    ActionFormat,
    ModelCaller,
    PromptSet,
    ProtocolSettings,
    SessionEnv,
    TurnOutcome,
    load_prompts,
    play_session,
    player_view,
    session_budget,
)
from cypherturn.records import Action, ProtocolName, QueryAttempt, TurnRecord
from cypherturn.runner._core import INFRA_ERRORS
from cypherturn.runner._log import (
    SessionFinished,
    SessionLog,
    SessionStarted,
    SessionStatus,
    StepLogged,
    TurnFinished,
)
from cypherturn.sessions import Session

FinishedTurn = tuple[list[StepLogged], TurnFinished]
"""A turn an interrupted run finished: its step events and its ``turn_end`` event."""

__all__ = [
    "FinishedTurn",
    "SessionResult",
    "run_session",
    "session_digest",
    "turn_record",
    "with_variant",
]

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class SessionResult:
    """What running one session produced.

    Attributes:
        session_id: the session.
        status: completed or infrastructure failure.
        records: one scorer record per turn (empty on infrastructure failure).
        error: the infrastructure failure's message.
        resumed: the session was finished in an earlier run and not replayed.
    """

    session_id: str
    status: SessionStatus
    records: list[TurnRecord] = field(default_factory=list)
    error: str | None = None
    resumed: bool = False


SIMULATOR_CONTEXT = "simulator"
"""The llama.cpp context name of a GGUF evaluated model when it also plays the user simulator."""


def session_digest(session: Session) -> str:
    """SHA-256 of the session's benchmark line (hex, 16 characters)."""
    return hashlib.sha256(session.to_line().encode()).hexdigest()[:16]


def with_variant(record: TurnRecord, settings: ProtocolSettings) -> TurnRecord:
    """``record`` carrying the variant of ``settings``.

    Logs written before :class:`TurnRecord` had a variant read back as ``base``; a
    log is only resumed under the configuration it was written with (its digest
    includes the variant), so the configuration's variant is the record's.
    """
    if record.variant == settings.variant:
        return record
    return record.model_copy(update={"variant": settings.variant})


def turn_record(
    outcome: TurnOutcome,
    session: Session,
    *,
    run_id: str,
    model: str,
    settings: ProtocolSettings,
    sim_model: str | None = None,
) -> TurnRecord:
    """The scorer's :class:`TurnRecord` of a played turn.

    Args:
        outcome: the played turn.
        session: its session.
        run_id: the run's identifier.
        model: the evaluated model's spec.
        settings: the protocol settings.
        sim_model: the user simulator's model spec when the run named one (agentic);
            ``None``: the evaluated model played it, or the protocol has no simulator.

    Returns:
        The record; cliff turns carry ``cliff=True`` and no prediction. It names
        why the turn ended, the simulator, and the model's actions and unreadable
        replies (the report's loss by cause).
    """
    turn = session.turns[outcome.turn - 1]
    steps: list[ActionStep] = outcome.steps
    counts = Counter(s.action for s in steps if s.action is not None)
    attempts = [
        QueryAttempt(
            index=i,
            outcome="ok" if s.ok else "error",
            error_class=s.error_class,
            prompt_tokens=s.prompt_tokens,
            completion_tokens=s.output_tokens + s.reasoning_tokens,
            model_latency_s=s.model_latency_s,
            execution_latency_s=s.execution_latency_s,
        )
        for i, s in enumerate((s for s in steps if s.action is Action.EXECUTE_CYPHER), start=1)
    ]
    return TurnRecord(
        run_id=run_id,
        model=model,
        protocol=settings.protocol,
        budget_multiplier=settings.budget_multiplier,
        variant=settings.variant,
        harness=settings.harness,
        session_id=session.session_id,
        turn=turn.turn_index,
        graph=session.world,
        phenomenon="+".join(p.value for p in turn.phenomena),
        chain_mode=turn.chain_mode.value,
        persona=session.persona.value,
        depends_on=turn.depends_on,
        gold_cypher=turn.gold_cypher,
        predicted_cypher=outcome.predicted_cypher,
        cliff=outcome.end is TurnEnd.CLIFF,
        budget_remaining=outcome.budget_remaining,
        actions=dict(counts),
        output_tokens=sum(s.output_tokens for s in steps),
        reasoning_tokens=sum(s.reasoning_tokens for s in steps),
        prompt_tokens=sum(s.prompt_tokens for s in steps),
        latency_s=outcome.latency_s,
        query_attempts=attempts,
        end=outcome.end,
        sim_model=sim_model if settings.protocol is ProtocolName.AGENTIC else None,
        model_actions=sum(not s.by_harness for s in steps),
        unreadable_actions=sum(s.action is None for s in steps),
        split=session.split,
        paraphrased=turn.rewrite is not None,
    )


def run_session(
    session: Session,
    *,
    model: ChatModel,
    engine: GraphEngine,
    settings: ProtocolSettings,
    run_id: str = "run",
    sim_model: ChatModel | None = None,
    schema: GraphSchema | None = None,
    prompts: PromptSet | None = None,
    log_path: Path | None = None,
    config_digest: str = "",
    resume: Sequence[FinishedTurn] = (),
    on_turn: Callable[[TurnRecord], None] | None = None,
    stop: threading.Event | None = None,
) -> SessionResult:
    """Play one session under a protocol and log every action as it happens.

    Infrastructure failures (:data:`~cypherturn.runner.INFRA_ERRORS`: the endpoint
    still failing after the model's retries, a malformed endpoint answer, an
    unreachable engine) end the session with status ``infra_failure`` and no
    records: they are never scored as model errors.

    Resume works at turn granularity: the turns in ``resume`` are copied into the
    new log as they were logged (events and timestamps unchanged), restore the
    protocol's state (agentic history, spent budget, persistent schema) and are
    not played again; play continues with the next turn.

    Args:
        session: the session.
        model: the evaluated model.
        engine: an engine on the session's graph (``session.world``), loaded.
        settings: protocol, budget multiplier, variant, sampling settings.
        run_id: the run identifier written into the records.
        sim_model: the user simulator's model (agentic; default: ``model``, a GGUF
            model in a llama.cpp context of its own so that the simulator's calls do
            not evict the agent's prompt cache, :meth:`GGUFChatModel.with_own_context`).
        schema: the graph's schema when known (otherwise introspected).
        prompts: the prompt set (default: the packaged current version).
        log_path: where to write the session log (``None``: no log).
        config_digest: digest of the run configuration, recorded in the log.
        resume: the turns an interrupted run of this session finished, in order.
        on_turn: called with each played turn's record once it is logged.
        stop: checked after every logged action; once set, the session ends there
            (its log ends mid-turn, as after a crash, and resumes from that turn).
            Model calls made under it (:func:`~cypherturn.models.call_limits`, set
            by :func:`~cypherturn.runner.run_batch`) are abandoned when it is set.

    Returns:
        The :class:`SessionResult` (records of resumed and played turns).

    Raises:
        DatasetError: the log cannot be written, or ``resume`` is not the
            session's first turns.
        RunInterrupted: ``stop`` was set (also when a model call in flight was
            abandoned, :class:`~cypherturn.errors.CallAbandoned`, or failed as the
            run stopped).
    """
    prompts = prompts or load_prompts()
    executor = ActionExecutor(engine, schema=schema)
    budget = (
        GUIDED_ACTIONS * len(session.turns)
        if settings.protocol is ProtocolName.GUIDED
        else session_budget(len(session.turns), settings.budget_multiplier)
    )
    started = SessionStarted(
        session_id=session.session_id,
        config_digest=config_digest,
        session_digest=session_digest(session),
        turns=len(session.turns),
        budget=budget,
        resumed_turns=len(resume),
    )
    kept: list[BaseModel] = [e for steps, finished in resume for e in (*steps, finished)]
    log = SessionLog(log_path, first=[started, *kept]) if log_path is not None else None
    records: list[TurnRecord] = []

    def emit(event: SessionStarted | StepLogged | TurnFinished | SessionFinished) -> None:
        if log is not None:
            log.append(event)

    def log_step(step: ActionStep) -> None:
        emit(StepLogged(step=step))
        if stop is not None and stop.is_set():
            raise RunInterrupted(f"session {session.session_id} stopped: the run was interrupted")

    def finish_turn(outcome: TurnOutcome) -> None:
        record = turn_record(
            outcome,
            session,
            run_id=run_id,
            model=model.spec,
            settings=settings,
            sim_model=sim_model.spec if sim_model is not None else None,
        )
        records.append(record)
        emit(TurnFinished(end=outcome.end, record=record))
        if on_turn is not None:
            on_turn(record)

    try:
        prior: list[TurnOutcome] = []
        for step_events, finished in resume:
            records.append(with_variant(finished.record, settings))
            prior.append(
                TurnOutcome(
                    turn=finished.record.turn,
                    predicted_cypher=finished.record.predicted_cypher,
                    end=finished.end,
                    steps=[e.step for e in step_events],
                    budget_remaining=finished.record.budget_remaining or 0,
                    latency_s=finished.record.latency_s,
                )
            )
        simulator = None
        if settings.protocol is ProtocolName.AGENTIC:
            simulator = UserSimulator(
                sim_model or in_own_context(model, SIMULATOR_CONTEXT),
                executor.schema,
                session.persona.value,
                prompts["simulator_system"],
                seed=settings.seed,
            )
        env = SessionEnv(
            call=ModelCaller(
                model,
                temperature=settings.temperature,
                max_tokens=settings.max_tokens,
                seed=settings.seed,
                tools=tool_definitions() if settings.action_format is ActionFormat.TOOLS else None,
                grammar=action_grammar() if settings.action_grammar else None,
            ),
            executor=executor,
            prompts=prompts,
            settings=settings,
            on_step=log_step,
            on_turn=finish_turn,
            simulator=simulator,
        )
        try:
            # the players get the view; the golds stay here, for the records and the scorer
            play_session(player_view(session, settings.protocol), env, prior)
        except INFRA_ERRORS as e:
            if stop is not None and stop.is_set():
                # a request or query that failed because the run is stopping (its
                # connection closed under it) is an interruption, not an endpoint
                # fault: the log ends mid-turn and resume redoes the turn
                raise RunInterrupted(
                    f"session {session.session_id} stopped: the run was interrupted"
                ) from e
            logger.warning("session %s: infrastructure failure: %s", session.session_id, e)
            emit(SessionFinished(status=SessionStatus.INFRA_FAILURE, error=str(e)))
            return SessionResult(session.session_id, SessionStatus.INFRA_FAILURE, error=str(e))
        emit(SessionFinished(status=SessionStatus.COMPLETED))
        return SessionResult(session.session_id, SessionStatus.COMPLETED, records=records)
    finally:
        if log is not None:
            log.close()

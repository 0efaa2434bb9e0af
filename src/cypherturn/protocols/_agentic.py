"""The agentic protocol: shared budget B = T x m, schema withheld, own history (CypherTurn §3.1, App. D.5).

The variants of appendix F (Agentic-PS, Disclosed-Horizon, Budget-Encouraging)
change exactly one dimension each; each is a registered
:class:`~cypherturn.protocols.ProtocolVariant`, read here through its fields.

The protocol plays a :class:`~cypherturn.sessions.SessionView` without oracle
history: no gold query or gold result is reachable from it (§3.1: the history is
the model's own).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from cypherturn.agent import ActionExecutor, ActionStep, TurnContext, TurnEnd
from cypherturn.errors import ConfigError
from cypherturn.grounding import previous_names
from cypherturn.models import ChatMessage
from cypherturn.protocols._env import SessionEnv
from cypherturn.protocols._loop import run_action_loop, turn_end
from cypherturn.protocols._prompts import PromptSet, action_prompt, fill, with_notes
from cypherturn.protocols._settings import ProtocolSettings, TurnOutcome
from cypherturn.protocols._variants import TurnBudget, get_variant
from cypherturn.records import Action
from cypherturn.sessions import PlayerTurn, SessionView

__all__ = [
    "HISTORY_RESULT_CHARS",
    "agentic_context",
    "agentic_history",
    "agentic_system",
    "play_agentic",
    "session_budget",
]

HISTORY_RESULT_CHARS = 200
"""Characters of an EXECUTE_CYPHER result kept in the agentic history (App. D.5)."""


def session_budget(turns: int, multiplier: int) -> int:
    """The shared action budget ``B = T x m`` (§3.1)."""
    return turns * multiplier


def _clip(text: str, limit: int = HISTORY_RESULT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def agentic_history(turns: list[tuple[PlayerTurn, list[ActionStep]]]) -> str:
    """The interaction history of completed turns, as the model made it.

    Records EXECUTE_CYPHER payloads with results truncated to 200 characters,
    ASK_USER exchanges and SUBMIT_ANSWER payloads; INSPECT_SCHEMA, SEARCH_VALUES
    and unparseable replies are omitted (App. D.5).

    Args:
        turns: each completed turn with its steps, in order.

    Returns:
        The history block (empty when there is none), ending with a blank line.
    """
    blocks: list[str] = []
    for turn, steps in turns:
        lines = [f"Turn {turn.turn_index}", f"User: {turn.utterance}"]
        for step in steps:
            if step.action is Action.EXECUTE_CYPHER:
                lines.append(f"EXECUTE_CYPHER: {step.payload}\nResult: {_clip(step.observation)}")
            elif step.action is Action.ASK_USER:
                lines.append(f"ASK_USER: {step.payload}\n{step.observation}")
            elif step.action is Action.SUBMIT_ANSWER:
                lines.append(f"SUBMIT_ANSWER: {step.payload}")
        blocks.append("\n".join(lines))
    if not blocks:
        return ""
    return "Conversation so far:\n" + "\n\n".join(blocks) + "\n\n"


_HARNESS_SCHEMA = "the INSPECT_SCHEMA the harness ran for you at the start of the session"
"""How the schema block names a schema the harness inspected (``schema_first``)."""


def _inspect_for_model(env: SessionEnv, turn: int, remaining: int) -> ActionStep:
    """The session's first action, INSPECT_SCHEMA, taken by the harness (``schema_first``).

    Charged one unit like any action; the step has no reply and no tokens.

    Raises:
        EngineConnectionError: the engine is unreachable.
    """
    obs = env.executor.inspect_schema()
    return ActionStep(
        turn=turn,
        step=1,
        action=Action.INSPECT_SCHEMA,
        observation=obs.text,
        ok=obs.ok,
        execution_latency_s=obs.latency_s,
        budget_remaining=remaining - 1,
        by_harness=True,
    )


def agentic_context(
    executor: ActionExecutor, turn: PlayerTurn, previous_answer: str | None
) -> TurnContext:
    """The turn's question and the previous result as the agent's own history has it.

    Under the agentic protocol the history is the model's (§3.1): the previous
    result is what the previous turn's prediction returns, when it lists names of
    one label (:func:`~cypherturn.grounding.previous_names`).

    Args:
        executor: the session's action executor (runs the previous prediction).
        turn: the current turn.
        previous_answer: the previous turn's prediction (``None``: none).

    Returns:
        The :class:`~cypherturn.agent.TurnContext` for ``turn``.

    Raises:
        EngineConnectionError: the engine is unreachable.
    """
    previous = None
    if previous_answer:
        result = executor.result(previous_answer)
        if result is not None:
            previous = previous_names(result.columns, result.rows, executor.index)
    return TurnContext(question=turn.utterance, previous=previous)


def agentic_system(prompts: PromptSet, settings: ProtocolSettings) -> str:
    """The agentic system prompt (no schema); a variant may swap the efficiency line."""
    system = fill(
        prompts["agentic_system"],
        actions=action_prompt(prompts, settings.action_format),
        efficiency=prompts[get_variant(settings.variant).efficiency_prompt],
    )
    return with_notes(
        system, prompts, output_note=settings.output_note, chain_note=settings.chain_note
    )


def play_agentic(
    view: SessionView, env: SessionEnv, prior: Sequence[TurnOutcome] = ()
) -> list[TurnOutcome]:
    """Play a session under the agentic protocol.

    The budget ``B = T x m`` decrements with every step of every turn; once it is
    zero every remaining turn is a cliff turn with no prediction (no model call).
    With ``settings.schema_first`` (a harness setting beyond the paper) the session's
    first action is an INSPECT_SCHEMA the harness takes before the first model call
    (one unit, a ``by_harness`` step of turn 1); its text heads turn 1's prompt, and
    under Agentic-PS every later turn's, as the kept schema.

    Args:
        view: the session as the player sees it, without oracle history
            (:meth:`~cypherturn.sessions.SessionView.of`).
        env: model, executor, simulator, prompts, settings and log sinks.
        prior: the session's first turns as an interrupted run played them
            (resume): their steps rebuild the history, the spent budget, the
            persistent schema and the simulator's rejection rotation; they are
            neither replayed nor passed to ``env.on_turn`` again.

    Returns:
        One :class:`TurnOutcome` per turn not in ``prior``.

    Raises:
        ConfigError: no user simulator was given.
        ModelUnavailableError | ModelResponseError | EngineConnectionError: infrastructure failures.
    """
    simulator = env.simulator
    if simulator is None:
        raise ConfigError("the agentic protocol needs a user simulator")
    settings, prompts = env.settings, env.prompts
    variant = get_variant(settings.variant)
    total_turns = len(view.turns)
    remaining = session_budget(total_turns, settings.budget_multiplier)
    system = agentic_system(prompts, settings)
    done: list[tuple[PlayerTurn, list[ActionStep]]] = []
    persistent: list[str] = []
    outcomes: list[TurnOutcome] = []
    # where the kept schema came from: the first INSPECT_SCHEMA of the session
    source = "your INSPECT_SCHEMA"

    def keep_schema(text: str) -> None:
        if variant.keeps_schema and not persistent:
            persistent.append(text)

    for played in prior:
        remaining -= len(played.steps)
        for step in played.steps:
            if step.action is Action.INSPECT_SCHEMA and step.ok:
                if step.by_harness:
                    source = _HARNESS_SCHEMA
                keep_schema(step.observation)
            elif step.action is Action.ASK_USER:
                simulator.note_prior_reply(step.observation.removeprefix("User: "))
        if played.end is not TurnEnd.CLIFF:
            done.append((view.turns[played.turn - 1], played.steps))

    for turn in view.turns[len(prior) :]:
        started = time.perf_counter()
        if remaining == 0:
            outcome = TurnOutcome(turn=turn.turn_index, predicted_cypher=None, end=TurnEnd.CLIFF)
            env.on_turn(outcome)
            outcomes.append(outcome)
            continue
        taken: list[ActionStep] = []
        if settings.schema_first and not prior and turn is view.turns[0]:
            taken.append(_inspect_for_model(env, turn.turn_index, remaining))
            env.on_step(taken[0])
            source = _HARNESS_SCHEMA
            keep_schema(taken[0].observation)
        shown = persistent[0] if persistent else (taken[0].observation if taken else "")
        schema = f"Graph schema (from {source}):\n{shown}\n\n" if shown else ""
        horizon = variant.note(
            prompts, TurnBudget(total_turns, turn.turn_index, settings.budget_multiplier, remaining)
        )
        text = fill(
            prompts["agentic_turn"],
            schema=schema,
            horizon=horizon,
            history=agentic_history(done),
            utterance=turn.utterance,
        )
        messages = [
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=text),
        ]

        def ask(question: str, asks: int, turn: PlayerTurn = turn) -> tuple[str, int]:
            reply = simulator.reply(question, turn, asks_before=asks)
            return reply.text, reply.prompt_tokens + reply.completion_tokens

        context = None
        if settings.grounding.question or settings.grounding.reference:
            answered = [o.predicted_cypher for o in (*prior, *outcomes)]
            context = agentic_context(env.executor, turn, answered[-1] if answered else None)
        result = run_action_loop(
            context=context,
            call=env.call,
            messages=messages,
            turn=turn.turn_index,
            max_actions=remaining,
            executor=env.executor,
            ask=ask,
            on_step=env.on_step,
            footer=lambda left: f"Budget left: {left} actions.",
            on_schema=keep_schema,
            grounding=settings.grounding,
            framing=settings.framing,
            guards=settings.decoding_guards,
            repeat_guard=settings.repeat_guard,
            taken=taken,
        )
        remaining -= len(result.steps)
        outcome = TurnOutcome(
            turn=turn.turn_index,
            predicted_cypher=result.prediction,
            end=turn_end(result, TurnEnd.BUDGET_EXHAUSTED),
            steps=result.steps,
            budget_remaining=remaining,
            latency_s=time.perf_counter() - started,
        )
        env.on_turn(outcome)
        outcomes.append(outcome)
        done.append((turn, result.steps))
    return outcomes

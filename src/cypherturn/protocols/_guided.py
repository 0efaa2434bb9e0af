"""The guided protocol: oracle history, schema injected, 3 actions per turn (CypherTurn §3.1, App. D.5).

The protocol plays a :class:`~cypherturn.sessions.SessionView` with oracle history:
it reads the gold results of earlier turns (the history the paper shows) through
:meth:`~cypherturn.sessions.SessionView.earlier_result`, and no gold query at all.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from cypherturn.agent import TurnContext, TurnEnd, render_rows, render_schema
from cypherturn.grounding import GraphIndex, previous_names
from cypherturn.models import ChatMessage
from cypherturn.protocols._env import SessionEnv
from cypherturn.protocols._loop import AskHandler, run_action_loop, turn_end
from cypherturn.protocols._prompts import action_prompt, fill, with_notes
from cypherturn.protocols._settings import GUIDED_ACTIONS, TurnOutcome
from cypherturn.protocols._vocabulary import Framing
from cypherturn.sessions import ChainMode, Phenomenon, PlayerTurn, SessionView

__all__ = [
    "DISCOURAGEMENT",
    "HISTORY_ROWS",
    "LAST_ACTION",
    "dependency_hint",
    "guided_context",
    "guided_footer",
    "guided_history",
    "guided_reply",
    "play_guided",
]

HISTORY_ROWS = 10
"""Rows of each prior gold result in the guided history (App. D.5)."""
DISCOURAGEMENT = "I think my question was clear enough. Please try to answer it directly."
"""The scripted ASK_USER reply on turns without ambiguity_info (App. D.5)."""
LAST_ACTION = (
    "This is your last action for this question: only a query can answer it now. "
    "Submit your query with SUBMIT_ANSWER (or run it with EXECUTE_CYPHER: "
    "your last executed query counts as your answer)."
)
"""What the last-action note adds to the footer before a turn's last action.

A harness setting beyond the paper: docs/design/protocols.md, "Harness settings beyond the paper".
"""


def guided_footer(left: int, last_action_note: bool = False) -> str:
    """The footer ending each observation: the actions left for the question (App. D.5).

    With ``last_action_note`` (:attr:`ProtocolSettings.last_action_note`) the footer
    before the last action adds :data:`LAST_ACTION` (deviation from App. D.5).
    Why: in the 1.5B guided row with the chain note, 22 of 228 turns ended with no
    prediction, 21 of them after three SEARCH_VALUES (18 repeating one search word
    for word), although a lookup on the last action can no longer answer anything.
    """
    footer = f"Actions left for this question: {left}."
    return f"{footer} {LAST_ACTION}" if last_action_note and left == 1 else footer


def guided_history(
    view: SessionView,
    turn: PlayerTurn,
    framing: Framing = Framing.PAPER,
    queries: Mapping[int, str | None] | None = None,
) -> str:
    """The gold conversation history shown before a turn.

    Each prior turn is ``User: <utterance>`` / ``Assistant: [Query Result] <gold
    result, up to 10 rows>``; on a CONTRAST turn the immediately preceding result
    is shown untruncated so the complement can be computed.

    With ``queries`` (query memory, :attr:`ProtocolSettings.query_memory`), a line
    ``Your query for this turn: <query>`` (or ``... : none``) follows each prior
    utterance: the model's own prediction for that turn, which a follow-up
    ("of those, ...") can extend instead of restating every earlier condition
    (deviation from App. D.5: docs/design/protocols.md, "Harness settings beyond
    the paper"). In the 1.5B model's guided run without it,
    only 7 of the 37 chain turns whose dependency it had answered correctly were
    right: the model dropped the earlier conditions (``What is the total capacity
    of the storehouses above?`` summed every storehouse).

    Under :attr:`Framing.EXPLICIT` the result line is ``Result shown to the user
    (from the database, not written by you):`` instead (deviation from App. D.5):
    Qwen2.5-Coder-1.5B began 7 of 24 replies of a guided session with ``[Query
    Result]``, copying the history's assistant line instead of acting, and the
    decoding guard cut each to an empty reply, an action lost.

    Args:
        view: the session as the player sees it, with oracle history.
        turn: the current turn.
        framing: the run's observation framing.
        queries: turn index -> the query the model submitted for it (``None``: none);
            ``None`` leaves the paper's history.

    Returns:
        The history block (empty for the first turn), ending with a blank line.

    Raises:
        GoldWithheldError: ``view`` has no oracle history (and ``turn`` is not the first).
    """
    head = (
        "Result shown to the user (from the database, not written by you):\n"
        if framing is Framing.EXPLICIT
        else "Assistant: [Query Result] "
    )
    lines: list[str] = []
    for prior in view.turns[: turn.turn_index - 1]:
        untruncated = (
            turn.chain_mode is ChainMode.CONTRAST and prior.turn_index == turn.turn_index - 1
        )
        gold = view.earlier_result(prior.turn_index, current=turn.turn_index)
        rows = render_rows(gold.columns, gold.rows, None if untruncated else HISTORY_ROWS)
        mine = ""
        if queries is not None:
            mine = f"Your query for this turn: {queries.get(prior.turn_index) or 'none'}\n"
        lines.append(f"Turn {prior.turn_index}\nUser: {prior.utterance}\n{mine}{head}{rows}")
    if not lines:
        return ""
    return "Conversation so far:\n" + "\n\n".join(lines) + "\n\n"


def guided_context(view: SessionView, turn: PlayerTurn, index: GraphIndex) -> TurnContext:
    """The turn's question and the previous result as the guided history shows it.

    The previous result is the preceding turn's gold result (the guided history's
    oracle results, §3.1), taken only when the history shows every one of its
    rows (:data:`HISTORY_ROWS`, or all of them before a CONTRAST turn) and they
    are names of one label (:func:`~cypherturn.grounding.previous_names`): the
    ``reference`` grounding part binds to nothing the model was not shown.

    Args:
        view: the session as the player sees it, with oracle history.
        turn: the current turn.
        index: the graph's grounding index (looks the names up).

    Returns:
        The :class:`~cypherturn.agent.TurnContext` for ``turn``.

    Raises:
        GoldWithheldError: ``view`` has no oracle history (and ``turn`` is not the first).
    """
    previous = None
    if turn.turn_index > 1:
        gold = view.earlier_result(turn.turn_index - 1, current=turn.turn_index)
        shown = len(gold.rows) <= HISTORY_ROWS or turn.chain_mode is ChainMode.CONTRAST
        if shown:
            previous = previous_names(gold.columns, gold.rows, index)
    return TurnContext(question=turn.utterance, previous=previous)


def dependency_hint(turn: PlayerTurn) -> str:
    """The note appended to a FIRST turn that builds on a specific earlier result ("" otherwise)."""
    if turn.depends_on is None or Phenomenon.FIRST not in turn.phenomena:
        return ""
    n = turn.depends_on
    return (
        f" [Note: This turn builds upon the result of Turn {n}. "
        f"Use the result shown for Turn {n} in the conversation history above.]"
    )


def guided_reply(turn: PlayerTurn) -> str:
    """The scripted ASK_USER reply: the pre-authored disambiguation, else the discouragement."""
    return turn.simulator_reply if turn.simulator_reply is not None else DISCOURAGEMENT


def _scripted(turn: PlayerTurn) -> AskHandler:
    def ask(question: str, asks_before: int) -> tuple[str, int]:
        return guided_reply(turn), 0

    return ask


def play_guided(
    view: SessionView, env: SessionEnv, prior: Sequence[TurnOutcome] = ()
) -> list[TurnOutcome]:
    """Play a session under the guided protocol.

    Every turn starts from a fresh context (system prompt with the schema, gold
    history, current utterance) and gets exactly 3 actions. With query memory on,
    the history also shows the model's own earlier predictions.

    Args:
        view: the session as the player sees it, with oracle history
            (:meth:`~cypherturn.sessions.SessionView.of`).
        env: model, executor, prompts, settings and log sinks.
        prior: the session's first turns as an interrupted run played them
            (resume); turns are independent under oracle history, so they are
            only skipped (query memory reads their predictions).

    Returns:
        One :class:`TurnOutcome` per turn not in ``prior``.

    Raises:
        GoldWithheldError: ``view`` has no oracle history.
        ModelUnavailableError | ModelResponseError | EngineConnectionError: infrastructure failures.
    """
    prompts = env.prompts
    system = _guided_system(env)
    outcomes: list[TurnOutcome] = []
    for turn in view.turns[len(prior) :]:
        started = time.perf_counter()
        queries = (
            {o.turn: o.predicted_cypher for o in (*prior, *outcomes)}
            if env.settings.query_memory
            else None
        )
        text = fill(
            prompts["guided_turn"],
            history=guided_history(view, turn, env.settings.framing, queries),
            utterance=turn.utterance + dependency_hint(turn),
        )
        messages = [
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=text),
        ]
        result = run_action_loop(
            context=guided_context(view, turn, env.executor.index)
            if env.settings.grounding.question or env.settings.grounding.reference
            else None,
            call=env.call,
            messages=messages,
            turn=turn.turn_index,
            max_actions=GUIDED_ACTIONS,
            executor=env.executor,
            ask=_scripted(turn),
            on_step=env.on_step,
            footer=lambda left: guided_footer(left, env.settings.last_action_note),
            grounding=env.settings.grounding,
            framing=env.settings.framing,
            guards=env.settings.decoding_guards,
            repeat_guard=env.settings.repeat_guard,
        )
        outcome = TurnOutcome(
            turn=turn.turn_index,
            predicted_cypher=result.prediction,
            end=turn_end(result, TurnEnd.ACTION_CAP),
            steps=result.steps,
            budget_remaining=GUIDED_ACTIONS - len(result.steps),
            latency_s=time.perf_counter() - started,
        )
        env.on_turn(outcome)
        outcomes.append(outcome)
    return outcomes


def _guided_system(env: SessionEnv) -> str:
    """The system prompt of every guided turn: the actions, the schema, and the notes turned on."""
    prompts = env.prompts
    return with_notes(
        fill(
            prompts["guided_system"],
            actions=action_prompt(prompts, env.settings.action_format),
            efficiency=prompts["efficiency"],
            schema=render_schema(env.executor.schema),
        ),
        prompts,
        output_note=env.settings.output_note,
        chain_note=env.settings.chain_note,
    )

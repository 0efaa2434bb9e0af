"""The CypherTurn evaluation protocols: guided and agentic, with the appendix F variants
(registered :class:`ProtocolVariant` s; :func:`register_variant` adds one).

:func:`play_session` plays one session under the protocol its
:class:`ProtocolSettings` name, driving the five-action agent of
:mod:`cypherturn.agent` (CypherTurn §3.1, appendix D.5). It plays the
:class:`~cypherturn.sessions.SessionView` that :func:`player_view` builds, never
the session with its golds. Prompts are versioned files under
``protocols/prompts/`` (:func:`load_prompts`).
"""

from collections.abc import Sequence

from cypherturn.errors import ConfigError, DatasetError
from cypherturn.protocols._agentic import (
    HISTORY_RESULT_CHARS,
    agentic_context,
    agentic_history,
    agentic_system,
    play_agentic,
    session_budget,
)
from cypherturn.protocols._env import SessionEnv
from cypherturn.protocols._guided import (
    DISCOURAGEMENT,
    HISTORY_ROWS,
    LAST_ACTION,
    dependency_hint,
    guided_context,
    guided_history,
    guided_reply,
    play_guided,
)
from cypherturn.protocols._loop import (
    CUT_OFF,
    OBSERVATION_STOPS,
    REPEATED,
    REPEATING,
    RUNAWAY_READ,
    SETTLED_REPEATS,
    STUCK,
    AskHandler,
    LoopResult,
    ModelCaller,
    StepSink,
    observation_message,
    run_action_loop,
)
from cypherturn.protocols._prompts import (
    PROMPT_NAMES,
    PROMPT_VERSION,
    PromptSet,
    action_prompt,
    fill,
    load_prompts,
)
from cypherturn.protocols._settings import (
    BUDGET_MULTIPLIERS,
    GUIDED_ACTIONS,
    ProtocolSettings,
    TurnOutcome,
)
from cypherturn.protocols._variants import (
    PROTOCOL_VARIANTS,
    ProtocolVariant,
    TurnBudget,
    Variant,
    get_variant,
    register_variant,
)
from cypherturn.protocols._vocabulary import ActionFormat, Framing
from cypherturn.records import ProtocolName
from cypherturn.sessions import Session, SessionView

__all__ = [
    "BUDGET_MULTIPLIERS",
    "CUT_OFF",
    "DISCOURAGEMENT",
    "GUIDED_ACTIONS",
    "HISTORY_RESULT_CHARS",
    "HISTORY_ROWS",
    "LAST_ACTION",
    "OBSERVATION_STOPS",
    "PROMPT_NAMES",
    "PROMPT_VERSION",
    "PROTOCOL_VARIANTS",
    "REPEATED",
    "REPEATING",
    "RUNAWAY_READ",
    "SETTLED_REPEATS",
    "STUCK",
    "ActionFormat",
    "AskHandler",
    "Framing",
    "LoopResult",
    "ModelCaller",
    "PromptSet",
    "ProtocolName",
    "ProtocolSettings",
    "ProtocolVariant",
    "SessionEnv",
    "StepSink",
    "TurnBudget",
    "TurnOutcome",
    "Variant",
    "action_prompt",
    "agentic_context",
    "agentic_history",
    "agentic_system",
    "dependency_hint",
    "fill",
    "get_variant",
    "guided_context",
    "guided_history",
    "guided_reply",
    "load_prompts",
    "observation_message",
    "play_agentic",
    "play_guided",
    "play_session",
    "player_view",
    "register_variant",
    "run_action_loop",
    "session_budget",
]


def player_view(session: Session, protocol: ProtocolName) -> SessionView:
    """What a protocol's players may see of ``session`` (the runner builds it and keeps the golds).

    The guided protocol's history holds the gold results of earlier turns (oracle
    history, CypherTurn §3.1, App. D.5), so its view has them; the agentic
    protocol's history is the model's own, so its view holds no gold result at all.
    Neither holds a gold query.

    Args:
        session: the session, golds included.
        protocol: the protocol that will play it.

    Returns:
        The :class:`~cypherturn.sessions.SessionView` to pass to :func:`play_session`.

    Raises:
        DatasetError: the session's turns are not numbered 1, 2, ... in order.
    """
    return SessionView.of(session, oracle_history=protocol is ProtocolName.GUIDED)


def play_session(
    view: SessionView, env: SessionEnv, prior: Sequence[TurnOutcome] = ()
) -> list[TurnOutcome]:
    """Play one session under ``env.settings.protocol``.

    Args:
        view: the session as its players see it (:func:`player_view`).
        env: what the protocol needs.
        prior: its first turns as an interrupted run played them (resume at a
            turn boundary); only the turns after them are played.

    Returns:
        One :class:`TurnOutcome` per turn played, in order.

    Raises:
        ConfigError: the view does not match the protocol (guided needs oracle
            history; an agentic player must not hold a gold result).
        DatasetError: ``prior`` is not the session's first turns in order.
        ModelUnavailableError | ModelResponseError | EngineConnectionError: infrastructure failures.
    """
    guided = env.settings.protocol is ProtocolName.GUIDED
    if view.oracle_history is not guided:
        raise ConfigError(
            f"session {view.session_id}: the {env.settings.protocol.value} protocol plays a view "
            + ("with" if guided else "without")
            + " oracle history (protocols.player_view builds it)"
        )
    if len(prior) > len(view.turns) or any(o.turn != i for i, o in enumerate(prior, start=1)):
        raise DatasetError(
            f"session {view.session_id}: the turns to resume from are not its first turns"
        )
    if guided:
        return play_guided(view, env, prior)
    return play_agentic(view, env, prior)

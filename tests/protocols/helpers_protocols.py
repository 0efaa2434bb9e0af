"""Playing the heroes session with a replay model (shared by the protocol tests)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cypherturn.agent import ActionExecutor, ActionStep, UserSimulator, tool_definitions
from cypherturn.graph import GraphEngine
from cypherturn.models import ReplayChatModel
from cypherturn.protocols import (
    ActionFormat,
    ModelCaller,
    ProtocolSettings,
    SessionEnv,
    TurnOutcome,
    Variant,
    load_prompts,
    play_session,
    player_view,
)
from cypherturn.records import ProtocolName
from cypherturn.sessions import Session


def act(action: str, payload: object = None) -> str:
    """A text-format reply choosing one action."""
    body: dict[str, object] = {"action": action}
    if payload is not None:
        body["input"] = payload
    return json.dumps(body)


@dataclass
class Played:
    outcomes: list[TurnOutcome]
    model: ReplayChatModel
    steps: list[ActionStep] = field(default_factory=list)
    sim_model: ReplayChatModel | None = None

    def prompt(self, call: int) -> str:
        """The turn prompt (first user message) of a model call."""
        return self.model.calls[call][1].content


def play(
    session: Session,
    engine: GraphEngine,
    replies: Sequence[str | dict[str, Any]],
    *,
    protocol: ProtocolName = ProtocolName.GUIDED,
    m: int = 3,
    variant: Variant = Variant.BASE,
    sim_replies: list[str] | None = None,
    action_format: ActionFormat = ActionFormat.TEXT,
    prior: Sequence[TurnOutcome] = (),
    **settings: Any,
) -> Played:
    model = ReplayChatModel(replies)
    prompts = load_prompts()
    steps: list[ActionStep] = []
    sim_model = ReplayChatModel(sim_replies or [])
    env = SessionEnv(
        call=ModelCaller(
            model,
            temperature=0.0,
            max_tokens=100,
            seed=None,
            tools=tool_definitions() if action_format is ActionFormat.TOOLS else None,
        ),
        executor=ActionExecutor(engine),
        prompts=prompts,
        settings=ProtocolSettings(
            protocol=protocol,
            budget_multiplier=m,
            variant=variant,
            action_format=action_format,
            **settings,
        ),
        on_step=steps.append,
        on_turn=lambda _outcome: None,
        simulator=UserSimulator(
            sim_model,
            engine.schema(),
            session.persona.value,
            prompts["simulator_system"],
        ),
    )
    view = player_view(session, protocol)
    return Played(play_session(view, env, prior), model, steps, sim_model)

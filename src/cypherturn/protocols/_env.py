"""What a protocol needs to play one session."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cypherturn.agent import ActionExecutor, UserSimulator
from cypherturn.protocols._loop import ModelCaller, StepSink
from cypherturn.protocols._prompts import PromptSet
from cypherturn.protocols._settings import ProtocolSettings, TurnOutcome

__all__ = ["SessionEnv"]


@dataclass(slots=True)
class SessionEnv:
    """The evaluated model, the graph, the prompts and the sinks of one session.

    Attributes:
        call: the evaluated model, with sampling settings and retries.
        executor: the session graph's action executor.
        prompts: the prompt set.
        settings: the protocol settings.
        on_step: receives every action step as it happens.
        on_turn: receives every finished turn.
        simulator: the user simulator (agentic protocol only).
    """

    call: ModelCaller
    executor: ActionExecutor
    prompts: PromptSet
    settings: ProtocolSettings
    on_step: StepSink
    on_turn: Callable[[TurnOutcome], None]
    simulator: UserSimulator | None = None

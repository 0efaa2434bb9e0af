"""What one action step and one turn produced: the records the protocols log and the runner scores."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from cypherturn.errors import ErrorClass
from cypherturn.grounding import Finding
from cypherturn.models import ToolCall
from cypherturn.records import Action, TurnEnd

# TurnEnd is a record's vocabulary (cypherturn.records); the agent re-exports it as its own
__all__ = ["ActionStep", "TurnEnd"]


class ActionStep(BaseModel):
    """One step of the action loop: the model's reply, the action read from it, the observation.

    Attributes:
        turn: 1-based turn index.
        step: 1-based step index within the turn.
        action: the action taken, ``None`` when the reply could not be parsed.
        payload: the action's argument.
        observation: the text returned to the model.
        ok: the action succeeded (query ran, search parsed, reply parsed).
        error_class: the failure class of a failed EXECUTE_CYPHER.
        rows: rows returned by EXECUTE_CYPHER or SEARCH_VALUES.
        reply: the model's raw reply (reasoning included).
        prompt_tokens: prompt tokens of the model call.
        output_tokens: clean completion tokens (reasoning excluded).
        reasoning_tokens: completion tokens spent in reasoning blocks (apportioned
            by character share of the reply when the endpoint does not report them).
        model_latency_s: wall time of the model call, seconds.
        execution_latency_s: wall time of the engine work, seconds.
        simulator_tokens: tokens the user simulator spent on an ASK_USER reply.
        budget_remaining: actions left after this step (turn cap in guided, shared in agentic).
        tool_call: the native tool call the action was read from (``None``: text format).
        repaired: the text-format reply was read only after repair
            (:attr:`cypherturn.agent.ActionCall.repaired`); ``False`` in logs
            written before the field existed.
        original_payload: the model's own query when grounding repaired it
            (``payload`` is then the query that ran or was submitted); ``None`` otherwise.
        grounding_repairs: the grounding repairs applied to the query, in order
            (each finding with its edit; :class:`~cypherturn.agent.AgentGrounding`).
        grounding_findings: what the schema and value checks found in the final query.
        (The three grounding fields default to empty, so logs written before them
        read unchanged.)
        repeat_of: with the repeat guard on, the earlier step of the turn this action
            repeated word for word (same action and payload; for a reply read as no
            action, the same reply text); ``None`` otherwise. The
            step that ended a turn as ``stuck`` (:data:`cypherturn.protocols.SETTLED_REPEATS`)
            has it too; that action was not performed.
        by_harness: the harness took this action on the model's behalf (no model
            call: ``reply`` empty, no tokens); with ``schema_first`` the session's first
            action is such an INSPECT_SCHEMA
            (:attr:`cypherturn.protocols.ProtocolSettings.schema_first`). ``False`` in
            logs written before the field existed.
    """

    model_config = ConfigDict(frozen=True)

    turn: int = Field(ge=1)
    step: int = Field(ge=1)
    action: Action | None
    payload: str = ""
    observation: str = ""
    ok: bool = True
    error_class: ErrorClass | None = None
    rows: int | None = None
    reply: str = ""
    prompt_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    reasoning_tokens: int = Field(default=0, ge=0)
    model_latency_s: float = Field(default=0.0, ge=0.0)
    execution_latency_s: float = Field(default=0.0, ge=0.0)
    simulator_tokens: int = Field(default=0, ge=0)
    budget_remaining: int = Field(default=0, ge=0)
    tool_call: ToolCall | None = None
    repaired: bool = False
    original_payload: str | None = None
    grounding_repairs: list[Finding] = Field(default_factory=list)
    grounding_findings: list[Finding] = Field(default_factory=list)
    repeat_of: int | None = Field(default=None, ge=1)
    by_harness: bool = False

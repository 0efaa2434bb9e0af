"""Protocol settings, variants, and what a played turn produced."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from cypherturn.agent import GROUNDING_CHECKS, ActionStep, AgentGrounding, TurnEnd
from cypherturn.protocols._variants import PROTOCOL_VARIANTS, Variant
from cypherturn.protocols._vocabulary import ActionFormat, Framing
from cypherturn.records import ProtocolName

__all__ = [
    "BUDGET_MULTIPLIERS",
    "GUIDED_ACTIONS",
    "ProtocolSettings",
    "TurnOutcome",
]

GUIDED_ACTIONS = 3
"""Hard cap of actions per turn under the guided protocol (§3.1)."""
BUDGET_MULTIPLIERS = (3, 5, 10)
"""The agentic budget multipliers m of the paper (B = T x m, §3.1)."""


_HARNESS_DEFAULTS: dict[str, Any] = {
    "grounding": AgentGrounding(),
    "framing": Framing.PAPER,
    "decoding_guards": False,
    "output_note": False,
    "chain_note": False,
    "repeat_guard": False,
    "query_memory": False,
    "schema_first": False,
    "last_action_note": False,
    "action_grammar": False,
}
"""Settings added after runs were recorded, with the values those runs played under."""


class ProtocolSettings(BaseModel):
    """How sessions are played.

    Attributes:
        protocol: guided or agentic (§3.1).
        budget_multiplier: m of the agentic budget ``B = T x m``; recorded as 3
            for guided, whose cap is a fixed 3 actions per turn.
        variant: the name of a registered agentic variant (appendix F, or one
            added with :func:`~cypherturn.protocols.register_variant`); must be
            ``base`` for guided.
        temperature: sampling temperature of the evaluated model.
        max_tokens: completion cap per action step, tokens.
        seed: sampling seed passed to the model.
        action_format: text-format actions or native tool calling.
        grounding: which of ``ras+``'s grounding parts act on EXECUTE_CYPHER and
            SUBMIT_ANSWER (default none: the paper's agent).
        framing: how observations are introduced (default the paper's).
        decoding_guards: GGUF models stop at the harness's observation headers
            (:data:`~cypherturn.protocols.OBSERVATION_STOPS`) and when the completion
            repeats itself (``finish_reason="repetition"``); other models ignore it.
        output_note: the system prompt ends with the ``output`` prompt, which states
            the benchmark's column naming (``name``, ``count``, ``avg_price``); EX
            compares column names. Off by default: the paper's prompt has no such note.
        chain_note: the system prompt ends (after the output note) with the ``chain``
            prompt, which says how a follow-up builds on an earlier result: start from
            the names it lists when it shows all its rows (``WHERE n.name IN [...]``,
            ``NOT ... IN`` for "the rest"), else restate the earlier conditions; and
            count only when asked. Off by default: the paper's prompt has no such note.
        repeat_guard: an action that repeats an earlier step of the turn word for word
            is noted in its observation and the next call samples
            (:data:`~cypherturn.protocols.REPEATED`); it is still performed and charged,
            except that the second repeat of one action ends the turn with the fallback
            prediction (:data:`~cypherturn.protocols.SETTLED_REPEATS`).
        query_memory: guided only: the history shows, under each earlier turn's
            utterance, the query the model submitted for it (its prediction), so a
            follow-up can be written as an edit of it
            (:func:`~cypherturn.protocols.guided_history`). Off by default: the
            paper's guided history holds the gold results only, which keeps turns
            independent (§3.1); with it on, an earlier wrong query can mislead a turn.
        schema_first: agentic only: the session's first action is an INSPECT_SCHEMA the
            harness takes on the model's behalf (charged one unit of the budget like any
            action, logged with ``by_harness``); its text heads the first turn's prompt,
            and with the Agentic-PS variant every later turn's. Off by default: in the
            paper the model decides whether to inspect the schema (§3.1).
        last_action_note: guided only: the footer before a turn's last action adds
            :data:`~cypherturn.protocols.LAST_ACTION`, that only a query can answer now
            (SUBMIT_ANSWER, or EXECUTE_CYPHER, whose query is the fallback prediction).
            Off by default: the paper's footer gives the count alone.
        action_grammar: text format only: a model that supports grammars (GGUF) decodes
            every reply under :func:`~cypherturn.agent.action_grammar`, so it writes one
            action object with its input; other models ignore it. Off by default: the
            paper's agent writes free text, which the parser reads.

    ``grounding``, ``framing``, ``decoding_guards``, ``output_note``, ``chain_note``, ``repeat_guard``,
    ``query_memory``, ``schema_first``, ``last_action_note`` and ``action_grammar`` are left out of the serialized
    settings while they hold their defaults, so a run recorded before they existed
    keeps its configuration digest and resumes; a run with any of them changed
    records it in ``bench_config.json``.
    """

    model_config = ConfigDict(frozen=True)

    protocol: ProtocolName
    budget_multiplier: int = Field(default=GUIDED_ACTIONS, ge=1)
    variant: str = Variant.BASE.value
    temperature: float = Field(default=0.0, ge=0.0)
    max_tokens: int = Field(default=512, ge=1)
    seed: int | None = None
    action_format: ActionFormat = ActionFormat.TEXT
    grounding: AgentGrounding = Field(default_factory=AgentGrounding)
    framing: Framing = Framing.PAPER
    decoding_guards: bool = False
    output_note: bool = False
    chain_note: bool = False
    repeat_guard: bool = False
    query_memory: bool = False
    schema_first: bool = False
    last_action_note: bool = False
    action_grammar: bool = False

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name, default in _HARNESS_DEFAULTS.items():
            if getattr(self, name) == default:
                data.pop(name, None)
        return data

    @property
    def harness(self) -> str:
        """The harness settings beyond the paper that are on, as a short label; ``""`` for the paper's agent.

        In a fixed order, comma-separated: ``grounding check+repair+values`` (or
        ``grounding all``), ``explicit`` (framing), ``guards`` (decoding guards),
        ``note`` (output note), ``chain`` (chain note), ``repeat`` (repeat guard), ``memory`` (query memory), ``schema first``, ``last action`` (last-action note), ``grammar`` (action grammar). ``cypherturn report``
        keeps runs that differ in it apart (:attr:`cypherturn.records.TurnRecord.harness`).
        """
        parts = []
        if self.grounding.active:
            enabled = self.grounding.enabled()
            grounded = "all" if len(enabled) == len(GROUNDING_CHECKS) else "+".join(enabled)
            parts.append(f"grounding {grounded}")
        if self.framing is not Framing.PAPER:
            parts.append(self.framing.value)
        parts += [
            name
            for name, on in (
                ("guards", self.decoding_guards),
                ("note", self.output_note),
                ("chain", self.chain_note),
                ("repeat", self.repeat_guard),
                ("memory", self.query_memory),
                ("schema first", self.schema_first),
                ("last action", self.last_action_note),
                ("grammar", self.action_grammar),
            )
            if on
        ]
        return ", ".join(parts)

    @field_validator("variant")
    @classmethod
    def _registered(cls, name: str) -> str:
        if name not in PROTOCOL_VARIANTS:
            raise ValueError(str(PROTOCOL_VARIANTS.unknown(name)))
        return str(name)

    @model_validator(mode="after")
    def _check(self) -> ProtocolSettings:
        if self.protocol is ProtocolName.GUIDED:
            if self.variant != Variant.BASE:
                raise ValueError(f"variant {self.variant} applies to the agentic protocol only")
            if self.budget_multiplier != GUIDED_ACTIONS:
                raise ValueError("the guided protocol has a fixed budget of 3 actions per turn")
            if self.schema_first:
                raise ValueError(
                    "schema first applies to the agentic protocol only: the guided "
                    "prompt already holds the schema"
                )
        elif self.query_memory:
            raise ValueError(
                "query memory applies to the guided protocol only: the agentic "
                "conversation already holds the model's own queries"
            )
        elif self.last_action_note:
            raise ValueError(
                "the last-action note applies to the guided protocol only: the agentic "
                "budget is shared by the session, so no action is a turn's last"
            )
        if self.action_grammar and self.action_format is not ActionFormat.TEXT:
            raise ValueError(
                "the action grammar applies to the text action format only: tool calls "
                "are constrained by their own grammar"
            )
        return self


@dataclass(slots=True)
class TurnOutcome:
    """What one turn produced.

    Attributes:
        turn: 1-based turn index.
        predicted_cypher: the prediction (SUBMIT payload, else the last
            EXECUTE_CYPHER payload, else ``None``).
        end: why the turn stopped.
        steps: the action steps, in order.
        budget_remaining: actions left after the turn (turn cap or shared budget).
        latency_s: wall time of the turn, seconds.
    """

    turn: int
    predicted_cypher: str | None
    end: TurnEnd
    steps: list[ActionStep] = field(default_factory=list)
    budget_remaining: int = 0
    latency_s: float = 0.0

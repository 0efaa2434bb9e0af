"""The action loop shared by both protocols (CypherTurn App. D.5).

One step = one model call, one parsed action, one observation; every step costs
one unit, an unparseable reply included. With native tool calling the action is
the reply's first tool call and the observation goes back as the ``tool``
message answering it; a reply without a tool call is read as text.
SUBMIT_ANSWER ends the loop (only the first counts); when the units run out
first, the prediction falls back to the last EXECUTE_CYPHER payload of the
turn, or ``None``.

Transient endpoint failures are retried by the model layer
(:class:`cypherturn.models.RetryPolicy`), not here.

Harness settings beyond the paper (issue 16; each off by default, see
:class:`~cypherturn.protocols.ProtocolSettings`): grounding of EXECUTE_CYPHER and
SUBMIT_ANSWER, the explicit observation framing, GGUF decoding guards (stop
at the observation headers, stop a completion that repeats itself), and the repeat
guard (an action that repeats an earlier step of the turn word for word is still
performed and charged, its observation says so, and the next call samples; an action
taken a third time ends the turn with the fallback prediction).
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypedDict, cast

from cypherturn.agent import (
    ActionCall,
    ActionExecutor,
    ActionStep,
    AgentGrounding,
    Observation,
    ParseFailure,
    TurnContext,
    TurnEnd,
    parse_action,
    parse_tool_call,
    salvage_runaway,
    split_reasoning,
)
from cypherturn.errors import ContextLengthError
from cypherturn.models import (
    ChatMessage,
    ChatModel,
    ChatResponse,
    GuardedChatModel,
    ToolCall,
    ToolSpec,
)
from cypherturn.protocols._settings import Framing
from cypherturn.records import Action

__all__ = [
    "CUT_OFF",
    "OBSERVATION_STOPS",
    "REPEATED",
    "REPEATING",
    "RESAMPLE_TEMPERATURE",
    "RUNAWAY_READ",
    "SETTLED_REPEATS",
    "STUCK",
    "AskHandler",
    "LoopResult",
    "ModelCaller",
    "StepSink",
    "observation_message",
    "run_action_loop",
    "turn_end",
]

logger = logging.getLogger(__name__)


class _Sampling(TypedDict):
    """The keyword arguments of :meth:`ChatModel.chat` that every call of a run shares."""

    temperature: float
    max_tokens: int
    seed: int | None
    tools: Sequence[ToolSpec] | None


AskHandler = Callable[[str, int], tuple[str, int]]
"""``(question, asks_before_in_turn) -> (reply, simulator_tokens)``."""
StepSink = Callable[[ActionStep], None]
"""Receives every step as soon as it is taken (the runner appends it to the log)."""

OBSERVATION_STOPS = (
    "Observation:",
    "Observation from the",
    "[Query Result]",
    "\nUser:",
    "\nAssistant:",
)
"""Stop sequences of the decoding guards: the headers the harness writes before what the
model did not write (observations, the guided history's results and user lines). A model
that starts writing one is imitating the environment instead of acting."""


RESAMPLE_TEMPERATURE = 0.7
"""Least temperature of the call that follows a reply the decoding guards stopped (runaway
repetition or the token cap, with no action read): at temperature 0 Qwen2.5-Coder-1.5B
wrote the same runaway three times, using up the guided turn (6 of 551 actions). The
repeat guard samples at it too after a repeated action: under the agentic protocol the
same model ran one query that returned no rows 11 times in a row, spending a third of
the session's budget on one turn."""


class ModelCaller:
    """Calls a chat model with fixed sampling settings.

    Args:
        model: the chat model (it retries its own transient failures).
        temperature / max_tokens / seed: sampling settings of every call.
        tools: offered on every call (native tool calling); ``None`` for text-format actions.
        grammar: GBNF text every call of a model that supports grammars decodes under
            (:func:`~cypherturn.agent.action_grammar`, ``action_grammar``); other models
            are called without it.
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        temperature: float,
        max_tokens: int,
        seed: int | None,
        tools: Sequence[ToolSpec] | None = None,
        grammar: str | None = None,
    ) -> None:
        self.model = model
        self.tools = list(tools) if tools else None
        self._grammar = grammar if grammar is not None and model.supports_grammar else None
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._seed = seed

    @property
    def guarded(self) -> bool:
        """Whether the decoding guards act on this model (it supports them: GGUF models)."""
        return self.model.supports_decoding_guards

    def __call__(
        self, messages: list[ChatMessage], *, guards: bool = False, resample: bool = False
    ) -> ChatResponse:
        """Complete a chat.

        Args:
            messages: the context.
            guards: on a model that supports them (GGUF), stop at :data:`OBSERVATION_STOPS` and at runaway
                repetition (``finish_reason="repetition"``); other models ignore it.
            resample: sample at :data:`RESAMPLE_TEMPERATURE` at least, seeded by the
                context's length: the call after a reply the guards stopped or after
                a repeated action, which greedy decoding would otherwise repeat word
                for word.

        Raises:
            ModelUnavailableError: the model failed for good (an infrastructure
                failure; transient ones only after the model's own retries).
            ModelResponseError: the endpoint answered without a usable completion.
        """
        sampling = self._sampling()
        if resample:
            sampling["temperature"] = max(sampling["temperature"], RESAMPLE_TEMPERATURE)
            sampling["seed"] = (self._seed or 0) + len(messages)
        if guards and self.guarded:
            # the property is the model's promise that its chat takes the guards
            return cast(GuardedChatModel, self.model).chat(
                messages,
                **sampling,
                grammar=self._grammar,
                stop=OBSERVATION_STOPS,
                repetition_guard=True,
            )
        if self._grammar is not None:
            return self.model.chat(messages, **sampling, grammar=self._grammar)
        return self.model.chat(messages, **sampling)

    def _sampling(self) -> _Sampling:
        """The sampling arguments every call of this run shares."""
        return {
            "temperature": self._temperature,
            "max_tokens": self._max_tokens,
            "seed": self._seed,
            "tools": self.tools,
        }


@dataclass(slots=True)
class LoopResult:
    """What one turn's action loop produced.

    Attributes:
        submitted: the SUBMIT_ANSWER payload, when the model submitted.
        last_executed: the last EXECUTE_CYPHER payload of the turn.
        steps: the steps taken.
        overflow: the context outgrew the model's window; the turn ended there.
        stuck: the repeat guard ended the turn at this step (an action taken a third time).
    """

    submitted: str | None = None
    last_executed: str | None = None
    steps: list[ActionStep] = field(default_factory=list)
    overflow: str | None = None
    stuck: int | None = None

    @property
    def prediction(self) -> str | None:
        """SUBMIT payload, else the last executed query, else ``None`` (App. D.5 fallback)."""
        return self.submitted if self.submitted is not None else self.last_executed


def turn_end(result: LoopResult, out_of_actions: TurnEnd) -> TurnEnd:
    """Why a turn stopped (CypherTurn App. D.5 termination and fallback rules).

    Args:
        result: the turn's action loop result.
        out_of_actions: the protocol's reason when the units ran out without SUBMIT
            (``ACTION_CAP`` in guided, ``BUDGET_EXHAUSTED`` in agentic).

    Returns:
        ``SUBMITTED``, ``CONTEXT_OVERFLOW``, ``STUCK``, or ``out_of_actions``.
    """
    if result.submitted is not None:
        return TurnEnd.SUBMITTED
    if result.overflow is not None:
        return TurnEnd.CONTEXT_OVERFLOW
    if result.stuck is not None:
        return TurnEnd.STUCK
    return out_of_actions


def _reasoning_share(response: ChatResponse, reasoning: str) -> int:
    if not reasoning or not response.text:
        return 0
    return min(
        response.completion_tokens,
        math.ceil(response.completion_tokens * len(reasoning) / len(response.text)),
    )


CUT_OFF = (
    "Your reply was cut off at the completion limit before it named a complete action. "
    "Keep the action and its input short."
)
"""Observation for a reply that hit the token cap without a complete action."""

REPEATING = (
    "Your reply started repeating itself and was stopped before it named a complete action. "
    "Reply with one action and nothing else."
)
"""Observation for a reply the repetition guard stopped without a complete action."""

RUNAWAY_READ = (
    "\n(Your reply kept repeating the items of its RETURN list and was stopped; it was read "
    "up to the first repeated item. Name each column once.)"
)
"""Note after the observation of an action read from a runaway projection (:func:`~cypherturn.agent.salvage_runaway`)."""

REPEATED = (
    "\n(This action repeats your step {step} of this question word for word, so its result "
    "is the same. If that result was wrong or empty, change the query: the labels, the "
    "relationship direction, the property keys or the values. Otherwise submit it.)"
)
"""Note after the observation of an action that repeats an earlier step of the turn (repeat guard)."""

SETTLED_REPEATS = 2
"""The repeat of one action within a turn (2: its third time) at which the repeat guard ends
the turn instead of performing it (``TurnEnd.STUCK``, the fallback prediction: the turn's
last executed query). Under the agentic protocol Qwen2.5-Coder-1.5B ran one query 28 times
in a row, and in other sessions asked the user one question up to 19 times, note and
sampling notwithstanding, until the session's budget was gone and every later turn fell off
the cliff. For a repeated query the fallback is that query, as the protocol's own fallback
would predict at the end of the budget; the turn ends while budget is left for the next."""

STUCK = (
    "The harness ended this question: the same action (or unreadable reply) a third time. "
    "Its last executed query is the answer."
)
"""Observation of the step at which the repeat guard ended a turn (never shown to the model)."""


def _read_action(
    response: ChatResponse, tools_offered: bool
) -> tuple[ActionCall | ParseFailure, ToolCall | None, str]:
    """The action of a reply, the tool call it came from, and a note for the observation."""
    if not response.tool_calls:
        parsed = parse_action(response.text, ended=response.finish_reason == "stop")
        stopped = response.finish_reason in ("length", "repetition")
        if isinstance(parsed, ParseFailure) and stopped:
            salvaged = salvage_runaway(response.text)
            if salvaged is not None:
                return salvaged, None, RUNAWAY_READ
        if isinstance(parsed, ParseFailure) and response.finish_reason == "length":
            return ParseFailure(message=CUT_OFF), None, ""
        if isinstance(parsed, ParseFailure) and response.finish_reason == "repetition":
            return ParseFailure(message=REPEATING), None, ""
        if isinstance(parsed, ParseFailure) and tools_offered:
            message = f"{parsed.message} Or call exactly one of the tools."
            return ParseFailure(message=message), None, ""
        return parsed, None, ""
    first = response.tool_calls[0]
    extra = len(response.tool_calls) - 1
    note = (
        f"\n(Only your first tool call was run; {extra} more were ignored. Call one tool per reply.)"
        if extra
        else ""
    )
    return parse_tool_call(first.name, first.arguments), first, note


def run_action_loop(
    *,
    call: ModelCaller,
    messages: list[ChatMessage],
    turn: int,
    max_actions: int,
    executor: ActionExecutor,
    ask: AskHandler,
    on_step: StepSink,
    footer: Callable[[int], str],
    on_schema: Callable[[str], None] | None = None,
    grounding: AgentGrounding | None = None,
    framing: Framing = Framing.PAPER,
    guards: bool = False,
    repeat_guard: bool = False,
    taken: Sequence[ActionStep] = (),
    context: TurnContext | None = None,
) -> LoopResult:
    """Play one turn: up to ``max_actions`` steps, stopping at the first SUBMIT_ANSWER.

    Args:
        call: the evaluated model.
        messages: the turn's context (system and turn prompt); steps are appended.
        turn: 1-based turn index (logged).
        max_actions: units available to this turn (3 in guided; what is left of
            the shared budget in agentic).
        executor: runs EXECUTE_CYPHER, INSPECT_SCHEMA, SEARCH_VALUES.
        ask: answers ASK_USER.
        on_step: receives each step as it happens.
        footer: text appended to each observation given the units left.
        on_schema: called with the INSPECT_SCHEMA text (Agentic-PS keeps it).
        grounding: grounding parts for EXECUTE_CYPHER and SUBMIT_ANSWER (``None``: none).
        framing: how observations are introduced (:func:`observation_message`).
        guards: GGUF decoding guards (:meth:`ModelCaller.__call__`).
        repeat_guard: an action equal to an earlier step of the turn (same action,
            same payload as the model wrote it) is performed and charged as usual; its
            step records ``repeat_of``, its observation ends with :data:`REPEATED`, and
            the next call samples (``resample``). SUBMIT_ANSWER ends the turn and is
            never a repeat. The :data:`SETTLED_REPEATS`-th repeat of one action ends
            the turn instead (``stuck`` set, :data:`STUCK` as the step's observation,
            not performed, one unit charged as for any step; the prediction is the
            fallback, the turn's last executed query). A reply read as no action counts
            the same way, by its text (:class:`_Repeats`).
        taken: steps the harness already took in this turn on the model's behalf
            (``ActionStep.by_harness``); they open the turn's steps, count against
            ``max_actions``, and the model's first step is numbered after them. Their
            observations must already be in ``messages``.
        context: the turn's question and previous result, for the ``question`` and
            ``reference`` grounding parts.

    Returns:
        The :class:`LoopResult`; a context that outgrows the model's window ends
        the turn early (``overflow`` set, no unit charged for the failed call).

    Raises:
        ModelUnavailableError | ModelResponseError: the model failed persistently.
        EngineConnectionError: the engine is unreachable.
    """
    loop = _TurnLoop(
        call=call,
        messages=messages,
        turn=turn,
        max_actions=max_actions,
        executor=executor,
        ask=ask,
        on_step=on_step,
        footer=footer,
        on_schema=on_schema,
        grounding=grounding,
        framing=framing,
        guards=guards,
        repeat_guard=repeat_guard,
        context=context,
    )
    return loop.play(taken)


_RepeatKey = tuple[Action | None, str]
"""An action and its payload as the model wrote them; ``None`` and the reply's text for no action."""


@dataclass(slots=True)
class _Repeats:
    """The repeat guard's memory of a turn: the first step of each action, and its repeats so far.

    A reply read as no action counts by its text: the resampled call after a
    runaway often runs away word for word again (Qwen2.5-Coder-1.5B spent the
    last 6 units of a session's budget on runaways of one ``NOT IN`` list).
    """

    performed: dict[_RepeatKey, int] = field(default_factory=dict)
    counts: Counter[_RepeatKey] = field(default_factory=Counter)

    def check(
        self, parsed: ActionCall | ParseFailure, text: str, index: int
    ) -> tuple[int | None, bool]:
        """Record step ``index``: the action ``parsed``, or no action with the reply ``text``.

        Returns:
            The earlier step it repeats (``None``: a first, or a SUBMIT_ANSWER,
            which is never a repeat), and whether it is the :data:`SETTLED_REPEATS`-th
            repeat, which ends the turn.
        """
        if isinstance(parsed, ActionCall):
            if parsed.action is Action.SUBMIT_ANSWER:
                return None, False
            key: _RepeatKey = (parsed.action, parsed.payload)
        else:
            key = (None, text)
        repeat_of = self.performed.setdefault(key, index)
        if repeat_of == index:
            return None, False
        if self.counts[key] + 1 >= SETTLED_REPEATS:
            return repeat_of, True
        self.counts[key] += 1
        return repeat_of, False


@dataclass(slots=True)
class _TurnLoop:
    """One turn's action loop (:func:`run_action_loop`, whose arguments the fields are)."""

    call: ModelCaller
    messages: list[ChatMessage]
    turn: int
    max_actions: int
    executor: ActionExecutor
    ask: AskHandler
    on_step: StepSink
    footer: Callable[[int], str]
    on_schema: Callable[[str], None] | None
    grounding: AgentGrounding | None
    framing: Framing
    guards: bool
    repeat_guard: bool
    context: TurnContext | None
    asks: int = 0
    """ASK_USER actions performed so far in the turn."""
    resample: bool = False
    """The next call samples (after a repeat or a guard stop)."""
    repeats: _Repeats = field(default_factory=_Repeats)
    """The repeat guard's memory of the turn."""

    def play(self, taken: Sequence[ActionStep]) -> LoopResult:
        """Take steps after ``taken`` until a submission, the last unit, a stuck repeat or an overflow."""
        result = LoopResult(steps=list(taken))
        for index in range(len(taken) + 1, self.max_actions + 1):
            response = self._reply(result)
            if response is None or self._take(response, index, result):
                break
        return result

    def _reply(self, result: LoopResult) -> ChatResponse | None:
        """The model's next reply; ``None`` (``result.overflow`` set) when the context is too long."""
        call = self.call
        try:
            # callers without guard support (test doubles of ModelCaller) get the plain call
            if self.guards or self.repeat_guard:
                return call(self.messages, guards=self.guards, resample=self.resample)
            return call(self.messages)
        except ContextLengthError as e:
            # the model cannot take another action with this context; later turns
            # start from a fresh one, so only this turn ends
            logger.info("turn %d: %s", self.turn, e)
            result.overflow = str(e)
            return None

    def _take(self, response: ChatResponse, index: int, result: LoopResult) -> bool:
        """Read, perform and log step ``index`` of ``response``; ``True`` when the turn ends."""
        answer, reasoning = split_reasoning(response.text)
        parsed, tool_call, note = _read_action(response, self.call.tools is not None)
        base = _step(response, reasoning, self.turn, index, self.max_actions - index, tool_call)
        self.messages.append(
            ChatMessage(role="assistant", content=answer, tool_calls=[tool_call])
            if tool_call is not None
            else ChatMessage(role="assistant", content=answer or response.text)
        )
        repeat_of, stuck = (
            self.repeats.check(parsed, answer or response.text, index)
            if self.repeat_guard
            else (None, False)
        )
        if stuck and repeat_of is not None:
            record = _stuck_step(base, parsed, repeat_of)
            if isinstance(parsed, ActionCall) and parsed.action is Action.EXECUTE_CYPHER:
                # the query it kept running, even if another ran in between
                result.last_executed = result.steps[repeat_of - 1].payload
            result.steps.append(record)
            self.on_step(record)
            result.stuck = index
            return True
        if isinstance(parsed, ActionCall):
            if repeat_of is not None:
                note = REPEATED.format(step=repeat_of) + note
            record = base.model_copy(update=self._act(parsed))
            if parsed.action is Action.EXECUTE_CYPHER:
                result.last_executed = record.payload
        else:
            record = base.model_copy(update={"observation": parsed.message, "ok": False})
        if repeat_of is not None:
            record = record.model_copy(update={"repeat_of": repeat_of})
        guarded = self.guards and getattr(self.call, "guarded", False)
        self.resample = repeat_of is not None or (
            guarded and isinstance(parsed, ParseFailure) and parsed.message in (REPEATING, CUT_OFF)
        )
        result.steps.append(record)
        self.on_step(record)
        if record.action is Action.SUBMIT_ANSWER:
            result.submitted = record.payload
            return True
        footer = self.footer(record.budget_remaining)
        self.messages.append(
            observation_message(record, f"{note}\n\n{footer}", tool_call, self.framing)
        )
        return False

    def _act(self, parsed: ActionCall) -> dict[str, object]:
        """Perform an action; the step fields it sets (:func:`_perform`)."""
        update = _perform(
            parsed,
            self.executor,
            self.ask,
            self.asks,
            self.on_schema,
            self.grounding,
            self.context,
        )
        if parsed.action is Action.ASK_USER:
            self.asks += 1
        return update


def _step(
    response: ChatResponse,
    reasoning: str,
    turn: int,
    index: int,
    remaining: int,
    tool_call: ToolCall | None,
) -> ActionStep:
    """A step of the reply ``response``, before its action is read and performed.

    Args:
        response: the model's reply.
        reasoning: its reasoning text (:func:`~cypherturn.agent.split_reasoning`),
            whose share of the output tokens is counted apart.
        turn: 1-based turn index.
        index: 1-based step index in the turn.
        remaining: units left after this step.
        tool_call: the native tool call of the reply, if any.
    """
    reasoning_tokens = _reasoning_share(response, reasoning)
    return ActionStep(
        turn=turn,
        step=index,
        action=None,
        reply=response.text,
        prompt_tokens=response.prompt_tokens,
        output_tokens=response.completion_tokens - reasoning_tokens,
        reasoning_tokens=reasoning_tokens,
        model_latency_s=response.latency_s,
        budget_remaining=remaining,
        tool_call=tool_call,
    )


def _stuck_step(base: ActionStep, parsed: ActionCall | ParseFailure, repeat_of: int) -> ActionStep:
    """The step of a settled repeat: not performed, :data:`STUCK` as its observation."""
    update: dict[str, object] = {"observation": STUCK, "ok": False, "repeat_of": repeat_of}
    if isinstance(parsed, ActionCall):
        update |= {"action": parsed.action, "payload": parsed.payload}
    return base.model_copy(update=update)


_SOURCES: dict[Action | None, str] = {
    Action.EXECUTE_CYPHER: "the database",
    Action.INSPECT_SCHEMA: "the database",
    Action.SEARCH_VALUES: "the database",
    Action.ASK_USER: "the user",
    None: "the harness (your reply was not read as an action)",
}


def observation_message(
    step: ActionStep, tail: str, tool_call: ToolCall | None, framing: Framing
) -> ChatMessage:
    """The message that gives the model a step's observation.

    Args:
        step: the step (its observation text is the content, as the paper has it).
        tail: appended after the observation (the ignored-calls note and the budget footer).
        tool_call: the tool call answered (``None``: text format, a ``user`` message).
        framing: ``paper``: ``Observation:`` before the text in the text format, the bare
            text as the tool reply; ``explicit``: in both formats a header naming the
            source, ``Observation from the database (not written by you):``.

    Returns:
        A ``tool`` message answering ``tool_call``, else a ``user`` message.
    """
    if framing is Framing.EXPLICIT:
        source = _SOURCES.get(step.action, "the harness")
        head = f"Observation from {source} (not written by you):\n"
    else:
        head = "" if tool_call is not None else "Observation:\n"
    content = f"{head}{step.observation}{tail}"
    if tool_call is not None:
        return ChatMessage(role="tool", content=content, tool_call_id=tool_call.id)
    return ChatMessage(role="user", content=content)


def _perform(
    call: ActionCall,
    executor: ActionExecutor,
    ask: AskHandler,
    asks: int,
    on_schema: Callable[[str], None] | None,
    grounding: AgentGrounding | None,
    context: TurnContext | None = None,
) -> dict[str, object]:
    """The step fields an action sets (its payload and observation)."""
    fields: dict[str, object] = {
        "action": call.action,
        "payload": call.payload,
        "repaired": call.repaired,
    }
    if call.action is Action.SUBMIT_ANSWER:
        obs = executor.submit_answer(call.payload, grounding, context)
        fields.update(observation=obs.text, execution_latency_s=obs.latency_s)
        return {**fields, **_grounded_fields(call, obs)}
    if call.action is Action.ASK_USER:
        reply, tokens = ask(call.payload, asks)
        fields.update(observation=f"User: {reply}", simulator_tokens=tokens)
        return fields
    if call.action is Action.EXECUTE_CYPHER:
        obs = executor.execute_cypher(call.payload, grounding, context)
        fields.update(_grounded_fields(call, obs))
    elif call.action is Action.INSPECT_SCHEMA:
        obs = executor.inspect_schema()
        if on_schema is not None:
            on_schema(obs.text)
    else:
        obs = executor.search_values(call.payload)
    fields.update(
        observation=obs.text,
        ok=obs.ok,
        error_class=obs.error_class,
        rows=obs.rows,
        execution_latency_s=obs.latency_s,
    )
    return fields


def _grounded_fields(call: ActionCall, obs: Observation) -> dict[str, object]:
    """What grounding changed: the query that ran or was submitted, the repairs, the findings."""
    fields: dict[str, object] = {
        "grounding_repairs": obs.repairs,
        "grounding_findings": obs.findings,
    }
    if obs.query is not None:
        fields.update(payload=obs.query, original_payload=call.payload)
    return fields

"""Single pass, Independent Scaling (RAS paper Algorithm 1) and Reflection-Augmented Scaling (Algorithm 2).

The three strategies share one loop and differ only in the context of later
attempts: ``single`` stops after one attempt, ``is`` resamples from the same
context C0 = (x, S), ``ras`` appends each failed query q_t and the engine's
message m_t (with a corrective instruction) before the next attempt.
They talk to the model only through :meth:`ChatModel.chat` and to the graph
only through :meth:`GraphEngine.execute`.

The registry that names them (and ``ras+``) is ``strategies/_registry.py``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from cypherturn.errors import ErrorClass, QueryError, TimeBudgetSpent
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.models import ChatMessage, ChatModel, ChatResponse, call_limits
from cypherturn.strategies._budget import TimeBudget
from cypherturn.strategies._examples import FewShotExample
from cypherturn.strategies._extract import extract_cypher
from cypherturn.strategies._prompts import PromptSet, load_prompts
from cypherturn.strategies._records import Attempt, StrategyConfig, StrategyResult

__all__ = [
    "EMPTY_EXTRACTION_MESSAGE",
    "ScalingStrategy",
    "Strategy",
    "TokenCallback",
    "attempt_record",
]

logger = logging.getLogger(__name__)

TokenCallback = Callable[[str], None]
"""Called with each piece of generated text as a streaming model produces it."""

EMPTY_EXTRACTION_MESSAGE = "No Cypher statement was found in the response."
"""The failure message of an attempt whose completion holds no query.

Such an attempt is a failed attempt classed :attr:`ErrorClass.SYNTAX` (an empty
statement does not parse), and RAS feeds this message back as m_t.
"""


@runtime_checkable
class Strategy(Protocol):
    """An inference-time strategy selected by name (``single``, ``is``, ``ras``)."""

    @property
    def name(self) -> str:
        """The strategy's name, recorded in results."""
        ...

    def initial_context(
        self,
        engine: GraphEngine,
        question: str,
        schema_text: str,
        config: StrategyConfig | None = None,
        examples: Sequence[FewShotExample] = (),
    ) -> list[ChatMessage]:
        """The context of attempt 1 (C0 of RAS Algorithm 2), as :meth:`run` would build it.

        Args are those of :meth:`run`. Everything before its last message is
        the same for every question on a graph (the prompt prefix a model can
        keep evaluated); the last message is the question.

        Raises:
            ConfigError: the config names an unknown prompt version.
        """
        ...

    def run(
        self,
        model: ChatModel,
        engine: GraphEngine,
        question: str,
        schema_text: str,
        config: StrategyConfig | None = None,
        examples: Sequence[FewShotExample] = (),
    ) -> StrategyResult:
        """Answer one question with at most ``config.budget`` attempts.

        Args:
            model: the chat model.
            engine: the graph the queries run on (read-only, through ``execute``).
            question: the natural-language question x.
            schema_text: the schema S rendered as text by the graph package.
            config: decoding and execution settings (default: :class:`StrategyConfig`).
            examples: few-shot pairs for prompt versions that show them (v2),
                e.g. :func:`schema_examples`; part of C0, so identical for IS and RAS.

        Returns:
            Every attempt and the final query: the first executable one, else
            the last one generated. When ``config.max_seconds`` runs out, the
            attempts that finished and ``stop_reason``.

        Raises:
            ModelError: the model failed (an infrastructure error, not a query failure).
            EngineConnectionError: the engine is unreachable.
            ConfigError: the config names an unknown prompt version.
            CallAbandoned: the process is stopping (a stop of the current
                :func:`~cypherturn.models.call_limits` was set).
        """
        ...


@dataclass(frozen=True, slots=True)
class ScalingStrategy:
    """The loop shared by Algorithms 1 and 2.

    Attributes:
        name: the strategy's name.
        reflect: append (q_t, m_t) to the context after each failure (RAS).
        single_pass: make exactly one attempt whatever the budget.
        on_token: called with each generated piece of text when the model streams.
    """

    name: str
    reflect: bool
    single_pass: bool = False
    on_token: TokenCallback | None = None

    def initial_context(
        self,
        engine: GraphEngine,
        question: str,
        schema_text: str,
        config: StrategyConfig | None = None,
        examples: Sequence[FewShotExample] = (),
    ) -> list[ChatMessage]:
        """See :meth:`Strategy.initial_context`."""
        prompts = load_prompts((config or StrategyConfig()).prompt_version)
        return prompts.initial_context(question, schema_text, examples)

    def run(
        self,
        model: ChatModel,
        engine: GraphEngine,
        question: str,
        schema_text: str,
        config: StrategyConfig | None = None,
        examples: Sequence[FewShotExample] = (),
    ) -> StrategyResult:
        """See :meth:`Strategy.run`."""
        config = config or StrategyConfig()
        prompts = load_prompts(config.prompt_version)
        budget = 1 if self.single_pass else config.budget
        clock = TimeBudget(config.max_seconds)
        context = prompts.initial_context(question, schema_text, examples)
        attempts: list[Attempt] = []
        final_result: QueryResult | None = None
        stop_reason: str | None = None
        for index in range(1, budget + 1):
            if clock.spent():
                stop_reason = clock.reason(len(attempts), during=False)
                break
            seed = config.attempt_seed(index)
            extra: dict[str, Any] = {} if self.on_token is None else {"on_token": self.on_token}
            try:
                with call_limits(deadline=clock.deadline):
                    response = model.chat(
                        list(context),
                        temperature=config.temperature,
                        max_tokens=config.max_tokens,
                        seed=seed,
                        **extra,
                    )
                    attempt, final_result = _attempt(
                        engine, index, len(context), seed, response, config, clock
                    )
            except TimeBudgetSpent:
                # the attempt in progress is cut: nothing of it is kept
                stop_reason = clock.reason(len(attempts), during=True)
                final_result = None
                break
            attempts.append(attempt)
            logger.debug(
                "%s attempt %d/%d: %s %s",
                self.name,
                index,
                budget,
                attempt.outcome,
                attempt.error_class,
            )
            if attempt.ok:
                break
            if self.reflect and index < budget:
                context.extend(_feedback(prompts, attempt))
        return StrategyResult(
            strategy=self.name,
            budget=budget,
            prompt_version=prompts.version,
            model=model.spec,
            question=question,
            config=config,
            attempts=attempts,
            final_query=attempts[-1].query if attempts else "",
            final_result=final_result if attempts and attempts[-1].ok else None,
            success=bool(attempts) and attempts[-1].ok,
            stop_reason=stop_reason,
            elapsed_s=clock.elapsed_s(),
            recalled=[e.question for e in examples if e.recalled and prompts.system is not None],
        )


def _attempt(
    engine: GraphEngine,
    index: int,
    context_messages: int,
    seed: int | None,
    response: ChatResponse,
    config: StrategyConfig,
    clock: TimeBudget,
) -> tuple[Attempt, QueryResult | None]:
    """Extract and execute one completion; a query the engine refuses is a failed attempt.

    Raises:
        TimeBudgetSpent: no time is left to run the query.
    """
    query = extract_cypher(response.text)
    result: QueryResult | None = None
    error_class: ErrorClass | None = None
    error_message: str | None = None
    execution_s = 0.0
    if not query:
        error_class, error_message = ErrorClass.SYNTAX, EMPTY_EXTRACTION_MESSAGE
    else:
        timeout = clock.query_timeout(engine, config.timeout_s)
        started = time.perf_counter()
        try:
            result = engine.execute(query, timeout_s=timeout, row_cap=config.row_cap)
        except QueryError as e:
            error_class, error_message = e.error_class, e.engine_message
        execution_s = time.perf_counter() - started
    attempt = attempt_record(
        index=index,
        context_messages=context_messages,
        response=response,
        query=query,
        result=result,
        error=(error_class, error_message),
        seed=seed,
        execution_s=execution_s,
    )
    return attempt, result


def attempt_record(
    *,
    index: int,
    context_messages: int,
    response: ChatResponse,
    query: str,
    result: QueryResult | None,
    error: tuple[ErrorClass | None, str | None],
    seed: int | None,
    execution_s: float,
    **grounding: Any,
) -> Attempt:
    """The :class:`Attempt` of one completion and its execution (shared by every strategy).

    Args:
        index: the attempt's 1-based number t.
        context_messages: messages in the context the model saw.
        response: the model's completion (text, token counts, latency).
        query: the Cypher that ran (``""`` when none was extracted).
        result: the engine's result, ``None`` when the query failed.
        error: the error class and the engine's message, ``(None, None)`` when it ran.
        seed: the sampling seed of the attempt.
        execution_s: seconds spent executing (and re-executing) the query.
        grounding: the ``ras+`` fields (``original_query``, ``findings``, ``repairs``, ``verdict``).
    """
    error_class, error_message = error
    return Attempt(
        index=index,
        context_messages=context_messages,
        raw_text=response.text,
        query=query,
        outcome="ok" if result is not None else "error",
        error_class=error_class,
        error_message=error_message,
        row_count=result.row_count if result is not None else None,
        truncated=result.truncated if result is not None else False,
        prompt_tokens=response.prompt_tokens,
        completion_tokens=response.completion_tokens,
        finish_reason=response.finish_reason,
        seed=seed,
        model_latency_s=response.latency_s,
        execution_latency_s=execution_s,
        logprob=response.logprob,
        **grounding,
    )


def _feedback(prompts: PromptSet, attempt: Attempt) -> list[ChatMessage]:
    """The (q_t, m_t) turn; an empty extraction shows the model its own raw answer instead."""
    shown = attempt.query or attempt.raw_text.strip()
    return prompts.feedback_turn(shown, attempt.error_message or "")

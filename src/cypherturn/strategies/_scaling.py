"""Single pass, Independent Scaling (RAS paper Algorithm 1) and Reflection-Augmented Scaling (Algorithm 2).

The three strategies share one loop and differ only in the context of later
attempts: ``single`` stops after one attempt, ``is`` resamples from the same
context C0 = (x, S), ``ras`` appends each failed query q_t and the engine's
message m_t (with a corrective instruction) before the next attempt.
They talk to the model only through :meth:`ChatModel.chat` and to the graph
only through :meth:`GraphEngine.execute`.

Strategies are found by name in a registry (:func:`register_strategy`,
:func:`get_strategy`); the built-ins (``single``, ``is``, ``ras``, ``ras+``)
register themselves at import.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, runtime_checkable

from cypherturn._registry import Registry
from cypherturn.errors import ConfigError, ErrorClass, QueryError, TimeBudgetSpent
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.models import ChatMessage, ChatModel, ChatResponse, call_limits
from cypherturn.strategies._budget import TimeBudget
from cypherturn.strategies._examples import FewShotExample
from cypherturn.strategies._extract import extract_cypher
from cypherturn.strategies._prompts import PromptSet, load_prompts
from cypherturn.strategies._records import Attempt, StrategyConfig, StrategyResult

__all__ = [
    "EMPTY_EXTRACTION_MESSAGE",
    "STRATEGIES",
    "STRATEGY_NAMES",
    "Strategy",
    "StrategyFactory",
    "TokenCallback",
    "get_strategy",
    "register_strategy",
    "strategy_names",
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
class _ScalingStrategy:
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


class StrategyFactory(Protocol):
    """Builds a registered strategy: ``factory(options, on_token=...)``.

    ``options`` is the text after ``NAME:`` in a strategy name (``ras+:check,values``
    gives ``"check,values"``), ``None`` when the name has no ``:``. A factory that
    takes no options raises :class:`ConfigError` for any; the strategy it returns
    names itself in results (``Strategy.name``).
    """

    def __call__(self, options: str | None, *, on_token: TokenCallback | None) -> Strategy:
        """The strategy; ConfigError for options it does not take."""
        ...


STRATEGIES: Registry[StrategyFactory] = Registry("strategy")
"""Every strategy by name: the built-ins, then those added by :func:`register_strategy`."""


def register_strategy(name: str, factory: StrategyFactory, *, replace: bool = False) -> None:
    """Make a strategy available by name to :func:`get_strategy` (and so to the API and CLI).

    Args:
        name: the name (no ``:``; the part after one goes to the factory as options).
        factory: builds the strategy (:class:`StrategyFactory`).
        replace: allow replacing a registered strategy of that name.

    Raises:
        ConfigError: the name is empty or holds ``:``, or is taken and ``replace`` is false.
    """
    if ":" in name:
        raise ConfigError(f"a strategy name holds no ':', not {name!r}")
    STRATEGIES.register(name, factory, replace=replace)


def strategy_names() -> tuple[str, ...]:
    """The registered strategy names, in registration order (built-ins first)."""
    return STRATEGIES.names()


def _scaling(strategy: _ScalingStrategy) -> StrategyFactory:
    def build(options: str | None, *, on_token: TokenCallback | None) -> Strategy:
        if options is not None:
            raise ConfigError(f"strategy {strategy.name!r} takes no options, not {options!r}")
        return replace(strategy, on_token=on_token)

    return build


def _grounded(options: str | None, *, on_token: TokenCallback | None) -> Strategy:
    """``ras+`` (every part on), ``ras+:<part>,<part>`` (only those) or ``ras+:-<part>`` (all but those)."""
    from cypherturn.strategies._grounded import GroundedStrategy
    from cypherturn.strategies._records import GroundingParts

    if options is None:
        return GroundedStrategy(GroundingParts(), on_token=on_token)
    return GroundedStrategy(GroundingParts.parse(options), on_token=on_token)


GROUNDED = "ras+"
"""Name of the grounded strategy; ``ras+:<part>,<part>`` turns on only the listed parts,
``ras+:-<part>,-<part>`` every part but those (``ras+:-vote``)."""

register_strategy(
    "single", _scaling(_ScalingStrategy(name="single", reflect=False, single_pass=True))
)
register_strategy("is", _scaling(_ScalingStrategy(name="is", reflect=False)))
register_strategy("ras", _scaling(_ScalingStrategy(name="ras", reflect=True)))
register_strategy(GROUNDED, _grounded)

STRATEGY_NAMES = strategy_names()
"""The built-in strategy names (plus the ``ras+:<parts>`` forms); :func:`strategy_names`
also lists those registered later."""


def get_strategy(name: str, *, on_token: TokenCallback | None = None) -> Strategy:
    """The strategy with this name, from the registry.

    Args:
        name: a registered name, or ``NAME:<options>`` for a strategy that takes
            options. Built-ins: ``single`` (one attempt), ``is`` (Independent
            Scaling, Algorithm 1), ``ras`` (Reflection-Augmented Scaling,
            Algorithm 2), ``ras+`` (RAS grounded in the schema and the data,
            every part on), ``ras+:<part>[,<part>...]`` with only the listed
            parts on (parts: ``check``, ``values``, ``repair``, ``grammar``,
            ``select``, ``feedback``, ``greedy``, ``vote``, ``link``), or
            ``ras+:-<part>[,-<part>...]`` with every part but those.
        on_token: called with each generated piece of text, for streaming display.

    Returns:
        The strategy.

    Raises:
        ConfigError: unknown name (the message lists the registered ones), or
            options the strategy does not take (an unknown ras+ part).
    """
    base, sep, options = name.partition(":")
    if base not in STRATEGIES:
        raise STRATEGIES.unknown(name, f" (or {GROUNDED}:<parts>)")
    return STRATEGIES.get(base)(options if sep else None, on_token=on_token)

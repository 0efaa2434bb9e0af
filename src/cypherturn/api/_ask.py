"""`ask`: one plain-language question answered with generated Cypher, executed read-only."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cypherturn.answers import Answer, answer_in_words, template_answer
from cypherturn.api._engines import DEFAULT_GRAPH, connect
from cypherturn.api._memory import graph_memory
from cypherturn.errors import ConfigError, TimeBudgetSpent
from cypherturn.memory import DEFAULT_RECALL, Recall
from cypherturn.models import ChatModel, GGUFChatModel, call_limits, load_model
from cypherturn.strategies import (
    FewShotExample,
    StrategyConfig,
    StrategyResult,
    TokenCallback,
    get_strategy,
    recalled_examples,
    schema_context,
)

__all__ = [
    "DEFAULT_MAX_SECONDS",
    "AskConfig",
    "answer_within_budget",
    "ask",
    "memory_examples",
    "require_question",
    "run_ask",
]

DEFAULT_MAX_SECONDS = 60.0
"""Wall-clock budget of one answer of ``ask``, ``chat`` and the MCP ``ask`` tool, seconds.

A minute is what a person waits for an answer at a prompt; at the defaults a
``ras+`` turn takes 13 s at the median with Qwen2.5-Coder-1.5B on two cores
(``docs/results/chat-latency/``), so the budget cuts only the runaway questions
(one took 243 s). Benchmark and QER runs have none unless their configuration
records one."""

MIN_ANSWER_S = 1.0
"""Budget left below which the answer in words is the template, not a model call, seconds."""


class AskConfig(BaseModel):
    """What `cypherturn ask` runs: the graph, the strategy and its budget, the model, the limits.

    Values are checked where they are used (:class:`~cypherturn.strategies.StrategyConfig`,
    :func:`~cypherturn.strategies.get_strategy`, :func:`~cypherturn.models.load_model`),
    so a bad one raises the same error whichever way the API is called.

    Attributes:
        graph: graph name; a known world is loaded on first use.
        engine_url: as in :func:`~cypherturn.api.connect`.
        strategy: ``single``, ``is``, ``ras``, ``ras+`` or ``ras+:<part>,...``
            (only the listed grounding parts on).
        budget: T, the most attempts.
        model: a model spec (``default``, ``gguf:PATH``, ``openai:NAME``, ``replay:FILE``).
        model_options: keyword options for :func:`cypherturn.models.load_model`.
        temperature: sampling temperature (``None``: 0.9, RAS §4.7).
        seed: base sampling seed, for reproducible runs.
        timeout_s: per-query timeout, seconds (``None``: 120).
        row_cap: rows kept per query.
        data_path: dataset files for the first load.
        prompt_version: ``v1`` (the RAS paper's zero-shot GraphCypherQAChain
            prompt) or ``v2`` (``None``: the default, schema-derived few-shot examples).
        max_seconds: wall-clock budget of one answer, seconds: the strategy's
            attempts and queries, then the answer in words
            (:func:`answer_within_budget`); ``None``: no budget. Loading the model
            and opening (on first use, loading) the graph are not counted. Once it
            is spent the best verified candidate so far is returned, or no query
            with the reason in ``StrategyResult.stop_reason`` (``ask`` then exits 3).
        recall: remembered pairs of the graph (:mod:`cypherturn.memory`, kept by
            ``cypherturn learn`` and chat's ``/remember``) shown to the model as
            examples, the nearest the question first; 0 shows none.
    """

    model_config = ConfigDict(extra="forbid")

    graph: str = DEFAULT_GRAPH
    engine_url: str | None = None
    strategy: str = "ras+"
    budget: int = 5
    model: str = "default"
    model_options: dict[str, Any] = Field(default_factory=dict)
    temperature: float | None = None
    seed: int | None = None
    timeout_s: float | None = None
    row_cap: int | None = None
    data_path: Path | None = None
    prompt_version: str | None = None
    max_seconds: float | None = Field(default=DEFAULT_MAX_SECONDS, gt=0.0)
    recall: int = Field(default=DEFAULT_RECALL, ge=0, le=20)

    def strategy_config(self) -> StrategyConfig:
        """The decoding and execution settings of the strategy run (unset ones: its defaults).

        Raises:
            ConfigError: a setting is out of range.
        """
        settings: dict[str, Any] = {
            "budget": self.budget,
            "seed": self.seed,
            "timeout_s": self.timeout_s,
            "row_cap": self.row_cap,
            "max_seconds": self.max_seconds,
        }
        if self.temperature is not None:
            settings["temperature"] = self.temperature
        if self.prompt_version is not None:
            settings["prompt_version"] = self.prompt_version
        return StrategyConfig(**settings)


def answer_within_budget(
    model: ChatModel,
    question: str,
    result: StrategyResult,
    *,
    on_token: TokenCallback | None = None,
    seed: int | None = None,
) -> Answer:
    """The answer in words to ``result``'s rows, within what its time budget left.

    The strategy spent ``result.elapsed_s`` of ``result.config.max_seconds``; the
    model writes the answer in the rest (:func:`~cypherturn.answers.answer_in_words`),
    and when nothing is left, or the budget runs out while it writes, the answer
    is the template built from the rows, with the reason. Without a budget this
    is ``answer_in_words``.

    Args:
        model: the model that writes.
        question: the question as the user asked it.
        result: the strategy's result; its ``final_result`` must hold rows.
        on_token: called with each piece of the answer as it is generated.
        seed: sampling seed passed to the model.

    Returns:
        The answer record.

    Raises:
        ConfigError: ``result`` has no final result.
    """
    rows = result.final_result
    if rows is None:
        raise ConfigError("there is no result to answer from")
    budget = result.config.max_seconds
    left = None if budget is None or result.elapsed_s is None else budget - result.elapsed_s
    if left is None:
        return answer_in_words(
            model, question, result.final_query, rows, on_token=on_token, seed=seed
        )
    spent = Answer(
        text=template_answer(rows),
        source="template",
        reason=f"the time budget of {budget:g} s was spent before the answer in words",
    )
    if not rows.rows:
        return answer_in_words(model, question, result.final_query, rows)
    if left <= MIN_ANSWER_S:
        return spent
    try:
        with call_limits(deadline=time.monotonic() + left):
            return answer_in_words(
                model, question, result.final_query, rows, on_token=on_token, seed=seed
            )
    except TimeBudgetSpent:
        return spent.model_copy(
            update={
                "reason": f"the time budget of {budget:g} s ran out while the answer was written"
            }
        )


def require_question(question: str) -> str:
    """``question`` stripped of surrounding blanks.

    Raises:
        ConfigError: nothing is left (an empty or blank question is refused before
            any model call, by `ask`, `chat` and the API alike).
    """
    text = question.strip()
    if not text:
        raise ConfigError("the question is empty")
    return text


def run_ask(
    question: str,
    config: AskConfig,
    *,
    model: ChatModel | None = None,
    on_token: TokenCallback | None = None,
) -> StrategyResult:
    """Answer one question under ``config`` (what `cypherturn ask` calls).

    Runs ``single``, ``is`` (RAS paper Algorithm 1), ``ras`` (Algorithm 2) or
    ``ras+`` (RAS grounded in the schema and stored values: static check,
    value grounding, deterministic repairs, schema grammar, candidate selection,
    notes feedback; see :mod:`cypherturn.strategies._grounded`) with budget
    T = ``config.budget`` against the graph's introspected schema.

    Args:
        question: the question x.
        config: the run's settings.
        model: a loaded model to use instead of loading ``config.model``
            (``config.model_options`` are then unused).
        on_token: called with each piece of generated text as the model streams it.

    Returns:
        Every attempt and the final query with its rows; when ``config.max_seconds``
        ran out first, the best candidate of the finished attempts, or none, with
        ``stop_reason`` saying so.

    Raises:
        ConfigError: an empty question, unknown strategy or model spec, bad option.
        ModelError: the model cannot be loaded or reached.
        EngineConnectionError, DatasetError: as in :func:`~cypherturn.api.connect`.
    """
    require_question(question)
    chosen = get_strategy(config.strategy, on_token=on_token)
    chat_model = model if model is not None else load_model(config.model, **config.model_options)
    if isinstance(chat_model, GGUFChatModel):
        # loaded here, so the first attempt's seconds are its own and not the load's
        chat_model.load()
    strategy_config = config.strategy_config()
    with connect(config.graph, engine_url=config.engine_url, data_path=config.data_path) as engine:
        schema_text, examples = schema_context(chosen, engine)
        examples = [*examples, *memory_examples(config, question)]
        return chosen.run(chat_model, engine, question, schema_text, strategy_config, examples)


def memory_examples(config: AskConfig, question: str) -> list[FewShotExample]:
    """The graph's remembered pairs nearest ``question``, as examples (``config.recall`` of them).

    Raises:
        DatasetError: the memory file is not a memory.
    """
    if config.recall <= 0:
        return []
    pairs = graph_memory(config.graph, config.engine_url).pairs()
    return recalled_examples(Recall(pairs) if pairs else None, question, config.recall)


def ask(
    question: str,
    *,
    graph: str = DEFAULT_GRAPH,
    engine_url: str | None = None,
    strategy: str = "ras+",
    budget: int = 5,
    model: str | ChatModel = "default",
    model_options: dict[str, Any] | None = None,
    temperature: float | None = None,
    seed: int | None = None,
    timeout_s: float | None = None,
    row_cap: int | None = None,
    data_path: Path | None = None,
    prompt_version: str | None = None,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
    recall: int = DEFAULT_RECALL,
    on_token: TokenCallback | None = None,
) -> StrategyResult:
    """Answer one plain-language question: :func:`run_ask` with the settings as keywords.

    Args:
        question: the question x.
        model: a model spec or a loaded :class:`ChatModel`.
        graph / engine_url / strategy / budget / model_options / temperature / seed /
            timeout_s / row_cap / data_path / prompt_version / max_seconds / recall:
            as in :class:`AskConfig` (``max_seconds=None``: no wall-clock budget).
        on_token: called with each piece of generated text as the model streams it.

    Returns:
        Every attempt and the final query with its rows.

    Raises:
        As :func:`run_ask`.
    """
    config = AskConfig(
        graph=graph,
        engine_url=engine_url,
        strategy=strategy,
        budget=budget,
        model=model if isinstance(model, str) else model.spec,
        model_options=model_options or {},
        temperature=temperature,
        seed=seed,
        timeout_s=timeout_s,
        row_cap=row_cap,
        data_path=data_path,
        prompt_version=prompt_version,
        max_seconds=max_seconds,
        recall=recall,
    )
    return run_ask(
        question, config, model=None if isinstance(model, str) else model, on_token=on_token
    )

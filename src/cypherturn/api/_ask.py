"""`ask`: one plain-language question answered with generated Cypher, executed read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cypherturn.api._engines import DEFAULT_GRAPH, connect
from cypherturn.errors import ConfigError
from cypherturn.models import ChatModel, GGUFChatModel, load_model
from cypherturn.strategies import (
    StrategyConfig,
    StrategyResult,
    TokenCallback,
    get_strategy,
    schema_context,
)

__all__ = ["AskConfig", "ask", "require_question", "run_ask"]


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
        }
        if self.temperature is not None:
            settings["temperature"] = self.temperature
        if self.prompt_version is not None:
            settings["prompt_version"] = self.prompt_version
        return StrategyConfig(**settings)


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
        Every attempt and the final query with its rows.

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
        return chosen.run(chat_model, engine, question, schema_text, strategy_config, examples)


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
    on_token: TokenCallback | None = None,
) -> StrategyResult:
    """Answer one plain-language question: :func:`run_ask` with the settings as keywords.

    Args:
        question: the question x.
        model: a model spec or a loaded :class:`ChatModel`.
        graph / engine_url / strategy / budget / model_options / temperature / seed /
            timeout_s / row_cap / data_path / prompt_version: as in :class:`AskConfig`.
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
    )
    return run_ask(
        question, config, model=None if isinstance(model, str) else model, on_token=on_token
    )

"""The public Python API: the same verbs as the CLI, as functions.

Only this module and :mod:`cypherturn.cli` turn names (``--engine``,
``--model``, ``--strategy``, ``--graph``) into objects; everything below them
receives objects.

Example:
    >>> from cypherturn import api
    >>> result = api.ask("How many crimes are there?", graph="pole")  # doctest: +SKIP
    >>> result.final_query, result.success  # doctest: +SKIP
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphEngine, LoadStats, open_engine, render_schema_prompt
from cypherturn.models import ChatModel, load_model
from cypherturn.strategies import StrategyConfig, StrategyResult, get_strategy, schema_examples
from cypherturn.worlds import get_world, load_world, world_names

__all__ = ["DEFAULT_GRAPH", "ask", "connect", "load"]

logger = logging.getLogger(__name__)

DEFAULT_GRAPH = "pole"
"""The graph `ask` uses when none is named: the public Crime (POLE) dataset."""


@contextmanager
def connect(
    graph: str = DEFAULT_GRAPH,
    *,
    engine_url: str | None = None,
    load_if_missing: bool = True,
    data_path: Path | None = None,
) -> Iterator[GraphEngine]:
    """Open an engine on a graph, loading a known world into it on first use.

    Args:
        graph: graph name on the engine (FalkorDB key, Neo4j database); when it is
            also a known world (``pole``, ``healthcare``, ...) and the graph is empty,
            the world is loaded first.
        engine_url: ``None`` for the embedded FalkorDB, or ``falkordb://``,
            ``redis://``, ``bolt://``, ``neo4j://`` URLs.
        load_if_missing: load a known world into an empty graph.
        data_path: dataset files to load from instead of the packaged copy.

    Yields:
        The engine, closed on exit.

    Raises:
        EngineConnectionError: the engine cannot be started or reached.
        DatasetError: the graph is empty and is not a known world, or its files are bad.
    """
    engine = open_engine(engine_url, graph)
    try:
        if load_if_missing and not engine.exists():
            if graph.lower().replace("-", "_") not in world_names():
                raise DatasetError(
                    f"graph {graph!r} is empty on this engine and is not a known world "
                    f"({', '.join(world_names())}); load data into it first"
                )
            logger.info("graph %s is empty: loading it", graph)
            load_world(engine, get_world(graph), path=data_path)
        yield engine
    finally:
        engine.close()


def load(
    name: str,
    *,
    engine_url: str | None = None,
    graph: str | None = None,
    path: Path | None = None,
    seed: int = 0,
    scale: float = 1.0,
    replace: bool = False,
) -> LoadStats:
    """Build a world and load it into an engine (batched, idempotent, counts verified).

    Args:
        name: world name (``pole``, ``healthcare``, a synthetic world, ``fraud``).
        engine_url: as in :func:`connect`.
        graph: graph name to load under (default: the world's name).
        path: dataset files to read instead of the packaged copy (datasets only).
        seed: generator seed (synthetic worlds only).
        scale: size multiplier (synthetic worlds only).
        replace: drop the graph first; otherwise an already complete graph is kept.

    Returns:
        Counts read back from the engine and the wall time, seconds.

    Raises:
        DatasetError: unknown world, malformed files, counts that do not match.
        EngineConnectionError: the engine cannot be started or reached.
    """
    world = get_world(name)
    engine = open_engine(engine_url, graph or world.info.name)
    try:
        return load_world(engine, world, path=path, seed=seed, scale=scale, replace=replace)
    finally:
        engine.close()


def ask(
    question: str,
    *,
    graph: str = DEFAULT_GRAPH,
    engine_url: str | None = None,
    strategy: str = "ras",
    budget: int = 5,
    model: str | ChatModel = "default",
    model_options: dict[str, Any] | None = None,
    temperature: float | None = None,
    seed: int | None = None,
    timeout_s: float | None = None,
    row_cap: int | None = None,
    data_path: Path | None = None,
    prompt_version: str | None = None,
) -> StrategyResult:
    """Answer one plain-language question with generated Cypher, executed read-only.

    Runs ``single``, ``is`` (RAS paper Algorithm 1) or ``ras`` (Algorithm 2) with
    budget T = ``budget`` against the graph's introspected schema.

    Args:
        question: the question x.
        graph: graph name; a known world is loaded on first use.
        engine_url: as in :func:`connect`.
        strategy: ``single``, ``is`` or ``ras``.
        budget: T, the most attempts.
        model: a model spec (``default``, ``gguf:PATH``, ``openai:NAME``,
            ``replay:FILE``) or a :class:`ChatModel`.
        model_options: keyword options for :func:`cypherturn.models.load_model`.
        temperature: sampling temperature (default 0.9, RAS §4.7).
        seed: base sampling seed, for reproducible runs.
        timeout_s: per-query timeout, seconds (default 120).
        row_cap: rows kept per query.
        data_path: dataset files for the first load.
        prompt_version: ``v1`` (the RAS paper's zero-shot GraphCypherQAChain
            prompt) or ``v2`` (default: schema-derived few-shot examples).

    Returns:
        Every attempt and the final query with its rows.

    Raises:
        ConfigError: unknown strategy or model spec, bad option.
        ModelError: the model cannot be loaded or reached.
        EngineConnectionError, DatasetError: as in :func:`connect`.
    """
    chosen = get_strategy(strategy)
    chat_model = load_model(model, **(model_options or {})) if isinstance(model, str) else model
    settings: dict[str, Any] = {
        "budget": budget,
        "seed": seed,
        "timeout_s": timeout_s,
        "row_cap": row_cap,
    }
    if temperature is not None:
        settings["temperature"] = temperature
    if prompt_version is not None:
        settings["prompt_version"] = prompt_version
    config = StrategyConfig(**settings)
    with connect(graph, engine_url=engine_url, data_path=data_path) as engine:
        schema = engine.schema()
        return chosen.run(
            chat_model,
            engine,
            question,
            render_schema_prompt(schema),
            config,
            schema_examples(schema),
        )

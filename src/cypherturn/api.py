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
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from cypherturn import runner
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.graph import GraphEngine, LoadStats, open_engine, render_schema_prompt
from cypherturn.graph._embedded import (
    EmbeddedServerStatus,
    find_embedded_servers,
    stop_leftover_servers,
)
from cypherturn.metrics import ProtocolName, Scorer, TurnRecord, TurnScore, score_run
from cypherturn.models import ChatModel, load_model
from cypherturn.protocols import ActionFormat, ProtocolSettings, get_variant
from cypherturn.runner import RunSummary, SessionResult
from cypherturn.sessions import Session, read_sessions
from cypherturn.strategies import (
    StrategyConfig,
    StrategyResult,
    TokenCallback,
    get_strategy,
    schema_examples,
)
from cypherturn.worlds import get_world, load_official_graph, load_world, world_names

__all__ = [
    "DEFAULT_GRAPH",
    "OFFICIAL_GRAPH_PREFIX",
    "ask",
    "bench_engines",
    "connect",
    "doctor",
    "load",
    "official_graph_name",
    "run_benchmark",
    "run_session",
]

logger = logging.getLogger(__name__)

_E = TypeVar("_E", bound=Enum)

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
    """Answer one plain-language question with generated Cypher, executed read-only.

    Runs ``single``, ``is`` (RAS paper Algorithm 1), ``ras`` (Algorithm 2) or
    ``ras+`` (RAS grounded in the schema and stored values: static check,
    value grounding, deterministic repairs, schema grammar, candidate selection,
    notes feedback; see :mod:`cypherturn.strategies._grounded`) with budget
    T = ``budget`` against the graph's introspected schema.

    Args:
        question: the question x.
        graph: graph name; a known world is loaded on first use.
        engine_url: as in :func:`connect`.
        strategy: ``single``, ``is``, ``ras``, ``ras+`` or ``ras+:<part>,...``
            (only the listed grounding parts on).
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
        on_token: called with each piece of generated text as the model streams it.

    Returns:
        Every attempt and the final query with its rows.

    Raises:
        ConfigError: unknown strategy or model spec, bad option.
        ModelError: the model cannot be loaded or reached.
        EngineConnectionError, DatasetError: as in :func:`connect`.
    """
    chosen = get_strategy(strategy, on_token=on_token)
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


OFFICIAL_GRAPH_PREFIX = "cypherturn_official_"
"""Graph name prefix of official release graphs (``bench import --check`` loads them there)."""


def doctor(*, stop: bool = False, stop_all: bool = False) -> list[EmbeddedServerStatus]:
    """The embedded FalkorDB servers running on this machine, and optionally stop leftovers.

    A leftover is a server no live process uses (``idle``) or whose data
    directory is gone (``orphan``); the watchdog stops those on its own
    within a second, so a leftover means a server started without one (an
    older cypherturn) or a watchdog that could not act.

    Args:
        stop: stop the leftovers (SIGTERM, then SIGKILL after 30 s).
        stop_all: stop every embedded server, in use or not.

    Returns:
        One status per server found, ``stopped`` set on those stopped.
    """
    if stop or stop_all:
        return stop_leftover_servers(include_in_use=stop_all)
    return find_embedded_servers()


def official_graph_name(world: str) -> str:
    """The graph an official release graph is loaded into: ``cypherturn_official_<world>``."""
    return f"{OFFICIAL_GRAPH_PREFIX}{world}"


@contextmanager
def bench_engines(
    sessions: Sequence[Session],
    *,
    engine_url: str | None = None,
    release_root: Path | None = None,
) -> Iterator[Callable[[str], GraphEngine]]:
    """Engines on the graphs a benchmark's golds were verified on.

    Generated sessions: each world is loaded (once, then kept) into the graph
    ``cypherturn_run_<world>_s<graph_seed>_x<graph_scale>``, so a graph built
    with other settings is never mistaken for it. Imported official sessions:
    the release graph ``cypherturn_official_<world>``, loaded from
    ``release_root/data/graphs/<world>/`` when given, else as an earlier
    ``cypherturn bench import --check`` left it.

    Args:
        sessions: the sessions to be run.
        engine_url: as in :func:`connect`.
        release_root: root of the official release (holds ``data/graphs/``).

    Yields:
        ``engine_for(world) -> GraphEngine``, opening and loading on first use;
        every engine is closed on exit.

    Raises:
        ConfigError: one world with several builds among the sessions; an
            official graph neither loaded nor loadable (no ``release_root``).
        DatasetError: malformed release files.
    """
    builds: dict[str, tuple[int, float] | None] = {}
    for session in sessions:
        build = (
            None
            if session.source == "official"
            else (session.graph_seed or 0, session.graph_scale or 1.0)
        )
        if builds.setdefault(session.world, build) != build:
            raise ConfigError(f"sessions of {session.world} come from different world builds")
    with ExitStack() as stack:
        opened: dict[str, GraphEngine] = {}

        def engine_for(world: str) -> GraphEngine:
            if world not in opened:
                build = builds[world]
                if build is None:
                    engine = open_engine(engine_url, official_graph_name(world))
                    stack.callback(engine.close)
                    _official_graph(engine, world, release_root)
                else:
                    seed, scale = build
                    name = f"cypherturn_run_{world}_s{seed}_x{scale:g}".replace(".", "_")
                    engine = open_engine(engine_url, name)
                    stack.callback(engine.close)
                    load_world(engine, get_world(world), seed=seed, scale=scale)
                opened[world] = engine
            return opened[world]

        yield engine_for


def _official_graph(engine: GraphEngine, world: str, release_root: Path | None) -> None:
    if release_root is not None:
        folder = release_root / "data" / "graphs" / world
        load_official_graph(
            engine, folder / "data.cypher", folder / "schema.json", engine.graph, replace=True
        )
    elif not engine.exists() or engine.node_count() == 0:
        raise ConfigError(
            f"the official graph {world!r} is not loaded: pass the release root "
            f"(--release PATH, the folder holding data/graphs/{world}/), or run "
            "`cypherturn bench import <file> --check` first"
        )


def _choice(kind: type[_E], value: str, what: str) -> _E:
    """``kind(value)``, or a ConfigError naming the option and its choices."""
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(member.value) for member in kind)
        raise ConfigError(f"unknown {what} {value!r}; choose from {choices}") from None


def _protocol_settings(
    protocol: str,
    budget: int | None,
    variant: str,
    temperature: float,
    seed: int | None,
    max_tokens: int,
    action_format: str,
) -> ProtocolSettings:
    chosen = _choice(ProtocolName, protocol, "protocol")
    chosen_variant = get_variant(variant)
    chosen_format = _choice(ActionFormat, action_format, "action format")
    if budget is None:
        budget = chosen_variant.default_multiplier
    try:
        return ProtocolSettings(
            protocol=chosen,
            budget_multiplier=budget,
            variant=chosen_variant.name,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            action_format=chosen_format,
        )
    except ValueError as e:
        raise ConfigError(str(e)) from e


def run_session(
    session: Session,
    *,
    model: str | ChatModel = "default",
    protocol: str = "guided",
    budget: int | None = None,
    variant: str = "base",
    sim_model: str | ChatModel | None = None,
    engine_url: str | None = None,
    log_path: Path | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
    max_tokens: int = 512,
    model_options: dict[str, Any] | None = None,
    action_format: str = "text",
    release_root: Path | None = None,
) -> SessionResult:
    """Play one benchmark session under a protocol (CypherTurn §3.1).

    Args:
        session: the session.
        model: the evaluated model (spec or :class:`ChatModel`).
        protocol: ``guided`` or ``agentic``.
        budget: agentic budget multiplier m (3, 5, 10; default 3, or 10 for
            ``budget_encouraging``); guided accepts only 3.
        variant: ``base``, ``persistent_schema``, ``disclosed_horizon`` or
            ``budget_encouraging`` (agentic only).
        sim_model: the user simulator's model (default: the evaluated model).
        engine_url: as in :func:`connect`.
        log_path: where to write the session's action log.
        temperature: sampling temperature of the evaluated model.
        seed: sampling seed.
        max_tokens: completion cap per action step, tokens.
        action_format: ``text`` (one JSON action per reply) or ``tools`` (native
            tool calling; grammar-constrained calls on GGUF models).
        release_root: the official release's root, for imported official sessions
            (see :func:`bench_engines`).
        model_options: keyword options for :func:`cypherturn.models.load_model`.

    Returns:
        The :class:`~cypherturn.runner.SessionResult` with one TurnRecord per turn.

    Raises:
        ConfigError: unknown protocol, variant or model spec; bad budget.
        EngineConnectionError, DatasetError: as in :func:`connect`.
    """
    settings = _protocol_settings(
        protocol, budget, variant, temperature, seed, max_tokens, action_format
    )
    chat_model = load_model(model, **(model_options or {})) if isinstance(model, str) else model
    simulator = load_model(sim_model) if isinstance(sim_model, str) else sim_model
    with bench_engines([session], engine_url=engine_url, release_root=release_root) as engine_for:
        return runner.run_session(
            session,
            model=chat_model,
            engine=engine_for(session.world),
            settings=settings,
            sim_model=simulator,
            log_path=log_path,
        )


def run_benchmark(
    benchmark: Path | Sequence[Session],
    out_dir: Path,
    *,
    model: str | ChatModel = "default",
    protocol: str = "guided",
    budget: int | None = None,
    variant: str = "base",
    sim_model: str | ChatModel | None = None,
    sessions: str | None = None,
    concurrency: int = 1,
    engine_url: str | None = None,
    temperature: float = 0.0,
    seed: int | None = None,
    max_tokens: int = 512,
    model_options: dict[str, Any] | None = None,
    score: bool = True,
    on_session: Callable[[SessionResult], None] | None = None,
    on_scores: Callable[[list[TurnScore]], None] | None = None,
    action_format: str = "text",
    on_turn: Callable[[TurnRecord], None] | None = None,
    release_root: Path | None = None,
) -> RunSummary:
    """Run a benchmark under a protocol into a run directory, resuming one that is there.

    Mirrors ``cypherturn bench run``. Finished sessions of an earlier run with
    the same configuration are kept, not replayed; a different configuration is
    refused. With ``score``, the completed sessions are then scored
    (:func:`cypherturn.metrics.score_run`), so ``cypherturn report RUN_DIR`` works.

    Args:
        benchmark: a benchmark JSONL file, or the sessions.
        out_dir: the run directory.
        model / protocol / budget / variant / sim_model / temperature / seed /
            max_tokens / model_options / action_format / release_root: as in
            :func:`run_session`.
        sessions: comma-separated shell patterns over session ids and world names.
        concurrency: sessions played at once.
        engine_url: as in :func:`connect`.
        score: score the run when it is done.
        on_session: called after each session (resumed ones included).
        on_scores: when given, each completed session is scored as soon as it
            ends (EX so far) and its :class:`~cypherturn.metrics.TurnScore` list is
            passed here; the gold results computed then are reused by the final scoring.
        on_turn: called with each turn's record as it is played (not for kept turns).

    Returns:
        The :class:`~cypherturn.runner.RunSummary`.

    Raises:
        ConfigError: bad option, selector matching nothing, changed configuration.
        DatasetError: unreadable benchmark or run directory.
        EngineConnectionError: as in :func:`connect`.
    """
    settings = _protocol_settings(
        protocol, budget, variant, temperature, seed, max_tokens, action_format
    )
    pool = read_sessions(benchmark) if isinstance(benchmark, Path) else list(benchmark)
    chosen = runner.select_sessions(pool, sessions)
    chat_model = load_model(model, **(model_options or {})) if isinstance(model, str) else model
    simulator = load_model(sim_model) if isinstance(sim_model, str) else sim_model
    with bench_engines(chosen, engine_url=engine_url, release_root=release_root) as engine_for:
        scorer = Scorer(engine_for)

        def finished(result: SessionResult) -> None:
            if on_session is not None:
                on_session(result)
            if on_scores is not None and result.records:
                on_scores(scorer.score(result.records))

        summary = runner.run_benchmark(
            chosen,
            model=chat_model,
            engines=engine_for,
            settings=settings,
            out_dir=out_dir,
            sim_model=simulator,
            concurrency=concurrency,
            on_session=finished,
            on_turn=on_turn,
        )
        if score and summary.turns:
            score_run(summary.records_path, engine_for, out_dir, gold_cache=scorer.gold_cache)
    return summary

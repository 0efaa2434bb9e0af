"""Engines for the API verbs: connect to a graph, load a world, the benchmark's graphs, doctor."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path

from cypherturn.errors import ConfigError, DatasetError
from cypherturn.graph import (
    EmbeddedServerStatus,
    GraphEngine,
    LoadStats,
    find_embedded_servers,
    open_engine,
    stop_leftover_servers,
)
from cypherturn.sessions import Session
from cypherturn.worlds import (
    check_complete,
    get_world,
    load_official_graph,
    load_world,
    world_names,
)

__all__ = [
    "DEFAULT_GRAPH",
    "OFFICIAL_GRAPH_PREFIX",
    "bench_engines",
    "connect",
    "doctor",
    "load",
    "official_graph_name",
]

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
        DatasetError: the graph is empty and is not a known world, or its files are
            bad; or it is a known world's graph holding other counts than the world's
            (a load left half-written: never served, :func:`~cypherturn.worlds.check_complete`).
    """
    engine = open_engine(engine_url, graph)
    try:
        known = graph.lower().replace("-", "_") in world_names()
        if load_if_missing and not engine.exists():
            if not known:
                raise DatasetError(
                    f"graph {graph!r} is empty on this engine and is not a known world "
                    f"({', '.join(world_names())}); load data into it first"
                )
            logger.info("graph %s is empty: loading it", graph)
            load_world(engine, get_world(graph), path=data_path)
        elif load_if_missing and known and data_path is None:
            check_complete(engine, get_world(graph))
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

"""Build a world and load it into a graph engine, verifying what the engine holds afterwards."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from cypherturn.errors import DatasetError
from cypherturn.graph import GraphEngine, LoadStats
from cypherturn.worlds._base import World

__all__ = ["check_complete", "load_world"]

log = logging.getLogger(__name__)


def _fixed_counts(world: World, seed: int, scale: float) -> tuple[int, int] | None:
    """The world's (nodes, relationships) when known without building it.

    Catalogue counts hold for datasets, and for synthetic worlds only at the
    catalogue's own build (seed 0, scale 1): other seeds draw other sizes.
    """
    info = world.info
    if info.expected_nodes is None or info.expected_relationships is None:
        return None
    if info.kind == "dataset" or (seed == 0 and scale == 1.0):
        return info.expected_nodes, info.expected_relationships
    return None


def check_complete(engine: GraphEngine, world: World) -> None:
    """Refuse a graph that holds other counts than ``world``'s default build.

    Why: docs/design/engine-reliability.md, "Nothing half-loaded".

    A graph that a load left half-written (an engine that loads in place, or a
    cypherturn before loads were staged) or that holds other data under a
    world's name would otherwise be served as the world, answer after answer.
    Only worlds whose counts are known without building them are checked (the
    datasets, and synthetic worlds at their catalogue build).

    Args:
        engine: an engine bound to the world's graph, which exists.
        world: the world the graph's name says it holds.

    Raises:
        DatasetError: the counts differ (both are named, and how to reload).
    """
    expected = _fixed_counts(world, 0, 1.0)
    if expected is None:
        return
    held = (engine.node_count(), engine.relationship_count())
    if held != expected:
        name = world.info.name
        raise DatasetError(
            f"graph {engine.graph!r} holds {held[0]:,} nodes and {held[1]:,} relationships, not "
            f"the {expected[0]:,} and {expected[1]:,} of {name}: an interrupted load or other "
            f"data; reload it with `cypherturn load {name} --graph {engine.graph} --replace`"
        )


def load_world(
    engine: GraphEngine,
    world: World,
    *,
    path: Path | None = None,
    seed: int = 0,
    scale: float = 1.0,
    replace: bool = False,
    batch_size: int = 5_000,
) -> LoadStats:
    """Build ``world`` and write it into the engine's graph, idempotently.

    When the graph already holds data and ``replace`` is False, nothing is
    built or written if the graph holds exactly the world's node and
    relationship counts (the returned stats say ``skipped=True``); any other
    content is refused rather than mixed with the world.

    Args:
        engine: the engine, bound to the graph to load into.
        world: the world to build (see :func:`~cypherturn.worlds.get_world`).
        path: dataset location for public datasets (default: the packaged copy).
        seed: generator seed for synthetic worlds.
        scale: size multiplier for synthetic worlds.
        replace: drop whatever the graph holds and load afresh.
        batch_size: records per write query, passed to ``GraphEngine.load``.

    Returns:
        :class:`LoadStats` with the counts read back from the engine and the
        wall time in seconds of the whole call (build, load, verification).

    Raises:
        DatasetError: the world cannot be built, the graph holds other data
            and ``replace`` is False, or the counts read back after loading
            differ from the built graph's (both numbers given).
        GraphError: the engine failed while writing.
    """
    started = time.perf_counter()
    name = world.info.name
    if not replace and engine.exists():
        held = (engine.node_count(), engine.relationship_count())
        expected = _fixed_counts(world, seed, scale)
        if expected is None:
            data = world.build(seed=seed, scale=scale, path=path)
            expected = (len(data.nodes), len(data.relationships))
        if held != expected:
            raise DatasetError(
                f"graph {engine.graph!r} already holds {held[0]} nodes and {held[1]} "
                f"relationships, not the {expected[0]} and {expected[1]} of {name}; "
                "load with replace=True to overwrite it"
            )
        log.info(
            "graph %r already holds %s (%d nodes, %d relationships); load skipped",
            engine.graph,
            name,
            *held,
        )
        return LoadStats(engine.graph, *held, time.perf_counter() - started, skipped=True)

    data = world.build(seed=seed, scale=scale, path=path)
    built = time.perf_counter()
    log.info(
        "built %s: %d nodes, %d relationships in %.2f s",
        name,
        len(data.nodes),
        len(data.relationships),
        built - started,
    )
    engine.load(data, batch_size=batch_size, replace=replace)
    nodes, relationships = engine.node_count(), engine.relationship_count()
    if (nodes, relationships) != (len(data.nodes), len(data.relationships)):
        raise DatasetError(
            f"graph {engine.graph!r} holds {nodes} nodes and {relationships} relationships "
            f"after loading {name}, expected {len(data.nodes)} and {len(data.relationships)}"
        )
    seconds = time.perf_counter() - started
    log.info(
        "loaded %s into %r in %.2f s (build %.2f s)", name, engine.graph, seconds, built - started
    )
    return LoadStats(engine.graph, nodes, relationships, seconds)

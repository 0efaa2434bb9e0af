"""The memory verbs: `learn` a file of pairs, remember one pair, forget one, a graph's memory."""

from __future__ import annotations

from pathlib import Path

from cypherturn.api._engines import DEFAULT_GRAPH, connect
from cypherturn.memory import (
    LearnReport,
    QuestionMemory,
    VerifiedPair,
    learn_file,
    memory_path,
    verify_pair,
)

__all__ = [
    "forget",
    "graph_memory",
    "learn",
    "remember",
]


def graph_memory(graph: str = DEFAULT_GRAPH, engine_url: str | None = None) -> QuestionMemory:
    """The memory of verified questions of ``graph`` (its file need not exist yet).

    Not in either paper: docs/design/memory.md.

    Args:
        graph: the graph name.
        engine_url: the engine's URL, ``None`` for the embedded one (its host and
            port name the file too: :func:`~cypherturn.memory.memory_path`).

    Returns:
        The memory over ``$CYPHERTURN_HOME/memory/<graph>[-<url hash>].jsonl``.

    Raises:
        ConfigError: an empty graph name.
    """
    return QuestionMemory(memory_path(graph, engine_url))


def learn(
    path: Path,
    *,
    graph: str = DEFAULT_GRAPH,
    engine_url: str | None = None,
    data_path: Path | None = None,
) -> LearnReport:
    """Keep every pair of a JSON Lines file whose query runs on ``graph`` (`cypherturn learn`).

    Args:
        path: lines with ``question`` and ``cypher`` (or ``query``, ``gold``), and
            optionally ``graph`` (:mod:`cypherturn.memory._learn`).
        graph: the graph the pairs are for; a known world is loaded on first use.
        engine_url: as in :func:`~cypherturn.api.connect`.
        data_path: dataset files for the first load.

    Returns:
        What was kept, skipped (another graph) and refused (with the reasons).

    Raises:
        DatasetError: the file cannot be read, or the memory file cannot be written.
        EngineConnectionError: as in :func:`~cypherturn.api.connect`.
    """
    with connect(graph, engine_url=engine_url, data_path=data_path) as engine:
        return learn_file(path, engine, graph_memory(graph, engine_url))


def remember(
    question: str,
    cypher: str,
    *,
    graph: str = DEFAULT_GRAPH,
    engine_url: str | None = None,
    data_path: Path | None = None,
) -> VerifiedPair:
    """Run ``cypher`` read-only on ``graph`` and keep it as the answer to ``question``.

    Args:
        question: the question in words.
        cypher: the query that answers it.
        graph / engine_url: as in :func:`graph_memory`.
        data_path: dataset files for the first load of a known world.

    Returns:
        The stored pair.

    Raises:
        ConfigError: an empty question or query.
        QueryError: the query does not run read-only on the graph.
        EngineConnectionError: as in :func:`~cypherturn.api.connect`.
        DatasetError: the memory file cannot be written.
    """
    with connect(graph, engine_url=engine_url, data_path=data_path) as engine:
        pair = verify_pair(engine, question, cypher, "user")
    graph_memory(graph, engine_url).add([pair])
    return pair


def forget(question: str, *, graph: str = DEFAULT_GRAPH, engine_url: str | None = None) -> bool:
    """Drop the remembered pair for ``question`` (compared normalized).

    Args:
        question: the remembered question.
        graph / engine_url: as in :func:`graph_memory`.

    Returns:
        Whether a pair was dropped.

    Raises:
        DatasetError: the memory file cannot be read or written.
    """
    return graph_memory(graph, engine_url).forget(question)

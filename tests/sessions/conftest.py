"""Fixtures of the session tests: the seven worlds loaded once each, and sessions generated on them.

Graphs live on the test session's one embedded FalkorDB (``embedded_server``);
they are loaded on first use, shared by every test (read-only), and dropped at
the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from session_graphs import WorldGraphs

from cypherturn.graph import EmbeddedFalkorDB, GraphEngine
from cypherturn.sessions import Session


@pytest.fixture(scope="session")
def worlds(embedded_server: EmbeddedFalkorDB) -> Iterator[WorldGraphs]:
    """The seven worlds on the session's embedded FalkorDB, each loaded on first use."""
    graphs = WorldGraphs(embedded_server)
    yield graphs
    for engine in graphs.engines.values():
        engine.drop()
        engine.close()


@pytest.fixture(scope="session")
def ancient(worlds: WorldGraphs) -> GraphEngine:
    """The Ancient Empire graph (read-only)."""
    return worlds.engine("ancient_empire")


@pytest.fixture
def sample_of(worlds: WorldGraphs) -> Callable[[str], list[Session]]:
    """``sample_of(world)``: the shared generated sample of that world."""
    return worlds.sample

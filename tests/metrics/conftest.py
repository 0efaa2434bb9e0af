"""The fixture graph of the EX/PSJS data-file cases, loaded through the real engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.graph import GraphEngine

FIXTURE_GRAPH = Path(__file__).with_name("fixture_graph.cypher")


def load_fixture_graph(engine: GraphEngine) -> GraphEngine:
    """Write the fixture graph (comments stripped) into ``engine``'s empty graph."""
    lines = [
        ln
        for ln in FIXTURE_GRAPH.read_text(encoding="utf-8").splitlines()
        if not ln.startswith("//")
    ]
    engine.write("\n".join(lines))
    return engine


@pytest.fixture
def fixture_engine(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """An engine on a fresh graph holding the fixture graph."""
    return load_fixture_graph(make_engine())

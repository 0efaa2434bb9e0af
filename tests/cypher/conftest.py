"""An engine holding the EX/PSJS fixture graph (the file lives in tests/metrics)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cypherturn.graph import GraphEngine

FIXTURE_GRAPH = Path(__file__).parents[1] / "metrics" / "fixture_graph.cypher"


@pytest.fixture
def fixture_engine(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """An engine on a fresh graph holding tests/metrics/fixture_graph.cypher."""
    engine = make_engine()
    text = FIXTURE_GRAPH.read_text(encoding="utf-8")
    engine.write("\n".join(ln for ln in text.splitlines() if not ln.startswith("//")))
    return engine

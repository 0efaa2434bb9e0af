"""Fixtures of the agent tests: the heroes graph on the real engine."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from protocol_world import load_heroes

from cypherturn.graph import GraphEngine


@pytest.fixture
def heroes(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """An engine on a fresh graph holding the heroes world."""
    engine = make_engine("heroes")
    load_heroes(engine)
    return engine

"""Fixtures: the heroes graph and session of tests/agent/protocol_world.py on the real engine."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "agent"))

from protocol_world import load_heroes, make_session

from cypherturn.graph import GraphEngine
from cypherturn.sessions import Session


@pytest.fixture
def heroes(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """An engine on a fresh graph holding the heroes world."""
    engine = make_engine("heroes")
    load_heroes(engine)
    return engine


@pytest.fixture
def session(heroes: GraphEngine) -> Session:
    """The 4-turn heroes session, gold results computed on the engine."""
    return make_session(heroes)

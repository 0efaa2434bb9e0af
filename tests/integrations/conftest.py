"""A small real graph on the session's embedded FalkorDB, and the bundled model, for the drop-ins."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cypherturn.graph import GraphEngine
from cypherturn.models import ChatModel, load_model


@pytest.fixture
def people(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    """Three people with names and birth years."""
    engine = make_engine("people")
    engine.write(
        "CREATE (:Person {name: 'Ada', born: 1815}), (:Person {name: 'Alan', born: 1912}),"
        " (:Person {name: 'Grace', born: 1906})"
    )
    return engine


@pytest.fixture(scope="module")
def bundled_model() -> ChatModel:
    """The smallest bundled GGUF (SmolLM2-135M), loaded once per module."""
    return load_model("smollm2-135m")

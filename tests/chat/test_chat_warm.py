"""`api.ChatSession.warm`: the first turn's prompt prefix evaluated before the question, on the bundled model."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cypherturn import api
from cypherturn.graph import GraphEngine
from cypherturn.models import (
    CACHE_DIR_ENV,
    ChatResponse,
    GGUFChatModel,
    ReplayChatModel,
    load_model,
)


@pytest.fixture
def town(make_engine: Callable[..., GraphEngine]) -> GraphEngine:
    engine = make_engine("warm")
    engine.write(
        "CREATE (ada:Person {name: 'Ada Lovelace'}), (london:City {name: 'London'}),"
        " (ada)-[:LIVES_IN]->(london)"
    )
    return engine


def _config(engine: GraphEngine, tmp_path: Path) -> api.ChatConfig:
    return api.ChatConfig(
        graph=engine.graph, budget=1, answer=False, transcript=tmp_path / "chat.json"
    )


def test_a_model_without_a_prefix_cache_has_nothing_to_warm(
    town: GraphEngine, tmp_path: Path
) -> None:
    model = ReplayChatModel([])
    with api.ChatSession(_config(town, tmp_path), model=model) as chat:
        assert chat.warm() == 0
    assert model.calls == []


def test_the_first_turn_reuses_the_warmed_prefix(
    town: GraphEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    model = load_model("smollm2-135m")
    assert isinstance(model, GGUFChatModel)
    responses: list[ChatResponse] = []
    chat_of_model = model.chat

    def recorded(*args: Any, **kwargs: Any) -> ChatResponse:
        response = chat_of_model(*args, **kwargs)
        responses.append(response)
        return response

    with api.ChatSession(_config(town, tmp_path), model=model) as chat:
        warmed = chat.warm()
        assert warmed > 0
        # the prefix went to the disk cache too, for the next chat on this graph
        store = model.prefix_store
        assert store is not None and any((tmp_path / "cache").rglob("*"))
        monkeypatch.setattr(model, "chat", recorded)
        chat.ask("Who lives in London?")
    first = responses[0]
    assert first.prompt_cache == "memory" and first.cached_prompt_tokens >= warmed
    assert first.cached_prompt_tokens < first.prompt_tokens

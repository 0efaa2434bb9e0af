"""ReplayChatModel: recorded responses in order, recorded contexts, approximate token counts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from cypherturn.errors import ConfigError, ModelResponseError
from cypherturn.models import (
    ChatMessage,
    ChatModel,
    ReplayChatModel,
    ToolCall,
    approximate_tokens,
    load_model,
)


def test_replays_in_order_and_records_copies_of_each_context() -> None:
    model = ReplayChatModel(["MATCH (n) RETURN n", "RETURN 1"])
    context = [ChatMessage(role="user", content="question one")]

    first = model.chat(context, temperature=0.5, max_tokens=32, seed=3)
    context.append(ChatMessage(role="assistant", content=first.text))
    second = model.chat(context)

    assert isinstance(model, ChatModel)
    assert [first.text, second.text] == ["MATCH (n) RETURN n", "RETURN 1"]
    assert [len(call) for call in model.calls] == [1, 2]
    assert model.calls[0] == [ChatMessage(role="user", content="question one")]
    assert model.settings == [
        {"temperature": 0.5, "max_tokens": 32, "seed": 3, "tools": []},
        {"temperature": 0.9, "max_tokens": 512, "seed": None, "tools": []},
    ]
    assert model.remaining == 0


def test_token_counts_follow_the_documented_approximation() -> None:
    model = ReplayChatModel(["abcdefghi"])
    messages = [
        ChatMessage(role="system", content="12345678"),
        ChatMessage(role="user", content="123"),
    ]

    response = model.chat(messages)

    assert response.prompt_tokens == (2 + 4) + (1 + 4)
    assert response.completion_tokens == 3
    assert approximate_tokens("") == 0
    assert approximate_tokens("x" * 401) == math.ceil(401 / 4)


def test_exhausted_replay_raises_a_response_error() -> None:
    model = ReplayChatModel(["RETURN 1"])
    model.chat([ChatMessage(role="user", content="q")])

    with pytest.raises(ModelResponseError, match="all 1 recorded responses were used"):
        model.chat([ChatMessage(role="user", content="q")])
    assert len(model.calls) == 2


def test_json_file_of_strings_and_text_objects(tmp_path: Path) -> None:
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(["RETURN 1", {"text": "RETURN 2", "prompt_tokens": 10}]))

    model = load_model(f"replay:{path}")

    assert model.spec == f"replay:{path}"
    texts = [model.chat([ChatMessage(role="user", content="q")]).text for _ in range(2)]
    assert texts == ["RETURN 1", "RETURN 2"]


def test_recorded_tool_calls_replay(tmp_path: Path) -> None:
    path = tmp_path / "calls.json"
    calls = [{"name": "EXECUTE_CYPHER", "arguments": {"query": "RETURN 1"}}]
    path.write_text(json.dumps([{"tool_calls": calls}, "RETURN 2"]))
    model = ReplayChatModel.from_file(path)

    first = model.chat([ChatMessage(role="user", content="q")])
    second = model.chat([ChatMessage(role="user", content="q")])

    assert first.text == "" and first.finish_reason == "tool_calls"
    assert first.tool_calls == [
        ToolCall(id="call_0", name="EXECUTE_CYPHER", arguments='{"query": "RETURN 1"}')
    ]
    assert first.completion_tokens > 0
    assert second.tool_calls == [] and second.text == "RETURN 2"


def test_jsonl_file_one_response_per_line(tmp_path: Path) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_text('"RETURN 1"\n\n{"text": "RETURN 2"}\n')

    model = ReplayChatModel.from_file(path)

    assert model.remaining == 2


@pytest.mark.parametrize(
    ("name", "content", "pattern"),
    [
        ("bad.json", "[1, 2", "not valid JSON"),
        ("object.json", '{"text": "RETURN 1"}', "must hold a JSON list"),
        ("item.json", '["RETURN 1", 42]', "response 2: expected a string"),
        ("call.json", '[{"tool_calls": [{"arguments": "{}"}]}]', "response 1: expected a string"),
    ],
)
def test_bad_replay_files_are_config_errors(
    tmp_path: Path, name: str, content: str, pattern: str
) -> None:
    path = tmp_path / name
    path.write_text(content)

    with pytest.raises(ConfigError, match=pattern):
        ReplayChatModel.from_file(path)


def test_missing_replay_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read replay file"):
        load_model(f"replay:{tmp_path / 'absent.json'}")

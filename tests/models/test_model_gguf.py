"""GGUFChatModel with the bundled default model (SmolLM2-135M-Instruct): real in-process generation."""

from __future__ import annotations

import json

import pytest

from cypherturn.agent import tool_definitions
from cypherturn.errors import ContextLengthError
from cypherturn.models import ChatMessage, GGUFChatModel, default_model_path, load_model

SCHEMA = """Node properties:
Person {name: STRING, age: INTEGER}
City {name: STRING}
Relationship properties:

The relationships:
(:Person)-[:LIVES_IN]->(:City)"""

QUESTION = [
    ChatMessage(
        role="user",
        content=(
            "Generate a Cypher statement for this graph schema:\n"
            f"{SCHEMA}\nQuestion: Which people live in Paris?"
        ),
    )
]


@pytest.fixture(scope="module")
def default_model() -> GGUFChatModel:
    model = load_model("default")
    assert isinstance(model, GGUFChatModel)
    model.load()
    return model


def test_default_model_generates_text_with_token_counts(default_model: GGUFChatModel) -> None:
    response = default_model.chat(QUESTION, max_tokens=48, seed=11)

    assert response.text.strip()
    assert 40 < response.prompt_tokens < 400
    assert 1 <= response.completion_tokens <= 48
    assert response.finish_reason in {"stop", "length"}
    assert response.latency_s > 0
    assert response.model == "default"


def test_same_seed_gives_the_same_completion(default_model: GGUFChatModel) -> None:
    first = default_model.chat(QUESTION, max_tokens=24, seed=5)
    second = default_model.chat(QUESTION, max_tokens=24, seed=5)

    assert first.text == second.text
    assert first.completion_tokens == second.completion_tokens


def test_model_is_loaded_once_per_path(default_model: GGUFChatModel) -> None:
    load_s = default_model.load()

    other = GGUFChatModel(default_model_path(), spec="another handle")

    assert other.load() == load_s


def test_prompt_longer_than_the_context_is_a_context_length_error() -> None:
    model = GGUFChatModel(default_model_path(), n_ctx=64)
    long = [ChatMessage(role="user", content="MATCH (n) RETURN n " * 60)]

    with pytest.raises(ContextLengthError, match="exceed context window"):
        model.chat(long, max_tokens=8)


def test_tools_constrain_the_reply_to_one_valid_call(default_model: GGUFChatModel) -> None:
    tools = [t for t in tool_definitions() if t.name in ("EXECUTE_CYPHER", "SUBMIT_ANSWER")]
    messages = [
        ChatMessage(role="system", content="You query a graph of Person nodes with a name."),
        ChatMessage(role="user", content="List the name of every person."),
    ]
    calls = 0
    for seed in (0, 1, 2):
        response = default_model.chat(
            messages, temperature=0.9, max_tokens=96, seed=seed, tools=tools
        )
        if response.finish_reason == "length":
            continue  # a call cut short carries no tool call; the loop reads the text instead
        (call,) = response.tool_calls
        assert call.name in ("EXECUTE_CYPHER", "SUBMIT_ANSWER")
        arguments = json.loads(call.arguments)
        assert set(arguments) == {"query"} and isinstance(arguments["query"], str)
        assert json.loads(response.text, strict=False)["name"] == call.name
        calls += 1
    assert calls > 0


def test_tool_wire_format_without_a_model() -> None:
    from cypherturn.models import ToolCall, ToolSpec
    from cypherturn.models._gguf import _constrained_call, _wire, tool_call_schema

    tool = ToolSpec(name="EXECUTE_CYPHER", parameters={"type": "object", "properties": {}})
    call = ToolCall(id="c1", name="EXECUTE_CYPHER", arguments='{"query": "RETURN 1"}')
    wired = _wire(
        [
            ChatMessage(role="system", content="Answer."),
            ChatMessage(role="assistant", content="", tool_calls=[call]),
            ChatMessage(role="tool", content="1 row", tool_call_id="c1"),
        ],
        [tool],
    )
    assert wired[0]["role"] == "system" and '"name": "EXECUTE_CYPHER"' in wired[0]["content"]
    assert json.loads(wired[1]["content"]) == {
        "name": "EXECUTE_CYPHER",
        "arguments": {"query": "RETURN 1"},
    }
    assert wired[2] == {"role": "user", "content": "1 row"}
    assert tool_call_schema([tool])["anyOf"][0]["properties"]["name"] == {"const": "EXECUTE_CYPHER"}
    assert _constrained_call('{"name": "EXECUTE_CYPHER", "arguments": {"query": "RETURN') == []
    (parsed,) = _constrained_call('{"name": "INSPECT_SCHEMA", "arguments": {}}')
    assert (parsed.name, parsed.arguments) == ("INSPECT_SCHEMA", "{}")
    (raw_newline,) = _constrained_call('{"name": "ASK_USER", "arguments": {"question": "a\nb"}}')
    assert json.loads(raw_newline.arguments) == {"question": "a\nb"}

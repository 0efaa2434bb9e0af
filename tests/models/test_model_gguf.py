"""GGUFChatModel with the bundled default model (SmolLM2-135M-Instruct): real in-process generation.

Also streaming, grammar-constrained decoding and the on-disk prompt-prefix
cache, the last one across real processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cypherturn.agent import tool_definitions
from cypherturn.errors import ConfigError, ContextLengthError
from cypherturn.models import (
    CACHE_DIR_ENV,
    ChatMessage,
    GGUFChatModel,
    ReplayChatModel,
    default_model_path,
    in_own_context,
    load_model,
)

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


@pytest.fixture(scope="module", autouse=True)
def prefix_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private cache folder, so that the module's prefix entries stay out of ~/.cache."""
    folder = tmp_path_factory.mktemp("cypherturn-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(folder))
        yield folder


@pytest.fixture(scope="module")
def default_model(prefix_cache_dir: Path) -> GGUFChatModel:
    model = load_model("smollm2-135m")
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
    assert response.model == "smollm2-135m"


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
    from cypherturn.models._gguf_wire import constrained_call, tool_call_schema, wire_messages

    tool = ToolSpec(name="EXECUTE_CYPHER", parameters={"type": "object", "properties": {}})
    call = ToolCall(id="c1", name="EXECUTE_CYPHER", arguments='{"query": "RETURN 1"}')
    wired = wire_messages(
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
    assert constrained_call('{"name": "EXECUTE_CYPHER", "arguments": {"query": "RETURN') == []
    (parsed,) = constrained_call('{"name": "INSPECT_SCHEMA", "arguments": {}}')
    assert (parsed.name, parsed.arguments) == ("INSPECT_SCHEMA", "{}")
    (raw_newline,) = constrained_call('{"name": "ASK_USER", "arguments": {"question": "a\nb"}}')
    assert json.loads(raw_newline.arguments) == {"question": "a\nb"}


def few_shot_context(question: str = "Which people live in Paris?") -> list[ChatMessage]:
    """A v2-style context (system prompt with schema, one example, the question).

    The system prompt carries a unique tag, so no earlier call of this process
    holds its prefix in memory.
    """
    return [
        ChatMessage(
            role="system",
            content=(
                f"Task {uuid.uuid4().hex}: generate a Cypher statement to query a graph database.\n"
                f"Use only the provided relationship types and properties.\nSchema:\n{SCHEMA}\n"
                "Answer every question with one Cypher statement and nothing else."
            ),
        ),
        ChatMessage(role="user", content="How many Person nodes are there?"),
        ChatMessage(role="assistant", content="MATCH (p:Person) RETURN count(p) AS count"),
        ChatMessage(role="user", content=question),
    ]


def test_streamed_pieces_make_the_text_and_match_the_unstreamed_completion(
    default_model: GGUFChatModel,
) -> None:
    context = few_shot_context()
    pieces: list[str] = []
    # The compared calls start from the same state, the whole prompt already in llama.cpp's
    # memory: a first evaluation (fresh, partly reused from another test's context, or restored
    # from a disk prefix) can differ from a reused one in the last float bits, enough to flip a
    # greedy token of a 135M model, so the warm-up call is not compared.
    default_model.chat(context, temperature=0.0, max_tokens=40, seed=3)
    streamed = default_model.chat(
        context, temperature=0.0, max_tokens=40, seed=3, on_token=pieces.append
    )
    plain = default_model.chat(context, temperature=0.0, max_tokens=40, seed=3)

    assert len(pieces) > 1
    assert "".join(pieces) == streamed.text
    assert streamed.text == plain.text
    assert streamed.finish_reason == plain.finish_reason
    assert streamed.prompt_tokens == plain.prompt_tokens
    # a streamed count is the text re-tokenized (chunks carry no usage), and the sampled
    # tokens need not be the text's canonical tokenization: a few tokens either way
    assert abs(streamed.completion_tokens - plain.completion_tokens) <= 3


def test_the_prompt_prefix_in_memory_is_reported(default_model: GGUFChatModel) -> None:
    context = few_shot_context()
    first = default_model.chat(context, temperature=0.0, max_tokens=8, seed=0)
    context[-1] = ChatMessage(role="user", content="Which cities are there?")

    again = default_model.chat(context, temperature=0.0, max_tokens=8, seed=0)

    assert first.cached_prompt_tokens < first.prompt_tokens / 2
    assert again.prompt_cache == "memory"
    assert again.prompt_tokens / 2 < again.cached_prompt_tokens < again.prompt_tokens


_CHILD = """
import json, sys
from cypherturn.models import ChatMessage, GGUFChatModel, default_model_path
context = [ChatMessage(**m) for m in json.loads(sys.argv[1])]
model = GGUFChatModel(default_model_path())
response = model.chat(context, temperature=0.0, max_tokens=40, seed=7)
print(response.model_dump_json())
"""


def _fresh_process_chat(context: list[ChatMessage], cache: Path) -> dict[str, object]:
    """One call in a new Python process with the cache folder ``cache``."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps([m.model_dump() for m in context])],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, CACHE_DIR_ENV: str(cache)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    record: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return record


def _chat_here(
    context: list[ChatMessage], cache: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, object], GGUFChatModel]:
    """The same call as :func:`_fresh_process_chat`, in this process, by a new model instance."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(cache))
    model = GGUFChatModel(default_model_path())
    response = model.chat(context, temperature=0.0, max_tokens=40, seed=7)
    return response.model_dump(), model


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "prefix").glob("*/*.state"))


def test_a_new_process_loads_the_prefix_from_disk_and_completes_the_same(tmp_path: Path) -> None:
    context = few_shot_context()

    # both calls in new processes: this process's model may already hold the prefix in memory
    first = _fresh_process_chat(context, tmp_path)
    (entry,) = _entries(tmp_path)
    second = _fresh_process_chat(context, tmp_path)

    assert first["prompt_cache"] is None
    assert second["prompt_cache"] == "disk"
    assert isinstance(second["cached_prompt_tokens"], int)
    assert isinstance(second["prompt_tokens"], int)
    assert second["prompt_tokens"] / 2 < second["cached_prompt_tokens"] < second["prompt_tokens"]
    assert second["text"] == first["text"]
    assert _entries(tmp_path) == [entry]


def test_another_question_on_the_same_prefix_reuses_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = few_shot_context()
    _chat_here(context, tmp_path, monkeypatch)
    context[-1] = ChatMessage(role="user", content="Which cities are there?")

    other = _fresh_process_chat(context, tmp_path)

    assert other["prompt_cache"] == "disk"
    assert len(_entries(tmp_path)) == 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "unloadable"])
def test_a_corrupt_entry_is_ignored_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    context = few_shot_context()
    reference, model = _chat_here(context, tmp_path, monkeypatch)
    store = model.prefix_store
    assert store is not None
    (entry,) = _entries(tmp_path)
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        entry.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "flip":
        data[-100] ^= 0xFF
        entry.write_bytes(bytes(data))
    elif damage == "garbage":
        entry.write_bytes(b"not a prefix state")
    else:
        stored = store.read(entry)
        assert stored is not None
        # well-formed and checksummed, but not a state llama.cpp can load
        assert store.write(stored.tokens, b"junk" * 1000) == entry

    recovered = _fresh_process_chat(context, tmp_path)

    assert recovered["prompt_cache"] is None
    assert recovered["text"] == reference["text"]
    assert _entries(tmp_path) == [entry]
    assert store.read(entry) is not None


def test_prefix_cache_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    model = GGUFChatModel(default_model_path(), prefix_cache=False)

    response = model.chat(few_shot_context(), temperature=0.0, max_tokens=4, seed=0)

    assert response.prompt_cache != "disk"
    assert not (tmp_path / "prefix").exists()
    assert model.prefix_store is None


def test_a_grammar_forces_the_text(default_model: GGUFChatModel) -> None:
    forced = "MATCH (n) RETURN n"
    pieces: list[str] = []

    response = default_model.chat(
        few_shot_context(), temperature=0.9, max_tokens=32, seed=1, grammar=f'root ::= "{forced}"'
    )
    streamed = default_model.chat(
        few_shot_context(),
        temperature=0.9,
        max_tokens=32,
        seed=2,
        grammar=f'root ::= "{forced}"',
        on_token=pieces.append,
    )

    assert default_model.supports_grammar
    assert response.text == forced
    assert response.finish_reason == "stop"
    assert "".join(pieces) == streamed.text == forced


def test_a_grammar_choice_stays_within_its_alternatives(default_model: GGUFChatModel) -> None:
    grammar = 'root ::= "MATCH (p:Person) RETURN " ("p.name" | "p.age" | "count(p)")'
    allowed = {f"MATCH (p:Person) RETURN {tail}" for tail in ("p.name", "p.age", "count(p)")}

    texts = {
        default_model.chat(
            few_shot_context(), temperature=1.0, max_tokens=32, seed=seed, grammar=grammar
        ).text
        for seed in range(3)
    }

    assert texts <= allowed


@pytest.mark.parametrize(
    ("grammar", "message"),
    [
        ('root ::= "MATCH', "unexpected end of input"),
        ("root ::= query", "Undefined rule identifier 'query'"),
        ('query ::= "MATCH (n) RETURN n"', "root"),
    ],
)
def test_a_grammar_that_does_not_compile_is_a_config_error(
    default_model: GGUFChatModel, grammar: str, message: str
) -> None:
    with pytest.raises(ConfigError, match="grammar does not compile") as caught:
        default_model.chat(QUESTION, max_tokens=4, grammar=grammar)

    assert message in str(caught.value)


def test_a_grammar_with_tools_is_a_config_error(default_model: GGUFChatModel) -> None:
    tools = [t for t in tool_definitions() if t.name == "EXECUTE_CYPHER"]

    with pytest.raises(ConfigError, match="grammar cannot be combined with tools"):
        default_model.chat(QUESTION, max_tokens=4, tools=tools, grammar='root ::= "x"')


def test_in_own_context_gives_a_gguf_model_a_second_context_and_leaves_others_as_they_are(
    default_model: GGUFChatModel,
) -> None:
    second = in_own_context(default_model, "test-role")
    assert isinstance(second, GGUFChatModel) and second is not default_model
    assert second.spec == default_model.spec
    replay = ReplayChatModel(["Yes."])
    assert in_own_context(replay, "test-role") is replay


def test_a_second_context_leaves_the_first_contexts_prompt_in_memory(
    default_model: GGUFChatModel,
) -> None:
    agent = few_shot_context()
    first = default_model.chat(agent, temperature=0.0, max_tokens=8, seed=0)
    simulator = default_model.with_own_context("test-simulator")
    assert simulator.spec == default_model.spec
    asked = [
        ChatMessage(role="system", content="You are a user asking about a graph of people."),
        ChatMessage(role="user", content="Do you mean the people or the cities?"),
    ]
    simulator.chat(asked, temperature=0.0, max_tokens=8, seed=0)
    agent += [
        ChatMessage(role="assistant", content=first.text),
        ChatMessage(role="user", content="And which cities are there?"),
    ]
    kept = default_model.chat(agent, temperature=0.0, max_tokens=8, seed=0)
    assert kept.prompt_cache == "memory"
    assert kept.cached_prompt_tokens >= first.prompt_tokens
    # the same two calls on one context: the other conversation evicts the agent's
    agent[-1] = ChatMessage(role="user", content="And which people are there?")
    default_model.chat(asked, temperature=0.0, max_tokens=8, seed=0)
    evicted = default_model.chat(agent, temperature=0.0, max_tokens=8, seed=0)
    assert evicted.cached_prompt_tokens < first.prompt_tokens

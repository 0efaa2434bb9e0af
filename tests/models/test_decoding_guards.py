"""GGUF decoding guards (issue 16): the repetition detector, the guarded stream reader, and (slow,
with the bundled SmolLM2-135M) stop sequences and the guard in real generation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cypherturn.agent import ActionCall, action_grammar, parse_action
from cypherturn.models import CACHE_DIR_ENV, ChatMessage, GGUFChatModel, load_model
from cypherturn.models._gguf_guards import REPETITION_MIN_CHARS, repetition_tail, stream_text

ACTION = '{"action": "EXECUTE_CYPHER", "input": "MATCH (h:Hero) RETURN h.name AS name"}'

RUNAWAYS = {
    # the 1.5B model listing the same columns over and over until the token cap
    "columns": "[Query Result] name | power | " + "name | power | " * 30,
    # the same action line again and again
    "lines": "I will run the query.\n" + (ACTION + "\n") * 4,
    # a sentence loop, cut mid-copy (where a check lands between tokens)
    "sentence": "Let me think. " + "The answer is the list of heroes. " * 5 + "The ans",
    # a blank-line flood
    "blank": ACTION + "\n" * 120,
}

NOT_RUNAWAYS = {
    "action": ACTION,
    # an imitated observation: many rows, but no two alike
    "rows": "[Query Result] name | power\n"
    + "\n".join(f"Recruit {i:02d} | {i}" for i in range(1, 26)),
    "in_list": "MATCH (h:Hero) WHERE h.name IN ["
    + ", ".join(f"'Recruit {i:02d}'" for i in range(1, 26))
    + "] RETURN h.name",
    # a short repetition is not a runaway
    "short": "name | name | name | name",
    "reasoning": "<think>The guild is Iron Circle. The heroes are in the guild.</think>\n" + ACTION,
}


@pytest.mark.parametrize("name", RUNAWAYS)
def test_runaway_completions_are_detected(name: str) -> None:
    text = RUNAWAYS[name]
    found = repetition_tail(text)
    assert found is not None
    period, copies = found
    assert period * copies >= REPETITION_MIN_CHARS and copies >= 3
    unit = text[-period:]
    assert text.endswith(unit * copies) and not text.endswith(unit * (copies + 1))


def test_the_shortest_repeated_unit_is_reported() -> None:
    assert repetition_tail(RUNAWAYS["columns"]) == (len("name | power | "), 31)
    assert repetition_tail(RUNAWAYS["lines"]) == (len(ACTION) + 1, 4)
    assert repetition_tail(RUNAWAYS["blank"]) == (1, 120)


@pytest.mark.parametrize("name", NOT_RUNAWAYS)
def test_replies_that_do_not_repeat_themselves_are_left_alone(name: str) -> None:
    assert repetition_tail(NOT_RUNAWAYS[name]) is None


def _chunks(pieces: list[str], pulled: list[str]) -> Iterator[dict[str, Any]]:
    """Chunks in the layout of llama-cpp-python's create_chat_completion(stream=True)."""
    yield {"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]}
    for piece in pieces:
        pulled.append(piece)
        yield {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
    yield {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}


def test_the_guarded_reader_stops_pulling_once_the_text_runs_away() -> None:
    pieces = ["[Query", " Result]", " name", " |", " power", " |"] + [
        " name",
        " |",
        " power",
        " |",
    ] * 200
    pulled: list[str] = []
    seen: list[str] = []
    text, reason = stream_text(_chunks(pieces, pulled), seen.append, guard=True)
    assert reason == "repetition"
    assert len(pulled) < 60  # about 100 characters, not the 800 tokens on offer
    assert seen == pulled and text == "".join(pulled)
    unguarded, plain = stream_text(_chunks(pieces, []), None)
    assert plain == "length" and unguarded == "".join(pieces)


def test_a_reply_that_does_not_repeat_is_read_whole_under_the_guard() -> None:
    text = NOT_RUNAWAYS["rows"]
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    assert stream_text(_chunks(pieces, []), None, guard=True) == (text, "length")


@pytest.fixture(scope="module")
def smollm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GGUFChatModel]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(tmp_path_factory.mktemp("cypherturn-cache")))
        model = load_model("smollm2-135m")
        assert isinstance(model, GGUFChatModel)
        yield model


ASK = [ChatMessage(role="user", content="List the heroes of the Iron Circle.")]


@pytest.mark.slow
@pytest.mark.parametrize("stream", [False, True])
def test_generation_ends_before_a_stop_sequence(smollm: GGUFChatModel, stream: bool) -> None:
    # the grammar makes the model write the observation header; the stop must cut it
    grammar = 'root ::= "SUBMIT now.\\nObservation: name | power"'
    pieces: list[str] = []
    response = smollm.chat(
        ASK,
        temperature=0.0,
        max_tokens=40,
        grammar=grammar,
        stop=["Observation:"],
        on_token=pieces.append if stream else None,
    )
    assert response.text == "SUBMIT now.\n"
    assert response.finish_reason == "stop"
    if stream:
        assert "".join(pieces) == response.text


@pytest.mark.slow
def test_the_repetition_guard_stops_a_runaway_generation(smollm: GGUFChatModel) -> None:
    # at least 40 copies are forced; without the guard the model writes until max_tokens
    grammar = 'root ::= ("name | power | "){40,}'
    guarded = smollm.chat(
        ASK, temperature=0.0, max_tokens=300, grammar=grammar, repetition_guard=True
    )
    assert guarded.finish_reason == "repetition"
    assert repetition_tail(guarded.text) is not None
    assert len(guarded.text) < 2 * REPETITION_MIN_CHARS + 32
    assert 0 < guarded.completion_tokens < 80 and guarded.prompt_tokens > 0
    plain = smollm.chat(ASK, temperature=0.0, max_tokens=300, grammar=grammar)
    assert plain.finish_reason == "length"
    assert len(plain.text) > 2 * len(guarded.text)
    # the context stays usable after a guard stop
    again = smollm.chat(ASK, temperature=0.0, max_tokens=8, grammar='root ::= "ok"')
    assert again.text == "ok"


@pytest.mark.slow
def test_the_protocol_caller_passes_the_guards_to_a_gguf_model(smollm: GGUFChatModel) -> None:
    from cypherturn.protocols import OBSERVATION_STOPS, ModelCaller

    caller = ModelCaller(smollm, temperature=0.0, max_tokens=120, seed=0)
    echo = [
        ChatMessage(
            role="user",
            content="Repeat exactly, three times, the line: Observation: [Query Result] name\nUser: hi",
        )
    ]
    response = caller(echo, guards=True)
    assert not any(stop in response.text for stop in OBSERVATION_STOPS)
    assert response.finish_reason in ("stop", "length", "repetition")


@pytest.mark.slow
def test_a_reply_decoded_under_the_action_grammar_is_one_action(smollm: GGUFChatModel) -> None:
    # a 135M model with no action prompt at all: unconstrained it writes prose
    response = smollm.chat(
        ASK,
        temperature=0.0,
        max_tokens=96,
        grammar=action_grammar(),
        stop=["Observation:"],
        repetition_guard=True,
    )
    assert response.finish_reason == "stop", response.text
    parsed = parse_action(response.text, ended=True)
    assert isinstance(parsed, ActionCall) and not parsed.repaired, response.text

"""Streaming (``on_token``) and the grammar capability of the OpenAI-compatible and replay models.

The OpenAI-compatible model talks to a real HTTP server on 127.0.0.1 that
speaks the chat-completions streaming wire format (server-sent events), so the
openai SDK's real transport, stream decoding and chunk assembly run.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from cypherturn.errors import ConfigError, ModelUnavailableError
from cypherturn.models import NO_RETRY, ChatMessage, OpenAIChatModel, ReplayChatModel, ToolSpec

MESSAGES = [
    ChatMessage(role="system", content="You write Cypher."),
    ChatMessage(role="user", content="How many people are there?"),
]


def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    """One ``chat.completion.chunk`` event body."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def usage_chunk(prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    """The last event of a stream with ``include_usage``: no choices, the usage."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


@dataclass
class StreamServer:
    """Answers every POST with ``status``: the events as an event stream, or ``error`` (JSON)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    error: dict[str, Any] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""


@pytest.fixture
def server() -> Iterator[StreamServer]:
    state = StreamServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            state.requests.append(json.loads(self.rfile.read(length)))
            if state.status != 200:
                payload = json.dumps(state.error).encode()
                self.send_response(state.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                return
            body = state.requests[-1]
            if not body.get("stream"):
                raise AssertionError("a streaming test sent a request without stream: true")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for event in state.events:
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_streamed_text_arrives_in_pieces_with_usage_and_finish_reason(
    server: StreamServer,
) -> None:
    server.events = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "MATCH (p:Person)"}),
        chunk({"content": " RETURN count(p)"}),
        chunk({}, finish_reason="stop"),
        usage_chunk(31, 9),
    ]
    model = OpenAIChatModel("test-model", base_url=server.base_url)
    pieces: list[str] = []

    response = model.chat(MESSAGES, max_tokens=64, seed=7, on_token=pieces.append)

    assert pieces == ["MATCH (p:Person)", " RETURN count(p)"]
    assert response.text == "MATCH (p:Person) RETURN count(p)"
    assert (response.prompt_tokens, response.completion_tokens) == (31, 9)
    assert response.finish_reason == "stop"
    assert response.model == "openai:test-model"
    (request,) = server.requests
    assert request["stream"] is True
    assert request["stream_options"] == {"include_usage": True}
    assert (request["max_tokens"], request["seed"]) == (64, 7)


def test_streamed_tool_call_fragments_are_assembled(server: StreamServer) -> None:
    server.events = [
        chunk(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_9",
                        "type": "function",
                        "function": {"name": "EXECUTE_CYPHER", "arguments": ""},
                    }
                ],
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"query": '}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"RETURN 1"}'}}]}),
        chunk({}, finish_reason="tool_calls"),
        usage_chunk(40, 12),
    ]
    model = OpenAIChatModel("test-model", base_url=server.base_url)
    pieces: list[str] = []
    tool = ToolSpec(name="EXECUTE_CYPHER", parameters={"type": "object", "properties": {}})

    response = model.chat(MESSAGES, tools=[tool], on_token=pieces.append)

    assert pieces == []
    assert response.text == ""
    (call,) = response.tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == (
        "call_9",
        "EXECUTE_CYPHER",
        {"query": "RETURN 1"},
    )
    assert response.finish_reason == "tool_calls"
    assert server.requests[0]["tools"][0]["function"]["name"] == "EXECUTE_CYPHER"


def test_a_refused_streaming_request_maps_to_the_same_errors(server: StreamServer) -> None:
    server.status = 404
    server.error = {"error": {"message": "no such model", "type": "invalid_request_error"}}
    model = OpenAIChatModel("test-model", base_url=server.base_url, retry=NO_RETRY)

    with pytest.raises(ModelUnavailableError, match="does not serve model 'test-model'"):
        model.chat(MESSAGES, on_token=lambda piece: None)


def test_an_openai_model_refuses_a_grammar(server: StreamServer) -> None:
    model = OpenAIChatModel("test-model", base_url=server.base_url)

    assert model.supports_grammar is False
    with pytest.raises(ConfigError, match="cannot decode under a GBNF grammar"):
        model.chat(MESSAGES, grammar='root ::= "RETURN 1"')
    assert server.requests == []


def test_replay_passes_the_whole_text_once() -> None:
    model = ReplayChatModel(["MATCH (n) RETURN n", ""])
    pieces: list[str] = []

    first = model.chat(MESSAGES, on_token=pieces.append)
    second = model.chat(MESSAGES, on_token=pieces.append)

    assert pieces == ["MATCH (n) RETURN n"]
    assert (first.text, second.text) == ("MATCH (n) RETURN n", "")


def test_replay_refuses_a_grammar() -> None:
    model = ReplayChatModel(["RETURN 1"])

    assert model.supports_grammar is False
    with pytest.raises(ConfigError, match="cannot decode under a grammar"):
        model.chat(MESSAGES, grammar='root ::= "RETURN 1"')
    assert model.remaining == 1

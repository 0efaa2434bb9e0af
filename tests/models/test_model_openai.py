"""OpenAIChatModel against a real OpenAI-compatible HTTP server started on 127.0.0.1.

The server is a protocol peer: it speaks the chat-completions wire format
(JSON over HTTP) from a script of canned answers and records the requests, so
the openai SDK's real transport, retry and timeout code runs.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from cypherturn.errors import (
    ConfigError,
    ContextLengthError,
    ModelResponseError,
    ModelTransientError,
    ModelUnavailableError,
)
from cypherturn.models import (
    NO_RETRY,
    ChatMessage,
    OpenAIChatModel,
    RetryPolicy,
    ToolCall,
    ToolSpec,
    load_model,
)


def completion(
    text: str | None, prompt_tokens: int = 31, completion_tokens: int = 9
) -> dict[str, Any]:
    """A chat-completion body as OpenAI-compatible servers send it."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": None, "param": None}}


@dataclass
class Reply:
    status: int
    body: Any
    delay_s: float = 0.0
    raw: bool = False


@dataclass
class ChatServer:
    """A scripted chat-completions endpoint; the last reply repeats once the script runs out."""

    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""
    stop: Callable[[], None] = lambda: None

    def next_reply(self) -> Reply:
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]


@pytest.fixture
def server() -> Iterator[ChatServer]:
    state = ChatServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            state.requests.append({"path": self.path, **json.loads(self.rfile.read(length))})
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            reply = state.next_reply()
            time.sleep(reply.delay_s)
            payload = reply.body.encode() if reply.raw else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (the timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"

    def stop() -> None:
        httpd.shutdown()
        httpd.server_close()

    state.stop = stop
    try:
        yield state
    finally:
        stop()


MESSAGES = [
    ChatMessage(role="system", content="You write Cypher."),
    ChatMessage(role="user", content="How many people are there?"),
]


def test_chat_returns_text_tokens_and_sends_the_request(server: ChatServer) -> None:
    server.script = [Reply(200, completion("MATCH (p:Person) RETURN count(p)"))]
    model = OpenAIChatModel("test-model", base_url=server.base_url)

    response = model.chat(MESSAGES, temperature=0.9, max_tokens=64, seed=7)

    assert response.text == "MATCH (p:Person) RETURN count(p)"
    assert (response.prompt_tokens, response.completion_tokens) == (31, 9)
    assert response.finish_reason == "stop"
    assert response.model == "openai:test-model"
    assert response.latency_s > 0
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["model"] == "test-model"
    assert request["messages"] == [{"role": m.role, "content": m.content} for m in MESSAGES]
    assert request["temperature"] == 0.9
    assert request["max_tokens"] == 64
    assert request["seed"] == 7
    assert server.headers[0]["authorization"] == "Bearer not-needed"


def test_seed_is_omitted_when_not_given_and_key_is_sent(server: ChatServer) -> None:
    server.script = [Reply(200, completion("RETURN 1"))]
    model = OpenAIChatModel("test-model", base_url=server.base_url, api_key="sk-local")

    model.chat(MESSAGES)

    assert "seed" not in server.requests[0]
    assert server.requests[0]["temperature"] == 0.9
    assert server.headers[0]["authorization"] == "Bearer sk-local"


def test_server_error_then_success_is_retried(server: ChatServer) -> None:
    server.script = [
        Reply(500, error_body("overloaded", "server_error")),
        Reply(200, completion("RETURN 1")),
    ]
    model = OpenAIChatModel(
        "test-model", base_url=server.base_url, retry=RetryPolicy(attempts=3, initial_delay_s=0.0)
    )

    response = model.chat(MESSAGES)

    assert response.text == "RETURN 1"
    assert len(server.requests) == 2


def test_persistent_server_error_is_unavailable_after_retries(server: ChatServer) -> None:
    server.script = [Reply(503, error_body("model is loading", "server_error"))]
    model = OpenAIChatModel(
        "test-model", base_url=server.base_url, retry=RetryPolicy(attempts=2, initial_delay_s=0.0)
    )

    with pytest.raises(
        ModelUnavailableError, match=r"HTTP 503: .*model is loading \(gave up after 1 retries\)"
    ):
        model.chat(MESSAGES)
    assert len(server.requests) == 2


def test_unreachable_port_is_a_clear_unavailable_error_without_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    model = OpenAIChatModel(
        "test-model", base_url=url, retry=RetryPolicy(attempts=2, initial_delay_s=0.0)
    )

    with pytest.raises(
        ModelUnavailableError, match=r"cannot connect to .*127\.0\.0\.1.* is the server running"
    ) as raised:
        model.chat(MESSAGES)
    # nothing listens there: a retry would only repeat the message later
    assert not isinstance(raised.value, ModelTransientError)
    assert "gave up" not in str(raised.value)


def test_a_refused_connection_after_an_answer_is_retried(server: ChatServer) -> None:
    server.script = [Reply(200, completion("RETURN 1"))]
    model = OpenAIChatModel(
        "test-model", base_url=server.base_url, retry=RetryPolicy(attempts=2, initial_delay_s=0.0)
    )
    assert model.chat(MESSAGES).text == "RETURN 1"
    server.stop()  # the server restarts: the endpoint has answered before

    with pytest.raises(ModelTransientError, match=r"cannot connect .*gave up after 1 retries"):
        model.chat(MESSAGES)


def test_timeout_is_a_clear_unavailable_error(server: ChatServer) -> None:
    server.script = [Reply(200, completion("RETURN 1"), delay_s=1.0)]
    model = OpenAIChatModel("test-model", base_url=server.base_url, timeout_s=0.2, retry=NO_RETRY)

    with pytest.raises(ModelUnavailableError, match="within the timeout"):
        model.chat(MESSAGES)


@pytest.mark.parametrize(
    ("status", "kind", "error", "pattern"),
    [
        (401, "invalid_request_error", ModelUnavailableError, r"rejected the API key \(HTTP 401\)"),
        (404, "invalid_request_error", ModelUnavailableError, r"does not serve model 'test-model'"),
        (429, "rate_limit_error", ModelUnavailableError, r"HTTP 429"),
        (400, "invalid_request_error", ModelResponseError, r"refused the request \(HTTP 400\)"),
    ],
)
def test_http_errors_are_mapped(
    server: ChatServer, status: int, kind: str, error: type[Exception], pattern: str
) -> None:
    server.script = [Reply(status, error_body("the server says no", kind))]
    model = OpenAIChatModel("test-model", base_url=server.base_url, retry=NO_RETRY)

    with pytest.raises(error, match=pattern):
        model.chat(MESSAGES)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, {"id": "x", "object": "chat.completion", "choices": []}),
        Reply(200, {"id": "x", "object": "chat.completion"}),
        Reply(200, completion(None)),
        Reply(200, "this is not json", raw=True),
    ],
    ids=["no-choices", "choices-missing", "null-content", "not-json"],
)
def test_malformed_answers_are_response_errors(server: ChatServer, reply: Reply) -> None:
    server.script = [reply]
    model = OpenAIChatModel("test-model", base_url=server.base_url, retry=NO_RETRY)

    with pytest.raises(ModelResponseError):
        model.chat(MESSAGES)


def test_load_model_reads_the_base_url_from_the_environment(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.script = [Reply(200, completion("RETURN 2"))]
    monkeypatch.setenv("CYPHERTURN_OPENAI_BASE_URL", server.base_url)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    model = load_model("openai:test-model", retry=NO_RETRY)

    assert model.spec == "openai:test-model"
    assert model.chat(MESSAGES).text == "RETURN 2"


def test_hosted_default_without_a_key_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CYPHERTURN_OPENAI_BASE_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)

    with pytest.raises(ModelUnavailableError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-4o-mini")


def test_empty_model_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        OpenAIChatModel("", base_url="http://127.0.0.1:9/v1")


def test_tools_are_sent_and_tool_calls_read_back(server: ChatServer) -> None:
    body = completion(None)
    body["choices"][0]["message"]["tool_calls"] = [
        {
            "id": "call_7",
            "type": "function",
            "function": {"name": "EXECUTE_CYPHER", "arguments": '{"query": "RETURN 1"}'},
        }
    ]
    body["choices"][0]["finish_reason"] = "tool_calls"
    server.script = [Reply(200, body)]
    model = OpenAIChatModel("test-model", base_url=server.base_url)
    tool = ToolSpec(
        name="EXECUTE_CYPHER",
        description="Run a query.",
        parameters={"type": "object", "properties": {"query": {"type": "string"}}},
    )
    history = [
        *MESSAGES,
        ChatMessage(
            role="assistant",
            content="",
            tool_calls=[ToolCall(id="call_6", name="INSPECT_SCHEMA", arguments="{}")],
        ),
        ChatMessage(role="tool", content="(:Person)", tool_call_id="call_6"),
    ]
    response = model.chat(history, tools=[tool])
    assert response.text == ""
    assert response.tool_calls == [
        ToolCall(id="call_7", name="EXECUTE_CYPHER", arguments='{"query": "RETURN 1"}')
    ]
    assert response.finish_reason == "tool_calls"
    sent = server.requests[0]
    assert sent["tools"] == [tool.openai()] and sent["tool_choice"] == "auto"
    assert sent["messages"][2]["tool_calls"][0]["function"]["name"] == "INSPECT_SCHEMA"
    assert sent["messages"][3] == {"role": "tool", "content": "(:Person)", "tool_call_id": "call_6"}


def test_no_tools_means_no_tools_field(server: ChatServer) -> None:
    server.script = [Reply(200, completion("RETURN 1"))]
    OpenAIChatModel("test-model", base_url=server.base_url).chat(MESSAGES)
    assert "tools" not in server.requests[0] and "tool_choice" not in server.requests[0]


def test_server_without_tool_support_is_a_response_error(server: ChatServer) -> None:
    server.script = [
        Reply(
            400,
            error_body(
                '"auto" tool choice requires --enable-auto-tool-choice', "invalid_request_error"
            ),
        )
    ]
    model = OpenAIChatModel("test-model", base_url=server.base_url)
    tool = ToolSpec(name="INSPECT_SCHEMA")
    with pytest.raises(ModelResponseError, match=r"HTTP 400.*tool choice"):
        model.chat(MESSAGES, tools=[tool])


def test_a_prompt_over_the_context_window_is_a_context_length_error(server: ChatServer) -> None:
    vllm = (
        "This model's maximum context length is 4096 tokens. However, you requested "
        "4200 tokens (4100 in the messages, 100 in the completion)."
    )
    server.script = [Reply(400, error_body(vllm, "BadRequestError"))]
    model = OpenAIChatModel("test-model", base_url=server.base_url)
    with pytest.raises(ContextLengthError, match="context window"):
        model.chat(MESSAGES)
    server.script = [Reply(400, error_body("temperature must be at most 2", "invalid_request"))]
    with pytest.raises(ModelResponseError) as refused:
        model.chat(MESSAGES)
    assert not isinstance(refused.value, ContextLengthError)

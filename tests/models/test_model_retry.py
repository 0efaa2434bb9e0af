"""The model layer's one retry policy (RetryPolicy, call_with_retries, OpenAIChatModel).

The HTTP tests talk to a real chat-completions server on 127.0.0.1 (stdlib
``http.server`` in a thread) through the real openai client, so the SDK's
transport and error types run; the SDK's own retries are off, so every retry
counted here is the policy's.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from cypherturn.errors import (
    ConfigError,
    ModelResponseError,
    ModelTransientError,
    ModelUnavailableError,
)
from cypherturn.graph import GraphEngine
from cypherturn.models import (
    NO_RETRY,
    ChatMessage,
    OpenAIChatModel,
    RetryPolicy,
    call_with_retries,
    load_model,
)
from cypherturn.strategies import StrategyConfig, get_strategy

FAST = RetryPolicy(attempts=4, initial_delay_s=0.0)
MESSAGES = [ChatMessage(role="user", content="How many heroes are there?")]


def _completion(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
    }


class Endpoint:
    """Answers each POST with the next ``(status, text, headers)``; the last one repeats."""

    def __init__(self) -> None:
        self.script: list[tuple[int, str, dict[str, str]]] = []
        self.calls = 0
        self.url = ""

    def reply(self) -> tuple[int, str, dict[str, str]]:
        self.calls += 1
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            status, text, headers = state.reply()
            body = _completion(text) if status == 200 else {"error": {"message": text}}
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_default_policy_backs_off_and_validates() -> None:
    assert RetryPolicy().delays() == [0.5, 1.0, 2.0, 4.0, 8.0]
    policy = RetryPolicy(attempts=5, initial_delay_s=2.0, factor=3.0, max_delay_s=10.0)
    assert policy.delays() == [2.0, 6.0, 10.0, 10.0]
    assert policy.delay(1, retry_after_s=7.0) == 7.0  # a longer Retry-After wins
    assert policy.delay(1, retry_after_s=60.0) == 10.0  # up to the cap
    assert policy.delay(3, retry_after_s=1.0) == 10.0  # never shortens the backoff
    assert NO_RETRY.retries == 0
    with pytest.raises(ConfigError, match="at least 1 attempt"):
        RetryPolicy(attempts=0)
    with pytest.raises(ConfigError, match="factor"):
        RetryPolicy(factor=0.5)


def test_only_transient_errors_are_retried_and_each_retry_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failures = [ModelTransientError("HTTP 503"), ModelTransientError("HTTP 503")]
    slept: list[float] = []

    def flaky() -> str:
        if failures:
            raise failures.pop(0)
        return "ok"

    policy = RetryPolicy(attempts=3, initial_delay_s=1.0)
    with caplog.at_level(logging.WARNING, logger="cypherturn.models._retry"):
        assert call_with_retries(policy, flaky, label="m", sleep=slept.append) == ("ok", 2)
    assert slept == [1.0, 2.0]
    assert [r.getMessage() for r in caplog.records] == [
        "m: HTTP 503; retry 1 in 1.0 s",
        "m: HTTP 503; retry 2 in 2.0 s",
    ]


@pytest.mark.parametrize(
    "error",
    [ModelUnavailableError("no such GGUF file"), ModelResponseError("HTTP 400")],
    ids=["local-model-failure", "refused-request"],
)
def test_other_errors_are_raised_at_once(error: Exception) -> None:
    calls: list[float] = []

    def failing() -> str:
        calls.append(1.0)
        raise error

    with pytest.raises(type(error)):
        call_with_retries(RetryPolicy(attempts=3), failing, label="m", sleep=calls.append)
    assert calls == [1.0]  # one call, no sleep


def test_429_then_200_is_retried_honouring_retry_after(
    endpoint: Endpoint, caplog: pytest.LogCaptureFixture
) -> None:
    endpoint.script = [(429, "slow down", {"Retry-After": "0.3"}), (200, "RETURN 1", {})]
    model = OpenAIChatModel("m", base_url=endpoint.url, retry=FAST)
    with caplog.at_level(logging.WARNING, logger="cypherturn.models._retry"):
        response = model.chat(MESSAGES)
    assert response.text == "RETURN 1" and response.retries == 1
    assert endpoint.calls == 2
    assert response.latency_s >= 0.3  # the endpoint's wait, not the policy's 0 s
    assert [r.getMessage() for r in caplog.records] == [
        f"openai:m: {endpoint.url}/ failed with HTTP 429: Error code: 429 - slow down; "
        "retry 1 in 0.3 s"
    ]


def test_500_three_times_then_200_is_retried_three_times(endpoint: Endpoint) -> None:
    endpoint.script = [(500, "overloaded", {})] * 3 + [(200, "RETURN 2", {})]
    response = load_model("openai:m", base_url=endpoint.url, retry=FAST).chat(MESSAGES)
    assert response.text == "RETURN 2" and response.retries == 3
    assert endpoint.calls == 4


def test_a_persistent_500_gives_up_after_the_last_attempt(endpoint: Endpoint) -> None:
    endpoint.script = [(503, "model is loading", {})]
    model = OpenAIChatModel("m", base_url=endpoint.url, retry=FAST)
    with pytest.raises(
        ModelTransientError, match=r"HTTP 503: .*model is loading \(gave up after 3 retries\)"
    ):
        model.chat(MESSAGES)
    assert endpoint.calls == 4


@pytest.mark.parametrize(
    ("status", "error"), [(400, ModelResponseError), (401, ModelUnavailableError)]
)
def test_a_refused_request_is_not_retried(
    endpoint: Endpoint, status: int, error: type[Exception]
) -> None:
    endpoint.script = [(status, "no", {}), (200, "RETURN 3", {})]
    with pytest.raises(error) as raised:
        OpenAIChatModel("m", base_url=endpoint.url, retry=FAST).chat(MESSAGES)
    assert not isinstance(raised.value, ModelTransientError)
    assert endpoint.calls == 1


def test_the_is_strategy_gets_the_retries_of_load_model(
    endpoint: Endpoint, make_engine: Callable[..., GraphEngine]
) -> None:
    engine = make_engine()
    engine.write("CREATE (:Hero {name: 'Ada'}), (:Hero {name: 'Bo'})")
    endpoint.script = [(503, "busy", {}), (200, "MATCH (h:Hero) RETURN count(h) AS n", {})]
    model = load_model("openai:m", base_url=endpoint.url, retry=FAST)
    result = get_strategy("is").run(
        model, engine, "How many heroes?", "(:Hero)", StrategyConfig(budget=1)
    )
    assert result.success and len(result.attempts) == 1
    assert result.final_result is not None and result.final_result.rows == [[2]]
    assert endpoint.calls == 2

"""Model calls obey the limits of their context: a stop abandons them in flight, a deadline cuts them.

The GGUF cases run the bundled SmolLM2-135M and end a call in the middle of
llama.cpp's prompt evaluation; the endpoint cases use a local server that
answers after 5 s.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cypherturn.errors import CallAbandoned, TimeBudgetSpent
from cypherturn.models import (
    CACHE_DIR_ENV,
    NO_RETRY,
    ChatMessage,
    GGUFChatModel,
    OpenAIChatModel,
    ReplayChatModel,
    RetryPolicy,
    call_limits,
    current_limits,
    limited_sleep,
    load_model,
    stop_calls,
)

LONG = [ChatMessage(role="user", content="word " * 1500 + "\nHow many words are there?")]
"""A prompt whose evaluation takes a while (1,500 tokens), so a call is surely in flight."""


def test_limits_nest_stops_add_up_and_the_earliest_deadline_wins() -> None:
    first, second = threading.Event(), threading.Event()
    now = time.monotonic()
    with call_limits(stop=first, deadline=now + 10):
        with call_limits(stop=second, deadline=now + 20) as inner:
            assert inner.stops == (first, second) and inner.deadline == now + 10
        assert current_limits().stops == (first,)
    assert current_limits().stops == () and current_limits().deadline is None


def test_a_limited_sleep_ends_at_once_on_a_stop_and_refuses_to_outlive_the_deadline() -> None:
    stop = threading.Event()
    threading.Timer(0.2, lambda: stop_calls(stop)).start()
    started = time.monotonic()
    with call_limits(stop=stop), pytest.raises(CallAbandoned):
        limited_sleep(30)
    assert time.monotonic() - started < 1.0
    started = time.monotonic()
    with call_limits(deadline=time.monotonic() + 1), pytest.raises(TimeBudgetSpent):
        limited_sleep(5)  # a retry that would end past the budget is not waited for
    assert time.monotonic() - started < 0.1


def test_a_replay_model_refuses_calls_once_stopped() -> None:
    stop = threading.Event()
    model = ReplayChatModel(["RETURN 1", "RETURN 2"])
    with call_limits(stop=stop):
        assert model.chat(LONG).text == "RETURN 1"
        stop_calls(stop)
        with pytest.raises(CallAbandoned):
            model.chat(LONG)
    assert model.chat(LONG).text == "RETURN 2"  # outside the limits, calls run again


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GGUFChatModel]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(tmp_path_factory.mktemp("cache")))
        model = load_model("smollm2-135m", prefix_cache=False)
        assert isinstance(model, GGUFChatModel)
        model.load()
        yield model


def test_a_gguf_call_in_flight_is_abandoned_on_a_stop_and_cut_at_the_deadline(
    bundled: GGUFChatModel,
) -> None:
    stop = threading.Event()
    threading.Timer(0.3, lambda: stop_calls(stop)).start()
    started = time.monotonic()
    with call_limits(stop=stop), pytest.raises(CallAbandoned, match="abandoned"):
        bundled.chat(LONG, max_tokens=200, temperature=0.0)
    assert time.monotonic() - started < 1.0  # the decode stops within milliseconds of the stop

    started = time.monotonic()
    with call_limits(deadline=time.monotonic() + 0.4), pytest.raises(TimeBudgetSpent):
        bundled.chat(LONG, max_tokens=200, temperature=0.0, on_token=lambda piece: None)
    assert time.monotonic() - started < 1.0

    # the context stays usable: the next call completes as usual
    reply = bundled.chat([ChatMessage(role="user", content="Say hi.")], max_tokens=8)
    assert reply.text and reply.completion_tokens > 0


@pytest.fixture
def slow_endpoint() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            time.sleep(5)
            body = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": "m",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": "RETURN 1"},
                            "finish_reason": "stop",
                        }
                    ],
                }
            ).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("retry", [NO_RETRY, RetryPolicy(attempts=4, initial_delay_s=2.0)])
def test_an_endpoint_call_is_cut_at_the_deadline_not_at_its_timeout(
    slow_endpoint: str, retry: RetryPolicy, tmp_path: Path
) -> None:
    # the request timeout is 120 s and the retries would wait 2 + 4 + 8 s: the deadline wins
    model = OpenAIChatModel("m", base_url=slow_endpoint, retry=retry)
    started = time.monotonic()
    with call_limits(deadline=time.monotonic() + 0.5), pytest.raises(TimeBudgetSpent):
        model.chat(LONG)
    assert time.monotonic() - started < 1.5

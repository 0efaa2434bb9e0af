"""Chat models behind any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp server, LM Studio, hosted APIs)."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import openai
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from cypherturn.errors import (
    ConfigError,
    ContextLengthError,
    CypherTurnError,
    ModelResponseError,
    ModelTransientError,
    ModelUnavailableError,
    TimeBudgetSpent,
)
from cypherturn.models._base import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatResponse,
    ToolCall,
    ToolSpec,
)
from cypherturn.models._limits import current_limits
from cypherturn.models._retry import RetryPolicy, call_with_retries

__all__ = [
    "BASE_URL_ENV_VARS",
    "DEFAULT_TIMEOUT_S",
    "LOCAL_API_KEY",
    "OpenAIChatModel",
]

logger = logging.getLogger(__name__)

BASE_URL_ENV_VARS = ("CYPHERTURN_OPENAI_BASE_URL", "OPENAI_BASE_URL")
"""Environment variables read for the endpoint URL, first one set wins."""

DEFAULT_TIMEOUT_S = 120.0
"""Timeout of one HTTP request, seconds (each retry gets its own)."""

_TRANSIENT_STATUS = frozenset({408, 409, 429})
"""HTTP statuses below 500 that may pass (the set the openai SDK itself retries)."""

LOCAL_API_KEY = "not-needed"
"""Key sent when a base URL is set but no key is: local servers accept any key, the SDK insists on one."""


_CONTEXT_LENGTH = re.compile(
    r"context length|context window|maximum context|too many tokens|prompt is too long"
    r"|context_length_exceeded",
    re.IGNORECASE,
)
"""How OpenAI, vLLM, llama.cpp server and LM Studio word a prompt longer than the model's window."""


def _wire(message: ChatMessage) -> dict[str, Any]:
    """A message in the chat-completions request layout.

    An assistant message that only calls tools is sent with ``content: null``,
    which strict servers require next to ``tool_calls``.
    """
    content: str | None = message.content
    if message.tool_calls and not content:
        content = None
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.tool_calls:
        out["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


def _never_connected(error: openai.APIConnectionError) -> bool:
    """Whether the request failed to open a connection at all (refused, or no such host).

    Read from the exception chain's operating-system error (the SDK wraps its
    HTTP library's error, which wraps the socket's), so it does not depend on
    which HTTP library the SDK ships with. A connection that broke after it
    was opened (a reset) is not this.
    """
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError | socket.gaierror):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _retry_after_s(error: openai.APIStatusError) -> float | None:
    """The wait an error response asks for (``retry-after-ms`` or ``retry-after`` in seconds)."""
    headers = error.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers[name]) * scale)
        except (KeyError, ValueError):
            continue
    return None


def _tool_calls(message: Any) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for number, raw in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(raw, "function", None)
        name = getattr(function, "name", None)
        if not isinstance(name, str):
            continue
        arguments = getattr(function, "arguments", None)
        calls.append(
            ToolCall(
                # the id must be echoed by the tool message; some servers omit it
                id=str(getattr(raw, "id", "") or f"call_{number}"),
                name=name,
                arguments=arguments if isinstance(arguments, str) else "",
            )
        )
    return calls


class OpenAIChatModel:
    """A model served by an OpenAI-compatible chat-completions endpoint (spec ``openai:NAME``).

    Timeouts are the openai SDK's; retries are the model layer's one policy
    (:class:`~cypherturn.models.RetryPolicy`; the SDK's own are switched off):
    connection errors, timeouts, HTTP 408/409/429 and 5xx are retried with
    backoff, honouring ``Retry-After``, and raise :class:`ModelTransientError`
    when the policy gives up. A rejected key or an unknown model raise
    :class:`ModelUnavailableError` at once; other refusals and answers without a
    completion raise :class:`ModelResponseError` at once. A streamed call that
    fails after it has passed tokens on is not retried (the tokens cannot be
    taken back).

    Args:
        model: the model name the endpoint serves (the part after ``openai:``).
        base_url: endpoint URL such as ``http://127.0.0.1:8000/v1``; defaults to
            ``$CYPHERTURN_OPENAI_BASE_URL``, then ``$OPENAI_BASE_URL``, then the SDK's
            default (api.openai.com).
        api_key: defaults to ``$OPENAI_API_KEY``; when unset and a base URL is
            given, a placeholder is sent (local servers ignore it).
        timeout_s: timeout of each HTTP request, seconds (each retry gets its own).
        retry: the retry policy (default :class:`RetryPolicy` ()).

    Raises:
        ConfigError: the model name is empty.
        ModelUnavailableError: no API key and no base URL (the hosted default needs a key).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not model:
            raise ConfigError("an OpenAI-compatible model needs a name: openai:NAME")
        self._model = model
        self._base_url = base_url or next(
            (os.environ[v] for v in BASE_URL_ENV_VARS if os.environ.get(v)), None
        )
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self._base_url is None:
                raise ModelUnavailableError(
                    f"openai:{model} needs OPENAI_API_KEY, or a base URL "
                    f"(--base-url or ${BASE_URL_ENV_VARS[0]}) for a local server"
                )
            key = LOCAL_API_KEY
        self._retry = retry or RetryPolicy()
        self._timeout_s = timeout_s
        self._client = openai.OpenAI(
            api_key=key, base_url=self._base_url, timeout=timeout_s, max_retries=0
        )
        # whether any request has reached the endpoint (see _attempt: first contact fails fast)
        self._reached = False

    @property
    def spec(self) -> str:
        """The spec string that rebuilds this model (the endpoint URL is not part of it)."""
        return f"openai:{self._model}"

    @property
    def base_url(self) -> str:
        """The endpoint URL the SDK talks to."""
        return str(self._client.base_url)

    @property
    def retry(self) -> RetryPolicy:
        """The retry policy of every call."""
        return self._retry

    @property
    def supports_grammar(self) -> bool:
        """False: the chat-completions API has no portable grammar field."""
        return False

    @property
    def supports_decoding_guards(self) -> bool:
        """False: the chat-completions API call takes no decoding guards here."""
        return False

    def chat(
        self,
        messages: list[ChatMessage],
        *,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int = 512,
        seed: int | None = None,
        tools: Sequence[ToolSpec] | None = None,
        grammar: str | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> ChatResponse:
        """Complete a chat through ``POST {base_url}/chat/completions``.

        ``max_tokens`` is sent as ``max_tokens``, the field vLLM, Ollama,
        llama.cpp server and LM Studio read. Token counts come from the
        response's ``usage``; endpoints that omit it give zeros.

        Args:
            messages: the context, oldest first.
            temperature: sampling temperature (RAS §4.7 uses 0.9).
            max_tokens: most tokens to generate.
            seed: sent as ``seed`` when given (endpoints may ignore it).
            tools: offered as ``tools`` with ``tool_choice="auto"`` (native tool
                calling); the model may still answer in text.
            grammar: not supported (:attr:`supports_grammar` is false).
            on_token: when given, the request streams (``stream: true`` with
                ``stream_options.include_usage``) and each content delta is passed
                on as it arrives; the chunks are assembled by the SDK's
                ``ChatCompletionStreamState`` into the same response.

        Returns:
            The completion; ``latency_s`` is the wall time including retries and
            their waits, ``retries`` how many retries it took; ``tool_calls`` holds
            the calls the model made (arguments as sent, unvalidated).

        Raises:
            ConfigError: a grammar was given.
            ModelTransientError: the endpoint stayed unreachable, timed out,
                rate-limited or failed with 5xx through every retry.
            ModelUnavailableError: the endpoint rejects the key or does not serve
                the model.
            ModelResponseError: the endpoint refused the request (other 4xx) or
                answered without a completion text.
            TimeBudgetSpent: the deadline of the current
                :func:`~cypherturn.models.call_limits` passed first (each request's
                timeout is clamped to it; a retry that would end past it is not made).
            CallAbandoned: a stop of the current limits was set (checked before each
                request, between streamed chunks and during retry waits).
        """
        if grammar is not None:
            raise ConfigError(
                f"{self.spec}: an OpenAI-compatible endpoint cannot decode under a GBNF grammar"
            )
        extra: dict[str, Any] = {} if seed is None else {"seed": seed}
        if tools:
            extra["tools"] = [t.openai() for t in tools]
            extra["tool_choice"] = "auto"
        body = {
            "model": self._model,
            "messages": [_wire(m) for m in messages],
            "temperature": temperature,
            "max_tokens": max_tokens,
            **extra,
        }
        current_limits().check(self.spec)
        started = time.perf_counter()
        try:
            completion, retries = call_with_retries(
                self._retry, lambda: self._attempt(body, on_token), label=self.spec
            )
        except ModelTransientError as e:
            raise ModelTransientError(
                f"{e} (gave up after {self._retry.retries} retries)",
                retry_after_s=e.retry_after_s,
            ) from e
        latency = time.perf_counter() - started
        return self._response(completion, latency).model_copy(update={"retries": retries})

    def _no_answer(
        self, error: openai.APIConnectionError, remaining: float | None, passed_on: bool
    ) -> CypherTurnError:
        """Our error for a request that got no answer (``APITimeoutError`` is a subclass).

        Args:
            error: the SDK's error.
            remaining: the answer's time budget left when the request was sent, seconds.
            passed_on: whether streamed text already reached the caller.
        """
        timed_out = isinstance(error, openai.APITimeoutError)
        if timed_out and remaining is not None and remaining < self._timeout_s:
            # the timeout was the budget's: what ran out is the answer's time
            current_limits().check(self.spec)
            return TimeBudgetSpent(
                f"{self.spec}: the time budget of the answer was spent waiting for {self.base_url}"
            )
        message = (
            f"{self.spec}: no answer from {self.base_url} within the timeout"
            if timed_out
            else f"{self.spec}: cannot connect to {self.base_url} "
            f"({error.__cause__ or error}); is the server running?"
        )
        if passed_on:
            return ModelUnavailableError(f"{message}, in the middle of a stream")
        if not timed_out and not self._reached and _never_connected(error):
            # Nothing listens there (a wrong URL, a server not started): retrying
            # only makes the user wait 15 s for the same message. Once the
            # endpoint has answered, a refused connection is a restart: retried.
            return ModelUnavailableError(message)
        return ModelTransientError(message)

    def _attempt(self, body: dict[str, Any], on_token: Callable[[str], None] | None) -> Any:
        """One request; the SDK's errors mapped to ours (transient ones as :class:`ModelTransientError`)."""
        passed_on = False

        def forward(piece: str) -> None:
            nonlocal passed_on
            passed_on = True
            assert on_token is not None
            on_token(piece)

        limits = current_limits()
        limits.check(self.spec)
        remaining = limits.remaining_s()
        # a request may not outlive the answer's budget: its timeout is clamped to it
        client = (
            self._client
            if remaining is None
            else self._client.with_options(timeout=max(min(self._timeout_s, remaining), 0.01))
        )
        try:
            # The SDK's documented generic `post` (same timeouts and error types as
            # `chat.completions.create`) skips create's recursive TypedDict
            # transform of the messages, which our plain dicts do not need: 28% of the
            # benchmark runner's CPU per call (benchmarks/bench_harness_overhead.py).
            completion = (
                client.post("/chat/completions", body=body, cast_to=ChatCompletion)
                if on_token is None
                else self._streamed(body, forward, client)
            )
        except (openai.APITimeoutError, openai.APIConnectionError) as e:
            raise self._no_answer(e, remaining, passed_on) from e
        except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
            raise ModelUnavailableError(
                f"{self.spec}: {self.base_url} rejected the API key (HTTP {e.status_code}): "
                f"{e.message}; set OPENAI_API_KEY"
            ) from e
        except openai.NotFoundError as e:
            raise ModelUnavailableError(
                f"{self.spec}: {self.base_url} does not serve model {self._model!r} "
                f"(HTTP 404): {e.message}"
            ) from e
        except openai.APIStatusError as e:
            self._reached = True
            if e.status_code >= 500 or e.status_code in _TRANSIENT_STATUS:
                raise ModelTransientError(
                    f"{self.spec}: {self.base_url} failed with HTTP {e.status_code}: {e.message}",
                    retry_after_s=_retry_after_s(e),
                ) from e
            if e.status_code == 400 and _CONTEXT_LENGTH.search(str(e.message)):
                raise ContextLengthError(
                    f"{self.spec}: the prompt does not fit the model's context window "
                    f"({self.base_url}, HTTP 400): {e.message}"
                ) from e
            raise ModelResponseError(
                f"{self.spec}: {self.base_url} refused the request (HTTP {e.status_code}): "
                f"{e.message}"
            ) from e
        except json.JSONDecodeError as e:
            raise ModelResponseError(
                f"{self.spec}: the answer from {self.base_url} is not JSON: {e}"
            ) from e
        except openai.APIError as e:
            raise ModelResponseError(
                f"{self.spec}: malformed answer from {self.base_url}: {e.message}"
            ) from e
        self._reached = True
        return completion

    def _streamed(
        self,
        body: dict[str, Any],
        on_token: Callable[[str], None],
        client: openai.OpenAI | None = None,
    ) -> Any:
        """Post a streaming request; pass content deltas on; the assembled completion (``None``: no chunk).

        The SDK's errors (also those raised while reading the stream) reach the
        caller's error mapping unchanged. The current call limits are checked
        between chunks, so a stop or the deadline ends a long stream.

        Raises:
            ModelResponseError: a chunk does not have the chat-completion-chunk shape.
            CallAbandoned, TimeBudgetSpent: a limit ended the stream.
        """
        limits = current_limits()
        stream = (client or self._client).post(
            "/chat/completions",
            body={**body, "stream": True, "stream_options": {"include_usage": True}},
            cast_to=ChatCompletion,
            stream=True,
            stream_cls=openai.Stream[ChatCompletionChunk],
        )
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        received = False
        with stream:
            for chunk in stream:
                limits.check(self.spec)
                try:
                    state.handle_chunk(chunk)
                    pieces = [
                        c.delta.content
                        for c in chunk.choices
                        if c.index == 0 and c.delta is not None and c.delta.content
                    ]
                except (AttributeError, IndexError, KeyError, TypeError) as e:
                    raise ModelResponseError(
                        f"{self.spec}: malformed stream chunk from {self.base_url}: {chunk!r}"
                    ) from e
                received = True
                for piece in pieces:
                    on_token(piece)
        return state.current_completion_snapshot if received else None

    def _response(self, completion: Any, latency: float) -> ChatResponse:
        """Validate the parts of a completion we use; anything missing is a ModelResponseError."""
        choices = getattr(completion, "choices", None)
        if not choices:
            raise ModelResponseError(
                f"{self.spec}: the answer from {self.base_url} has no choices: {completion!r}"
            )
        choice = choices[0]
        message = getattr(choice, "message", None)
        text = getattr(message, "content", None)
        calls = _tool_calls(message)
        if text is None and calls:
            text = ""
        if not isinstance(text, str):
            raise ModelResponseError(
                f"{self.spec}: the answer from {self.base_url} has no message text "
                f"(finish_reason={getattr(choice, 'finish_reason', None)!r})"
            )
        usage = getattr(completion, "usage", None)
        if usage is None:
            logger.debug("%s: no usage figures in the answer; token counts set to 0", self.spec)
        return ChatResponse(
            text=text,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            latency_s=latency,
            model=self.spec,
            finish_reason=getattr(choice, "finish_reason", None),
            tool_calls=calls,
        )

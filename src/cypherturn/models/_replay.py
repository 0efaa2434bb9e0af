"""A chat model that replays recorded responses: for testing loop logic and re-running logged sessions."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cypherturn.errors import ConfigError, ModelResponseError
from cypherturn.models._base import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatResponse,
    ToolCall,
    ToolSpec,
)
from cypherturn.models._limits import current_limits

__all__ = ["CHARS_PER_TOKEN", "MESSAGE_OVERHEAD_TOKENS", "ReplayChatModel", "approximate_tokens"]

CHARS_PER_TOKEN = 4
"""Characters per token of the replay model's approximate count (the usual English BPE figure)."""

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens counted per chat message for the role and separators, as chat templates add them."""


def approximate_tokens(text: str) -> int:
    """Deterministic token estimate: ``ceil(len(text) / 4)`` (0 for empty text).

    Args:
        text: any text.

    Returns:
        The estimated number of tokens.
    """
    return math.ceil(len(text) / CHARS_PER_TOKEN)


Recorded = tuple[str, list[ToolCall]]


def _recorded(item: object) -> Recorded | None:
    """A recorded response from a string or a ``{"text", "tool_calls"}`` object (``None``: neither)."""
    if isinstance(item, str):
        return item, []
    if not isinstance(item, dict):
        return None
    text = item.get("text", "")
    raw_calls = item.get("tool_calls") or []
    if not isinstance(text, str) or not isinstance(raw_calls, list):
        return None
    calls: list[ToolCall] = []
    for number, raw in enumerate(raw_calls):
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            return None
        arguments = raw.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        calls.append(
            ToolCall(
                id=str(raw.get("id") or f"call_{number}"), name=raw["name"], arguments=arguments
            )
        )
    if "text" not in item and not calls:
        return None
    return text, calls


class ReplayChatModel:
    """Returns recorded completions in order and records every context it was called with.

    Token counts are approximations, not a tokenizer's: the prompt counts
    ``ceil(len(content) / 4) + 4`` per message, the completion
    ``ceil(len(text) / 4)`` (tool calls count their name and arguments as text). They grow with the context as real counts do, which
    is what the strategies' context-growth records need. ``temperature`` and
    ``seed`` are recorded but do not change what is replayed.

    Args:
        responses: the completions, returned one per call, in order: a text, or an
            object ``{"text": ..., "tool_calls": [{"name", "arguments", "id"?}]}``
            (a recorded native tool call; ``arguments`` a JSON string or object).
        spec: the spec string recorded for this model.

    Attributes:
        calls: one entry per call: a copy of the messages the model was given.
        settings: one entry per call: ``{"temperature", "max_tokens", "seed", "tools"}``.

    Raises:
        ConfigError: a response is neither a text nor a valid response object.
    """

    def __init__(
        self, responses: Sequence[str | dict[str, Any]], *, spec: str = "replay:<memory>"
    ) -> None:
        self._responses: list[Recorded] = []
        for number, item in enumerate(responses, start=1):
            recorded = _recorded(item)
            if recorded is None:
                raise ConfigError(
                    f"{spec}, response {number}: expected a string or an object with a "
                    f'"text" string and/or a "tool_calls" list, got {item!r}'
                )
            self._responses.append(recorded)
        self._spec = spec
        self._next = 0
        self._lock = threading.Lock()
        self.calls: list[list[ChatMessage]] = []
        self.settings: list[dict[str, Any]] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayChatModel:
        """Read recorded responses from a file (spec ``replay:FILE``).

        A ``.jsonl`` file holds one response per line; any other file holds one
        JSON list. Each response is a string or an object with a ``"text"`` string
        and/or a ``"tool_calls"`` list (so logged :class:`ChatResponse` records
        replay as they are).

        Args:
            path: the file.

        Returns:
            A model that replays the file's responses.

        Raises:
            ConfigError: the file is missing, is not valid JSON, or holds an
                item that is neither a string nor such an object.
        """
        file = Path(path).expanduser()
        try:
            raw = file.read_text(encoding="utf-8")
        except OSError as e:
            raise ConfigError(f"cannot read replay file {file}: {e}") from e
        try:
            if file.suffix == ".jsonl":
                items = [json.loads(line) for line in raw.splitlines() if line.strip()]
            else:
                items = json.loads(raw)
        except json.JSONDecodeError as e:
            raise ConfigError(f"replay file {file} is not valid JSON: {e}") from e
        if not isinstance(items, list):
            raise ConfigError(f"replay file {file} must hold a JSON list of responses")
        return cls(items, spec=f"replay:{file}")

    @property
    def spec(self) -> str:
        """The spec string that rebuilds this model."""
        return self._spec

    @property
    def supports_grammar(self) -> bool:
        """False: recorded responses cannot be constrained by a grammar."""
        return False

    @property
    def supports_decoding_guards(self) -> bool:
        """False: recorded responses are returned as they were recorded."""
        return False

    @property
    def remaining(self) -> int:
        """Number of recorded responses not yet returned."""
        return len(self._responses) - self._next

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
        """Return the next recorded response (its tool calls included, offered tools or not).

        Args:
            messages: the context; a copy is appended to :attr:`calls`.
            temperature: recorded in :attr:`settings`.
            max_tokens: recorded in :attr:`settings` (responses are not cut).
            seed: recorded in :attr:`settings`.
            tools: the offered tools' names are recorded in :attr:`settings`.
            grammar: not supported (:attr:`supports_grammar` is false).
            on_token: called once with the whole recorded text (when it is not empty).

        Returns:
            The next response with approximate token counts.

        Raises:
            ConfigError: a grammar was given.
            ModelResponseError: every recorded response has been returned.
            CallAbandoned, TimeBudgetSpent: a limit of the current
                :func:`~cypherturn.models.call_limits` has ended the work.
        """
        if grammar is not None:
            raise ConfigError(f"{self._spec}: a replay model cannot decode under a grammar")
        current_limits().check(self._spec)
        started = time.perf_counter()
        with self._lock:
            self.calls.append([m.model_copy() for m in messages])
            self.settings.append(
                {
                    "temperature": temperature,
                    "max_tokens": max_tokens,
                    "seed": seed,
                    "tools": [t.name for t in tools or ()],
                }
            )
            if self._next >= len(self._responses):
                raise ModelResponseError(
                    f"{self._spec}: replay exhausted, all {len(self._responses)} recorded "
                    "responses were used"
                )
            text, tool_calls = self._responses[self._next]
            self._next += 1
        if on_token is not None and text:
            on_token(text)
        prompt_tokens = sum(
            approximate_tokens(m.content + "".join(c.name + c.arguments for c in m.tool_calls))
            + MESSAGE_OVERHEAD_TOKENS
            for m in messages
        )
        return ChatResponse(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=approximate_tokens(
                text + "".join(c.name + c.arguments for c in tool_calls)
            ),
            latency_s=time.perf_counter() - started,
            model=self._spec,
            finish_reason="tool_calls" if tool_calls else "stop",
            tool_calls=tool_calls,
        )

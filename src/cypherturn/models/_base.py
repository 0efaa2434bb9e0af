"""The chat-model interface: messages (and optional tools) in, text or tool calls plus token counts out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_TEMPERATURE",
    "ChatMessage",
    "ChatModel",
    "ChatResponse",
    "GuardedChatModel",
    "ToolCall",
    "ToolSpec",
]

DEFAULT_TEMPERATURE = 0.9
"""Default sampling temperature (RAS paper §4.7)."""


class ToolSpec(BaseModel):
    """A function the model may call (OpenAI ``tools`` entry of type ``function``).

    Attributes:
        name: the function name.
        description: what it does, for the model.
        parameters: JSON Schema of its arguments object.
    """

    model_config = ConfigDict(frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def openai(self) -> dict[str, Any]:
        """The spec in the OpenAI chat-completions ``tools`` layout."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ToolCall(BaseModel):
    """One function call a model made.

    Attributes:
        id: the call id the endpoint assigned (echoed by the ``tool`` message that answers it).
        name: the function name.
        arguments: the arguments as the model wrote them (JSON text, possibly malformed).
    """

    model_config = ConfigDict(frozen=True)

    id: str = ""
    name: str
    arguments: str = ""


class ChatMessage(BaseModel):
    """One message of a chat context.

    Attributes:
        role: who speaks.
        content: the text.
        tool_calls: an assistant message's function calls (native tool calling).
        tool_call_id: for ``role="tool"``, the id of the call this message answers.
    """

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None


class ChatResponse(BaseModel):
    """One completion.

    Attributes:
        text: the raw completion text (reasoning blocks included; callers strip them).
        prompt_tokens: tokens in the prompt as counted by the model's tokenizer or endpoint.
        completion_tokens: tokens generated.
        latency_s: wall time of the call, seconds.
        model: the model's spec string.
        finish_reason: ``stop``, ``length``, ``tool_calls``, ... when known.
        tool_calls: the function calls made, when tools were offered.
        cached_prompt_tokens: leading prompt tokens whose evaluated state was reused
            instead of evaluated by this call (in-process GGUF models; 0 elsewhere).
        prompt_cache: where that state came from: ``memory`` (an earlier call in
            this process) or ``disk`` (the on-disk prefix cache); ``None`` when
            nothing was reused.
        retries: transient endpoint failures retried before this completion
            (:class:`cypherturn.models.RetryPolicy`; 0 for in-process models).
        logprob: log-probability of the generated tokens under the model's own
            distribution (temperature 1, before grammar and truncation), nats;
            in-process GGUF models only, ``None`` elsewhere.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    finish_reason: str | None = Field(default=None, description="'stop', 'length', ... when known.")
    tool_calls: list[ToolCall] = Field(default_factory=list)
    cached_prompt_tokens: int = 0
    prompt_cache: Literal["memory", "disk"] | None = None
    retries: int = 0
    logprob: float | None = Field(default=None, le=0.0)


@runtime_checkable
class ChatModel(Protocol):
    """A chat model selected by spec: ``gguf:PATH``, ``openai:NAME``, ``replay:FILE`` or ``default``."""

    @property
    def spec(self) -> str:
        """The spec string that rebuilds this model (recorded in run logs)."""
        ...

    @property
    def supports_grammar(self) -> bool:
        """Whether :meth:`chat` accepts a ``grammar`` (GGUF models: llama.cpp GBNF)."""
        ...

    @property
    def supports_decoding_guards(self) -> bool:
        """Whether the model is a :class:`GuardedChatModel`: :meth:`chat` takes ``stop`` and ``repetition_guard``."""
        ...

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
        """Complete a chat; with ``tools``, the model may answer with :class:`ToolCall` s.

        Args:
            messages: the context, oldest first.
            temperature: sampling temperature.
            max_tokens: most tokens to generate.
            seed: sampling seed (``None``: unseeded).
            tools: functions the model may call.
            grammar: GBNF text that constrains decoding; only for models whose
                :attr:`supports_grammar` is true.
            on_token: called with each piece of generated text as it arrives (in
                order; the pieces concatenate to the response's ``text``). Without
                it the call does not stream and its response is the same.

        Raises:
            ConfigError: a grammar was given to a model that does not support one,
                or does not compile, or was given together with ``tools``.
            ModelUnavailableError: the model cannot be loaded or reached.
            ModelResponseError: the endpoint answered without a usable completion.
        """
        ...


class GuardedChatModel(ChatModel, Protocol):
    """A chat model whose :attr:`~ChatModel.supports_decoding_guards` is true (GGUF models).

    Callers ask the property, never the backend's type, before passing the guards.
    """

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
        stop: Sequence[str] = (),
        repetition_guard: bool = False,
    ) -> ChatResponse:
        """:meth:`ChatModel.chat` with decoding guards.

        Args:
            messages: the context, oldest first.
            temperature: sampling temperature.
            max_tokens: most tokens to generate.
            seed: sampling seed (``None``: unseeded).
            tools: functions the model may call.
            grammar: GBNF text that constrains decoding.
            on_token: called with each piece of generated text as it arrives.
            stop: generation ends before the first of these sequences, which is
                not part of the text (``finish_reason="stop"``).
            repetition_guard: generation ends once the completion ends in a
                runaway repetition (``finish_reason="repetition"``).

        Raises:
            ConfigError: as :meth:`ChatModel.chat`.
            ModelUnavailableError: the model cannot be loaded.
            ModelResponseError: no usable completion.
        """
        ...

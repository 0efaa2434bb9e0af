"""The chat-model interface: messages in, text plus token counts out."""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

__all__ = ["DEFAULT_TEMPERATURE", "ChatMessage", "ChatModel", "ChatResponse"]

DEFAULT_TEMPERATURE = 0.9
"""Default sampling temperature (RAS paper §4.7)."""


class ChatMessage(BaseModel):
    """One message of a chat context."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str


class ChatResponse(BaseModel):
    """One completion.

    Attributes:
        text: the raw completion text (reasoning blocks included; callers strip them).
        prompt_tokens: tokens in the prompt as counted by the model's tokenizer or endpoint.
        completion_tokens: tokens generated.
        latency_s: wall time of the call, seconds.
        model: the model's spec string.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    model: str = ""
    finish_reason: str | None = Field(default=None, description="'stop', 'length', ... when known.")


@runtime_checkable
class ChatModel(Protocol):
    """A chat model selected by spec: ``gguf:PATH``, ``openai:NAME``, ``replay:FILE`` or ``default``."""

    @property
    def spec(self) -> str:
        """The spec string that rebuilds this model (recorded in run logs)."""
        ...

    def chat(
        self,
        messages: list[ChatMessage],
        *,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int = 512,
        seed: int | None = None,
    ) -> ChatResponse:
        """Complete a chat.

        Raises:
            ModelUnavailableError: the model cannot be loaded or reached.
            ModelResponseError: the endpoint answered without a usable completion.
        """
        ...

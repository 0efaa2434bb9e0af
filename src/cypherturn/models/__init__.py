"""Chat models behind one interface: OpenAI-compatible endpoints, in-process GGUF, replay."""

from cypherturn.models._base import DEFAULT_TEMPERATURE, ChatMessage, ChatModel, ChatResponse

__all__ = ["DEFAULT_TEMPERATURE", "ChatMessage", "ChatModel", "ChatResponse"]

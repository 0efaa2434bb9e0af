"""Chat models behind one interface: OpenAI-compatible endpoints, in-process GGUF, replay."""

from cypherturn.models._base import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatModel,
    ChatResponse,
    ToolCall,
    ToolSpec,
)
from cypherturn.models._gguf import GGUFChatModel, default_model_path
from cypherturn.models._load import MODEL_SCHEMES, load_model
from cypherturn.models._openai import OpenAIChatModel
from cypherturn.models._replay import ReplayChatModel, approximate_tokens

__all__ = [
    "DEFAULT_TEMPERATURE",
    "MODEL_SCHEMES",
    "ChatMessage",
    "ChatModel",
    "ChatResponse",
    "GGUFChatModel",
    "OpenAIChatModel",
    "ReplayChatModel",
    "ToolCall",
    "ToolSpec",
    "approximate_tokens",
    "default_model_path",
    "load_model",
]

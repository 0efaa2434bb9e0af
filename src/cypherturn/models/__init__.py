"""Chat models behind one interface: OpenAI-compatible endpoints, in-process GGUF, replay.

Transient endpoint failures are retried in this layer, under one
:class:`RetryPolicy` (:mod:`cypherturn.models._retry`), for every caller.
Calls obey the limits of their context (:func:`call_limits`): a stop set with
:func:`stop_calls` abandons them, in flight too, and a deadline cuts them
(:mod:`cypherturn.models._limits`).

Local GGUF models are also installable as model packs (``qwen2.5-coder-1.5b``,
``qwen2.5-coder-0.5b``, ``smollm2-135m``): see :mod:`cypherturn.models._packs`.
"""

from cypherturn.models._base import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatModel,
    ChatResponse,
    ToolCall,
    ToolSpec,
)
from cypherturn.models._gguf import GGUFChatModel, default_model_path, in_own_context
from cypherturn.models._limits import (
    CallLimits,
    call_limits,
    current_limits,
    limited_sleep,
    stop_calls,
)
from cypherturn.models._load import (
    MODEL_SCHEMES,
    default_model_name,
    load_model,
    resolve_model_spec,
)
from cypherturn.models._openai import OpenAIChatModel
from cypherturn.models._packs import (
    MODEL_PACKS,
    CacheState,
    ModelPack,
    PartPackage,
    cache_state,
    ensure_model_file,
    installed,
    model_cache_dir,
    strongest_installed,
)
from cypherturn.models._replay import ReplayChatModel, approximate_tokens
from cypherturn.models._retry import NO_RETRY, RetryPolicy, call_with_retries

__all__ = [
    "DEFAULT_TEMPERATURE",
    "MODEL_PACKS",
    "MODEL_SCHEMES",
    "NO_RETRY",
    "CacheState",
    "CallLimits",
    "ChatMessage",
    "ChatModel",
    "ChatResponse",
    "GGUFChatModel",
    "ModelPack",
    "OpenAIChatModel",
    "PartPackage",
    "ReplayChatModel",
    "RetryPolicy",
    "ToolCall",
    "ToolSpec",
    "approximate_tokens",
    "cache_state",
    "call_limits",
    "call_with_retries",
    "current_limits",
    "default_model_name",
    "default_model_path",
    "ensure_model_file",
    "in_own_context",
    "installed",
    "limited_sleep",
    "load_model",
    "model_cache_dir",
    "resolve_model_spec",
    "stop_calls",
    "strongest_installed",
]

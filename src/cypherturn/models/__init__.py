"""Chat models behind one interface: OpenAI-compatible endpoints, in-process GGUF, replay.

Transient endpoint failures are retried in this layer, under one
:class:`RetryPolicy` (:mod:`cypherturn.models._retry`), for every caller.
Calls obey the limits of their context (:func:`call_limits`): a stop set with
:func:`stop_calls` abandons them, in flight too, and a deadline cuts them
(:mod:`cypherturn.models._limits`).

Local GGUF models are also installable as model packs (``qwen2.5-coder-1.5b``,
``qwen2.5-coder-0.5b``, ``smollm2-135m``): see :mod:`cypherturn.models._packs`.
`RejectionLlama` (grammar sampling that checks the drawn token first) subclasses
``llama_cpp.Llama``, so it is imported on first use: importing this package does
not load llama.cpp.
"""

from typing import TYPE_CHECKING, Any

from cypherturn.models._base import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatModel,
    ChatResponse,
    GuardedChatModel,
    ToolCall,
    ToolSpec,
)
from cypherturn.models._gguf import GGUFChatModel, default_model_path, in_own_context
from cypherturn.models._gguf_load import THREADS_ENV, model_threads
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
from cypherturn.models._packs import (
    MODEL_PACKS,
    CacheState,
    ModelPack,
    PartPackage,
    cache_state,
    ensure_model_file,
    get_pack,
    installed,
    model_cache_dir,
    strongest_installed,
)
from cypherturn.models._prefix_cache import CACHE_DIR_ENV, cache_root
from cypherturn.models._replay import ReplayChatModel, approximate_tokens
from cypherturn.models._retry import NO_RETRY, RetryPolicy, call_with_retries

if TYPE_CHECKING:
    from cypherturn.models._grammar_sampling import RejectionLlama
    from cypherturn.models._openai import OpenAIChatModel

__all__ = [
    "CACHE_DIR_ENV",
    "DEFAULT_TEMPERATURE",
    "MODEL_PACKS",
    "MODEL_SCHEMES",
    "NO_RETRY",
    "THREADS_ENV",
    "CacheState",
    "CallLimits",
    "ChatMessage",
    "ChatModel",
    "ChatResponse",
    "GGUFChatModel",
    "GuardedChatModel",
    "ModelPack",
    "OpenAIChatModel",
    "PartPackage",
    "RejectionLlama",
    "ReplayChatModel",
    "RetryPolicy",
    "ToolCall",
    "ToolSpec",
    "approximate_tokens",
    "cache_root",
    "cache_state",
    "call_limits",
    "call_with_retries",
    "current_limits",
    "default_model_name",
    "default_model_path",
    "ensure_model_file",
    "get_pack",
    "in_own_context",
    "installed",
    "limited_sleep",
    "load_model",
    "model_cache_dir",
    "model_threads",
    "resolve_model_spec",
    "stop_calls",
    "strongest_installed",
]


def __getattr__(name: str) -> Any:
    """`RejectionLlama` (it imports llama.cpp, about 0.2 s) and `OpenAIChatModel` (the
    OpenAI client, about 0.8 s) on first use: every command paid them at start-up."""
    if name == "RejectionLlama":
        from cypherturn.models._grammar_sampling import RejectionLlama

        return RejectionLlama
    if name == "OpenAIChatModel":
        from cypherturn.models._openai import OpenAIChatModel

        return OpenAIChatModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

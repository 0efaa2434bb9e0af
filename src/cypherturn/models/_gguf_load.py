"""Loading a GGUF file into llama.cpp once per process, and what derives from the loaded model.

A model is loaded on first use and kept for the life of the process, shared by
every caller with the same file, context size, buffer setting and context name
(loading is the slow part). The chat template and the compiled grammars are
kept beside it.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cypherturn.errors import ConfigError, ModelUnavailableError
from cypherturn.models._abort import AbortFlag, install_log_filter
from cypherturn.models._prefix_cache import Tokens

__all__ = ["THREADS_ENV", "Loaded", "compile_grammar", "load_gguf", "model_threads", "render"]

logger = logging.getLogger(__name__)


_GRAMMARS_KEPT = 32
"""Compiled grammars remembered per model (one per schema in practice)."""


@dataclass(slots=True)
class Loaded:
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


_CACHE: dict[tuple[str, int, bool, str], Loaded] = {}
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


THREADS_ENV = "CYPHERTURN_THREADS"
"""Environment variable: CPU threads per in-process model (default: every core)."""


def model_threads() -> int:
    """CPU threads llama.cpp uses per loaded model, for generation and prompt evaluation.

    Every core by default. ``CYPHERTURN_THREADS=N`` sets it: two processes that
    each decode on every core of a small machine slow each other down several
    times over (llama.cpp's threads wait on each other at every layer), so
    processes that run side by side, such as parallel test workers, share the cores.

    Raises:
        ConfigError: the variable is set to something other than a positive integer.
    """
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return os.cpu_count() or 1
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"{THREADS_ENV} must be a positive integer, not {raw!r}")
    return int(raw)


def load_gguf(path: Path, n_ctx: int, extra_buffer_types: bool, context: str = "") -> Loaded:
    """The model of ``path`` loaded into the llama.cpp context named ``context``, loaded once.

    Args:
        path: the ``.gguf`` file.
        n_ctx: context window in tokens; capped at the model's training context.
        extra_buffer_types: see :func:`_extra_buffer_types`.
        context: the context's name (``""``: the one every caller of the file shares).

    Raises:
        ModelUnavailableError: llama-cpp-python is missing, or cannot load the file.
    """
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
                threads = model_threads()
                llama = Llama(
                    model_path=str(path),
                    n_ctx=n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    verbose=False,
                )
                trained = _trained_context(llama.metadata)
                if trained is not None and trained < n_ctx:
                    llama.close()
                    llama = Llama(
                        model_path=str(path),
                        n_ctx=trained,
                        n_threads=threads,
                        n_threads_batch=threads,
                        verbose=False,
                    )
        except (ValueError, RuntimeError, OSError) as e:
            raise ModelUnavailableError(f"cannot load GGUF model {path}: {e}") from e
        loaded = Loaded(
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


def render(loaded: Loaded, payload: list[dict[str, str]]) -> Tokens | None:
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


def compile_grammar(loaded: Loaded, grammar: str) -> Any:
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

"""Prompt prefix reuse for GGUF models: the evaluated state of a context's prefix, kept on disk.

llama.cpp reuses the longest common prefix of the previous prompt within a
process. :func:`reuse_prefix` also loads, before a completion, the state of a
known prefix (every message before the last user message) from the disk store
(:mod:`cypherturn.models._prefix_cache`) when it covers more than memory does,
and stores a new prefix when neither covers the leading system messages.
"""

from __future__ import annotations

import ctypes
import logging
import time
from collections.abc import Callable
from typing import Any, Literal

from cypherturn.models._gguf_load import Loaded, render
from cypherturn.models._prefix_cache import PrefixStore, StoredPrefix, Tokens, common_prefix

__all__ = ["reuse_prefix"]

logger = logging.getLogger(__name__)

_MIN_PREFIX_TOKENS = 64
"""Shortest prompt prefix worth a disk entry (a state costs about 28 kB per token, Qwen2.5-1.5B)."""

_MIN_LOAD_GAIN = 16
"""A disk entry is loaded only when it covers this many more tokens than the state in memory."""


def reuse_prefix(
    loaded: Loaded,
    store_for: Callable[[], PrefixStore | None],
    payload: list[dict[str, str]],
    prompt: Tokens | None,
    spec: str,
) -> tuple[int, Literal["memory", "disk"] | None]:
    """Bring the prompt's prefix into the context before the completion (called under the lock).

    Loads the disk entry that covers more of the prompt than the state in
    memory does; when neither covers the leading system messages, evaluates
    the prefix (every message before the last user message) and stores it.

    Args:
        loaded: the model whose context receives the prefix.
        store_for: the disk prefix cache (``None``: memory only), asked only when
            the prompt fits the context.
        payload: the context as the chat template receives it.
        prompt: the tokens the template makes of ``payload`` (``None``: no template).
        spec: the model's spec, for the log.

    Returns:
        The prompt tokens the completion will not evaluate, and where their
        state came from.
    """
    llama = loaded.llama
    if prompt is None or len(prompt) >= llama.n_ctx():
        return 0, None
    reused = common_prefix(llama.input_ids[: llama.n_tokens], prompt)
    source: Literal["memory", "disk"] = "memory"
    store = store_for()
    if store is not None and len(payload) > 1 and payload[-1]["role"] == "user":
        before_last = render(loaded, payload[:-1])
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
            if reused < _system_tokens(loaded, payload, prompt):
                _store_prefix(store, llama, prompt[:boundary], spec)
    # a prompt the context already holds whole is re-evaluated from its last token
    reused = min(reused, len(prompt) - 1)
    return reused, source if reused > 0 else None


def _system_tokens(loaded: Loaded, payload: list[dict[str, str]], prompt: Tokens) -> int:
    """Tokens of the prompt that render its leading system messages (0 when there are none)."""
    count = _leading_system(payload)
    if count == 0:
        return 0
    system = render(loaded, payload[:count])
    return common_prefix(prompt, system) if system is not None else 0


def _store_prefix(store: PrefixStore, llama: Any, prefix: Tokens, spec: str) -> None:
    """Evaluate ``prefix`` and write its state to ``store`` (nothing when the state is not its own)."""
    started = time.perf_counter()
    if not _evaluate_prefix(llama, prefix):
        logger.debug("%s: prefix evaluation left another state; not cached", spec)
        return
    path = store.write(prefix, _capture_state(llama))
    logger.info(
        "%s: cached a prompt prefix of %d tokens at %s in %.2f s",
        spec,
        len(prefix),
        path,
        time.perf_counter() - started,
    )


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

"""Decoding guards of a GGUF completion: a runaway repetition stops the generation.

A small model under greedy decoding can repeat one line or one list of
columns until ``max_tokens``; :func:`repetition_tail` recognises such an ending
and :func:`stream_text` stops reading the stream there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "REPETITION_MAX_PERIOD",
    "REPETITION_MIN_CHARS",
    "REPETITION_MIN_REPEATS",
    "repetition_tail",
    "stream_text",
]

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


def stream_text(
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

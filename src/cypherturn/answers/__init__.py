"""Answers in words: the model's sentence from the rows, every number checked, a template otherwise.

:func:`answer_in_words` is what ``cypherturn ask`` and ``cypherturn chat`` print
beside the rows; see ``docs/design/chat.md``.
"""

from cypherturn.answers._words import (
    ANSWER_MAX_TOKENS,
    ANSWER_ROWS,
    NO_DATA,
    Answer,
    answer_in_words,
    answer_prompt,
    numbers_in,
    template_answer,
    unsupported_names,
    unsupported_numbers,
)

__all__ = [
    "ANSWER_MAX_TOKENS",
    "ANSWER_ROWS",
    "NO_DATA",
    "Answer",
    "answer_in_words",
    "answer_prompt",
    "numbers_in",
    "template_answer",
    "unsupported_names",
    "unsupported_numbers",
]

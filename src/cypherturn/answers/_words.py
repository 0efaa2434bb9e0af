"""The answer in words: a short sentence written from the rows, every number checked against them.

The model reads the question, the query that ran and its rows, and writes one
or two sentences; its tokens stream through a callback. A deterministic check
then extracts every number of the text (digits, ``61,521``, ``3.14``, and the
number words two to ninety-nine) and requires each to come from the result: a
numeric cell (equal, or equal after rounding to the decimals the text shows), a
number inside a string cell (a date, an address), the row count, or the
question itself (the user's own words are no claim). Names are checked the same
way: a capitalised word inside a sentence ("... is Hydrochlorothiazide") or a
word written in capitals ("HP") must occur in a cell, a column name, the
question or the query (case ignored). One unsupported number or name, an empty
reply or a model failure replaces the text with a templated answer built from
the rows, and the record says so. No rows: the answer says plainly
that no data matched, without a model call.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from cypherturn.errors import ModelError
from cypherturn.graph import QueryResult
from cypherturn.models import ChatMessage, ChatModel

ANSWER_ROWS = 20
"""Rows shown to the model (the check still accepts a number from any row)."""

ANSWER_MAX_TOKENS = 120
"""Most tokens the model may write for an answer."""

NO_DATA = "No matching data: the query returned no rows."
"""The answer to an empty result."""

_TEMPLATE_ROWS = 5

_SYSTEM = (
    "You answer a question about a graph database from the rows its query returned. "
    "Write one or two short sentences in plain English. Use only the rows: every number "
    "you write must appear in the rows, or be the number of rows. Write numbers as digits. "
    "With more than five rows, name the first few and say how many rows there are. "
    "Do not mention Cypher, queries, columns or rows."
)

_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d)|\d+(?:\.\d+)?")

_UNITS = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_DIGIT_WORDS = {"one": 1, **{k: v for k, v in _UNITS.items() if v < 10 and v != 0}}
# "one" alone is left out: "one of the crimes", "no one" are no counts
_WORD = re.compile(
    r"\b(?:("
    + "|".join(_TENS)
    + r")(?:-("
    + "|".join(_DIGIT_WORDS)
    + r"))?|("
    + "|".join(_UNITS)
    + r"))\b",
    re.IGNORECASE,
)


_NAME = re.compile(r"(?<![\w'-])[A-Z][\w'-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*[-*]?\s*|[(\"“]\s*)$")


class Answer(BaseModel):
    """The answer in words to one executed query.

    Attributes:
        text: the answer shown: the model's text when it passed the check, else the template.
        source: ``model`` (the model's text, every number supported) or ``template``.
        numbers_checked: every number found in the model's text, as written
            (digits, or a number word), in order.
        unsupported: those that come from neither the rows, the row count nor the question.
        unsupported_names: names in the model's text found in no cell, column name,
            question or query (:func:`unsupported_names`).
        model_text: what the model wrote (``None`` when no model was called).
        reason: why the template is shown (``None`` when the model's text is).
        prompt_tokens: prompt tokens of the model call (0 without one).
        tokens: tokens the model generated (0 without a call).
        seconds: wall time of the model call and the check, seconds.
    """

    text: str
    source: Literal["model", "template"]
    numbers_checked: list[str] = Field(default_factory=list)
    unsupported: list[str] = Field(default_factory=list)
    unsupported_names: list[str] = Field(default_factory=list)
    model_text: str | None = None
    reason: str | None = None
    prompt_tokens: int = 0
    tokens: int = 0
    seconds: float = 0.0


def _number_values(text: str) -> list[tuple[str, float, int]]:
    """Each number of ``text``: ``(as written, value, decimals shown)``."""
    found: list[tuple[int, str, float, int]] = []
    for match in _NUMBER.finditer(text):
        written = match.group(0)
        plain = written.replace(",", "")
        decimals = len(plain.split(".", 1)[1]) if "." in plain else 0
        found.append((match.start(), written, float(plain), decimals))
    for match in _WORD.finditer(text):
        tens, unit, alone = match.group(1), match.group(2), match.group(3)
        if alone is not None:
            value = _UNITS[alone.lower()]
        else:
            value = _TENS[tens.lower()] + (_DIGIT_WORDS[unit.lower()] if unit else 0)
        found.append((match.start(), match.group(0), float(value), 0))
    return [(written, value, decimals) for _, written, value, decimals in sorted(found)]


def numbers_in(text: str) -> list[str]:
    """Every number of ``text`` as written, in order.

    Digits (``12``, ``61,521``, ``3.14``; a sign or a hyphen is not part of the
    number, so ``2017-08-01`` holds 2017, 08 and 01) and the number words
    ``zero``, ``two`` ... ``ninety-nine`` (``one`` is left out: it is more often
    a pronoun than a count).
    """
    return [written for written, _, _ in _number_values(text)]


def _cell_numbers(value: Any, into: list[float]) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        into.append(abs(float(value)))
    elif isinstance(value, str):
        into.extend(v for _, v, _ in _number_values(value))
    elif isinstance(value, dict):
        for item in value.values():
            _cell_numbers(item, into)
    elif isinstance(value, list):
        for item in value:
            _cell_numbers(item, into)


def _supported(value: float, decimals: int, pool: Iterable[float]) -> bool:
    for known in pool:
        if value == known:
            return True
        # a non-integral cell may be cited rounded to the decimals the text shows
        if not known.is_integer() and round(known, decimals) == value:
            return True
    return False


def unsupported_numbers(text: str, result: QueryResult, question: str = "") -> list[str]:
    """The numbers of ``text`` that come from neither ``result`` nor ``question``.

    A number is supported when it equals a numeric cell (absolute value; a
    non-integral cell also matches when rounded to the decimals the text shows),
    a number inside a string, list or map cell, the row count, or a number of the
    question.

    Args:
        text: the answer.
        result: the rows it was written from.
        question: the question asked.

    Returns:
        The unsupported numbers as written, in order (empty: every number is supported).
    """
    pool: list[float] = [float(result.row_count)]
    for row in result.rows:
        for cell in row:
            _cell_numbers(cell, pool)
    pool.extend(v for _, v, _ in _number_values(question))
    return [
        written
        for written, value, decimals in _number_values(text)
        if not _supported(value, decimals, pool)
    ]


def _cell_text(value: Any, into: list[str]) -> None:
    """Every string a cell holds (nested lists, maps, node and relationship properties)."""
    if isinstance(value, dict):
        for key, item in value.items():
            into.append(str(key))
            _cell_text(item, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _cell_text(item, into)
    elif value is not None:
        into.append(str(value))


def unsupported_names(
    text: str, result: QueryResult, question: str = "", query: str = ""
) -> list[str]:
    """The names of ``text`` that occur in neither ``result``, ``question`` nor ``query``.

    A name is a word that starts with a capital letter and does not start a
    sentence (nor a parenthesis, a quotation or a list item), or a word of two
    or more letters all in capitals. It is supported when it occurs, case
    ignored, in a cell (strings inside lists, maps and nodes included), a
    column name, the question or the query (which holds the labels the answer
    may name). A sentence's first word is not checked: it is capitalised by
    grammar, not because it names something.

    Args:
        text: the answer.
        result: the rows it was written from.
        question: the question asked.
        query: the Cypher that ran.

    Returns:
        The unsupported names as written, in order, without repeats (empty: all supported).
    """
    pieces: list[str] = [question, query, *result.columns]
    for row in result.rows:
        for cell in row:
            _cell_text(cell, pieces)
    pool = "\n".join(pieces).lower()
    found: list[str] = []
    text = text.replace("\u2019", "'")  # a typographic apostrophe reads as the ASCII one
    for match in _NAME.finditer(text):
        word = match.group().rstrip("'-")
        shouted = len(word) >= 2 and word.isupper()
        if word == "I" or (not shouted and _SENTENCE_START.search(text[: match.start()])):
            continue
        if word.lower().removesuffix("'s") not in pool and word not in found:
            found.append(word)
    return found


def _value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:.6g}"
    if isinstance(value, dict) and value.get("_kind") == "node":
        props = value.get("properties", {})
        name = next((props[k] for k in ("name", "title", "id") if k in props), None)
        labels = ":".join(value.get("labels", []))
        return f"{labels} {name}" if name is not None else labels or "node"
    return str(value)


def _row_text(columns: list[str], row: list[Any]) -> str:
    if len(row) == 1:
        return _value(row[0])
    first, *rest = row
    details = ", ".join(f"{c}: {_value(v)}" for c, v in zip(columns[1:], rest, strict=False))
    return f"{_value(first)} ({details})"


def template_answer(result: QueryResult, limit: int = _TEMPLATE_ROWS) -> str:
    """A deterministic answer built from the rows alone (every number in it comes from them).

    No rows: :data:`NO_DATA`. One row of one column: ``"column: value."``. One
    row: each ``column: value``. More rows: their count and the first ``limit``,
    each as its first value with the others in parentheses.

    Args:
        result: the rows.
        limit: rows spelled out at most.

    Returns:
        One or two sentences.
    """
    if not result.rows:
        return NO_DATA
    if len(result.rows) == 1:
        pairs = ", ".join(
            f"{c}: {_value(v)}" for c, v in zip(result.columns, result.rows[0], strict=False)
        )
        return f"{pairs}."
    shown = "; ".join(_row_text(result.columns, row) for row in result.rows[:limit])
    tail = "; ..." if len(result.rows) > limit else "."
    cap = " (the row cap cut the result)" if result.truncated else ""
    return f"{len(result.rows)} results{cap}: {shown}{tail}"


def _cell(value: Any) -> str:
    text = _value(value)
    return text if len(text) <= 200 else text[:197] + "..."


def answer_prompt(question: str, query: str, result: QueryResult) -> list[ChatMessage]:
    """The messages the model writes the answer from: instructions, then question, query and rows.

    Args:
        question: the question asked.
        query: the Cypher that ran.
        result: its rows; the first :data:`ANSWER_ROWS` are shown, with the total count.

    Returns:
        A system and a user message.
    """
    shown = result.rows[:ANSWER_ROWS]
    lines = [" | ".join(result.columns)]
    lines += [" | ".join(_cell(v) for v in row) for row in shown]
    count = f"{result.row_count} rows" + (
        f", the first {len(shown)} shown" if len(shown) < result.row_count else ""
    )
    body = (
        f"Question: {question.strip()}\n\nCypher that ran:\n{query.strip()}\n\n"
        f"Result ({count}):\n" + "\n".join(lines) + "\n\nAnswer:"
    )
    return [ChatMessage(role="system", content=_SYSTEM), ChatMessage(role="user", content=body)]


_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")


def _complete_sentences(text: str) -> str:
    """``text`` up to the end of its last complete sentence (empty when none ends)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    return text[: ends[-1]].strip() if ends else ""


def answer_in_words(
    model: ChatModel,
    question: str,
    query: str,
    result: QueryResult,
    *,
    on_token: Callable[[str], None] | None = None,
    max_tokens: int = ANSWER_MAX_TOKENS,
    seed: int | None = None,
) -> Answer:
    """Write the answer in words to ``question`` from ``result``, and check its numbers.

    The model decodes greedily (temperature 0) from :func:`answer_prompt`; its
    pieces go to ``on_token`` as they are generated. A reply cut off at
    ``max_tokens`` keeps its complete sentences only. The text is kept when every
    number and name in it is supported (:func:`unsupported_numbers`,
    :func:`unsupported_names`); otherwise, or when
    the reply is empty or the model fails, :func:`template_answer` is returned
    with ``source="template"`` and the reason. Without rows the model is not
    called and the answer is :data:`NO_DATA`.

    Args:
        model: the model that writes.
        question: the question asked (for a follow-up, as the user typed it).
        query: the Cypher that ran.
        result: its rows.
        on_token: called with each generated piece of text.
        max_tokens: most tokens generated.
        seed: sampling seed passed to the model.

    Returns:
        The answer record.
    """
    if not result.rows:
        return Answer(text=NO_DATA, source="template", reason="no rows")
    started = time.perf_counter()
    try:
        response = model.chat(
            answer_prompt(question, query, result),
            temperature=0.0,
            max_tokens=max_tokens,
            seed=seed,
            on_token=on_token,
        )
    except ModelError as e:
        return Answer(
            text=template_answer(result),
            source="template",
            reason=f"the model failed: {e}",
            seconds=time.perf_counter() - started,
        )
    written = response.text.strip()
    if response.finish_reason == "length":
        # a sentence cut off at the token cap may leave out rows and end mid-claim:
        # keep the complete sentences, or fall back to the template when none is
        written = _complete_sentences(written)
    checked = numbers_in(written)
    unsupported = unsupported_numbers(written, result, question)
    names = unsupported_names(written, result, question, query)
    reason: str | None = None
    if not written and response.finish_reason == "length":
        reason = f"the model's answer was cut off at {max_tokens} tokens"
    elif not written:
        reason = "the model wrote nothing"
    elif unsupported:
        reason = f"numbers not in the rows: {', '.join(unsupported)}"
    elif names:
        reason = f"names not in the rows: {', '.join(names)}"
    return Answer(
        text=written if reason is None else template_answer(result),
        source="model" if reason is None else "template",
        numbers_checked=checked,
        unsupported=unsupported,
        unsupported_names=names,
        model_text=response.text,
        reason=reason,
        prompt_tokens=response.prompt_tokens,
        tokens=response.completion_tokens,
        seconds=time.perf_counter() - started,
    )

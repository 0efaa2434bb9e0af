"""Checks of a query against its question: a threshold the question states must be in the query.

"Which manufacturers have registered more than 500 cases?" asks for a filter,
``WITH m, count(c) AS n WHERE n > 500``; small models answer it with
``ORDER BY n DESC LIMIT 500``, which runs, returns rows, and passes every
schema check. :func:`check_question` finds a comparative threshold in the
question ("more than 500", "at least three", "over 100k", "fewer than 10")
and reports a ``question_threshold`` finding when the query compares nothing
with that number. The check is textual and conservative: a question without
such a phrase gets no finding, and any comparison of the number (``> 500``,
``>= 501``, ``500 <``) satisfies it.
"""

from __future__ import annotations

import re

from cypherturn.grounding._check import Finding

__all__ = ["check_question", "question_thresholds"]

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "fifty": 50, "hundred": 100,
}  # fmt: skip

_COMPARATIVES = (
    "more than", "greater than", "older than", "younger than", "longer than", "larger than", "bigger than", "higher than", "over", "above",
    "exceeding", "at least", "fewer than", "less than", "lower than", "smaller than", "under",
    "below", "at most", "no more than",
)  # fmt: skip

_PHRASE = re.compile(
    r"\b(" + "|".join(re.escape(c) for c in sorted(_COMPARATIVES, key=len, reverse=True)) + r")"
    r"\s+(\d[\d,]*(?:\.\d+)?(?:[km](?![a-z]))?|" + "|".join(_NUMBER_WORDS) + r")\b",
    re.IGNORECASE,
)


def question_thresholds(question: str) -> list[tuple[str, float]]:
    """The comparative thresholds a question states: ``[(phrase, number)]``.

    ``"more than three"`` -> ``("more than three", 3)``; ``"over 100k"`` ->
    ``("over 100k", 100000)``; ``"at least 2,000"`` -> ``2000``.
    """
    found: list[tuple[str, float]] = []
    for m in _PHRASE.finditer(question):
        raw = m.group(2).lower().replace(",", "").replace(" ", "")
        if raw in _NUMBER_WORDS:
            number = float(_NUMBER_WORDS[raw])
        else:
            scale = {"k": 1_000, "m": 1_000_000}.get(raw[-1], 1)
            number = float(raw.rstrip("km")) * scale
        found.append((m.group(0), number))
    return found


_NUMERIC = re.compile(r"(?<![\w.$])(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(?![\w.])")
_COMPARED = re.compile(r"(<=|>=|<>|<|>|=)\s*$")
_COMPARED_AFTER = re.compile(r"^\s*(<=|>=|<>|<|>|=)")


def _compared_numbers(query: str) -> set[float]:
    numbers: set[float] = set()
    for m in _NUMERIC.finditer(query):
        before, after = query[: m.start()], query[m.end() :]
        if _COMPARED.search(before) or _COMPARED_AFTER.match(after):
            numbers.add(float(m.group(1)))
    return numbers


def _numbers_in(text: str) -> set[float]:
    """Numbers written in ``text`` as digits or as number words."""
    found = {float(n.replace(",", "")) for n in re.findall(r"\b\d[\d,]*(?:\.\d+)?\b", text)}
    words = re.findall(r"[a-z]+", text.lower())
    return found | {float(_NUMBER_WORDS[w]) for w in words if w in _NUMBER_WORDS}


def check_question(question: str, query: str) -> list[Finding]:
    """Findings for thresholds the question states and the query does not compare with.

    Also flagged: a ``LIMIT`` equal to a threshold the question states when the
    question names that number nowhere else ("more than three crimes" answered
    with ``WHERE n > 3 ... LIMIT 3``): the question asks for every row past the
    threshold, not a top N.

    Args:
        question: the user's question.
        query: the candidate Cypher.

    Returns:
        One ``question_threshold`` finding per missing threshold (no edit: the
        fix needs the query restructured), empty when every threshold is compared.
    """
    compared = _compared_numbers(query)
    limits = {float(n) for n in re.findall(r"\bLIMIT\s+(\d+)", query, re.IGNORECASE)}
    thresholds = question_thresholds(question)
    findings: list[Finding] = []
    outside = _PHRASE.sub(" ", question)
    for phrase, number in thresholds:
        if (
            number in limits
            and number not in _numbers_in(outside)
            and {number, number - 1, number + 1} & compared
        ):
            shown = f"{number:g}"
            findings.append(
                Finding(
                    code="question_threshold",
                    message=(
                        f"the question asks for every row with {phrase!r}, but LIMIT {shown} "
                        f"keeps only {shown} of them; drop the LIMIT"
                    ),
                )
            )
    for phrase, number in thresholds:
        if {number, number - 1, number + 1} & compared:
            continue
        shown = f"{number:g}"
        message = f"the question asks for {phrase!r}, but the query compares nothing with {shown}"
        if number in limits:
            message += f": LIMIT {shown} keeps {shown} rows, it does not filter them"
        message += (
            f"; filter with WHERE, on an aggregate through WITH "
            f"(WITH x, count(y) AS n WHERE n > {shown} RETURN x, n)"
        )
        findings.append(Finding(code="question_threshold", message=message))
    return findings

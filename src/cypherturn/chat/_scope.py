"""When a graph cannot answer a question: nothing in the question is in the graph, or no query fits.

Two deterministic checks, one before the model and one after the strategy:

- :func:`scope_problem`: the question's content words are compared with the
  graph's vocabulary (labels, relationship types and property keys split into
  words, and the stored values of low-cardinality string properties), each word
  reduced to its stem (:func:`~cypherturn.grounding.stem`, Snowball English:
  ``crimes`` -> ``crime``, ``investigated`` -> ``investig``, ``people`` ->
  ``person``). A question that shares no word
  with it, holds no quoted text or number (which may compare a property the
  question calls by another name), has a content word no string property
  stores (so it is not all names: "Who is Hillard?"), and is not a follow-up
  of an earlier answered turn is out of scope, and the model is not called.
- :func:`result_problem`: the grounded strategy (``ras+``) found no acceptable
  candidate: no query executed, or the selected one still breaks the schema
  (verdict ``flagged``), or it returned no rows that a check explains (a
  compared literal the graph does not store: ``explained_empty``).
"""

from __future__ import annotations

import itertools
import re

from cypherturn.grounding import (
    FUNCTION_WORDS,
    WORD,
    GraphIndex,
    antecedent_inside,
    names_prior_output,
    stem,
    words,
)
from cypherturn.strategies import StrategyResult

__all__ = [
    "FOLLOW_UP_WORDS",
    "graph_vocabulary",
    "refers_back",
    "result_problem",
    "scope_problem",
    "stem",
]

# fmt: off
FOLLOW_UP_WORDS = frozenset([
    "those", "these", "them", "they", "that", "it", "its", "their", "theirs", "same", "also",
    "instead", "ones", "previous", "earlier", "above", "again", "else", "remaining", "rest",
])
"""Words that mark a question as built on an earlier turn (also: ``and``/``or``/``but`` first,
``what about``, ``how about``, ``which of``, and the aggregation cues of an elliptical
follow-up such as "cool, how many": :data:`_ELLIPSIS_WORDS`, ``how many``, ``how much``)."""

_ELLIPSIS_WORDS = frozenset(["count", "total", "average", "most", "least", "list", "show"])

_ANAPHORS = frozenset(["those", "these", "them", "they", "their", "theirs", "it", "its", "that"])
"""Follow-up words that count only without an antecedent in the question itself
(:func:`~cypherturn.grounding.antecedent_inside`): "cases that resulted in" is no follow-up."""

_STOP = FUNCTION_WORDS | frozenset([
    "number", "count", "total", "lets", "let", "up", "down", "out", "off", "ever",
])
"""Words that name nothing in a graph: English function words, and a question's own verbs of counting."""
# fmt: on


def _content_stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w.lower() not in _STOP and len(w) >= 3}


def graph_vocabulary(index: GraphIndex) -> set[str]:
    """The stems of every word of the graph's labels, types, property keys and listed values."""
    names: list[str] = [*index.labels, *index.types, *index.all_keys]
    for listed in index.values.values():
        names.extend(listed.values)
    vocabulary: set[str] = set()
    for name in names:
        vocabulary |= _content_stems(name)
    return vocabulary


def _matches(word: str, vocabulary: set[str]) -> bool:
    if word in vocabulary:
        return True
    # Snowball leaves "vehicl" (vehicle) and "vehicular" apart: a shared stem of five letters or
    # more joins them
    return len(word) >= 5 and any(
        len(v) >= 5 and (v.startswith(word) or word.startswith(v)) for v in vocabulary
    )


def _names_something(question: str, index: GraphIndex) -> bool:
    """A quoted text or a number, or content words that are all stored values.

    A number ("older than 90", "in 2020") may be compared with a property the
    question names by a synonym the schema does not use ("patients" for ``Case``),
    and quoted text may be a value in another spelling. Otherwise every content
    word must be held by some string property (case ignored, inside a longer
    value too): "Who is Hillard?" names an officer's surname, while "What will
    the weather be like in London tomorrow?" is not about a Manchester crime
    graph although some address there says "London" (nothing stores "weather").
    """
    if re.search(r"['\"][^'\"]{2,}['\"]|\d", question):
        return True
    content = [w for w in words(question) if w.lower() not in _STOP and len(w) >= 3]
    return bool(content) and all(_stored_anywhere(w, index) for w in content)


def _stored_anywhere(word: str, index: GraphIndex) -> bool:
    """Whether a string property of the graph holds ``word`` (case ignored, inside a value too).

    Listed values are read first; the others are looked up, one query per property,
    until one holds it. Without an engine the answer is yes (it cannot be ruled out).
    """
    lowered = word.lower()
    if any(lowered in v.lower() for pv in index.values.values() for v in pv.values):
        return True
    if index.engine is None:
        return True
    return any(
        index.value_exists(owner, key, lowered, "CONTAINS", fold="lower")
        for (owner, key), pv in index.values.items()
        if not pv.complete
    )


def refers_back(question: str) -> bool:
    """Whether ``question`` refers to an earlier turn, so it needs the conversation as context.

    It does when it holds a :data:`FOLLOW_UP_WORDS` word (a pronoun or
    demonstrative only when nothing before it in the question is what it
    stands for: :func:`~cypherturn.grounding.antecedent_inside`), names the
    earlier output ("you listed", "your last answer":
    :func:`~cypherturn.grounding.names_prior_output`), starts with ``and``,
    ``or``, ``but`` or ``plus``, says ``what about``, ``how about``, ``which of``,
    ``first of`` or ``last of``, or is elliptical: one content word
    at most ("only burglaries?", "cool, how many"). A question that does none of
    these is answered on its own: small models given an unrelated earlier query
    copy it (Qwen2.5-Coder-1.5B answered "Which areas have the most crimes?",
    asked after a question about officers, with the officers query).

    Example:
        >>> refers_back("Which of those are burglaries?"), refers_back("Which areas have the most crimes?")
        (True, False)
    """
    found = list(WORD.finditer(question))
    words = [m.group().lower() for m in found]
    if len(_content_stems(question)) <= 1 or not words:
        return True
    pairs = {" ".join(pair) for pair in itertools.pairwise(words)}
    return (
        words[0] in ("and", "or", "but", "plus")
        or names_prior_output(question)
        or any(_points_back(question, m) for m in found)
        or bool(pairs & {"what about", "how about", "which of", "first of", "last of"})
    )


def _points_back(question: str, word: re.Match[str]) -> bool:
    """A follow-up word that points outside the question (a pronoun with no antecedent in it)."""
    lowered = word.group().lower()
    if lowered not in FOLLOW_UP_WORDS:
        return False
    if lowered in _ANAPHORS:
        return not antecedent_inside(question, word.start(), word.end())
    return True


def _is_follow_up(question: str) -> bool:
    words = [w.lower() for w in WORD.findall(question)]
    pairs = {" ".join(pair) for pair in itertools.pairwise(words)}
    return (
        refers_back(question)
        or any(w in _ELLIPSIS_WORDS for w in words)
        or bool(pairs & {"how many", "how much"})
    )


def scope_problem(question: str, index: GraphIndex, *, follows: bool) -> str | None:
    """Why ``question`` mentions nothing the graph holds, or ``None`` when it may.

    Args:
        question: the question as typed.
        index: the graph's index (schema, keys, listed values).
        follows: earlier turns of the conversation were answered, so a follow-up
            ("and in 2020?", "which of those ...") may name nothing itself.

    Returns:
        A sentence for the user, or ``None``.
    """
    stems = _content_stems(question)
    vocabulary = graph_vocabulary(index)
    if any(_matches(word, vocabulary) for word in stems):
        return None
    if (follows and _is_follow_up(question)) or _names_something(question, index):
        return None
    labels = ", ".join(sorted(index.labels)[:8]) or "nothing"
    return f"the question mentions nothing in this graph's schema (it holds: {labels})"


def result_problem(result: StrategyResult) -> str | None:
    """Why the strategy's outcome does not answer the question, or ``None`` when it does.

    Args:
        result: a strategy's result; the grounded strategy's verdicts are read
            when present.

    Returns:
        A sentence for the user: no query executed within the budget (of
        attempts, or of time: ``result.stop_reason``), the
        selected query still breaks the schema (``flagged``), or its empty
        result is explained by a check (``explained_empty``); ``None`` otherwise.
    """
    if not result.attempts:
        return f"no answer within the time budget ({result.stop_reason or 'no attempt finished'})"
    chosen = next(
        (a for a in result.attempts if a.index == result.selected_attempt), result.attempts[-1]
    )
    if not result.success:
        last = result.attempts[-1]
        detail = f"{last.error_class}: {last.error_message}" if last.error_class else "no query"
        if result.stop_reason is not None:
            return (
                f"no generated query executed within the time budget ({result.stop_reason}; "
                f"last: {detail})"
            )
        return f"no generated query executed in {result.budget} attempts (last: {detail})"
    findings = "; ".join(f.message for f in chosen.findings)
    if chosen.verdict == "flagged":
        return f"the best query does not fit the graph's schema: {findings}"
    if chosen.verdict == "explained_empty":
        return f"no stored data matches it: {findings}"
    return None

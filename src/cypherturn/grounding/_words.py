"""English words as grounding and chat read them: one tokenizer, one stemmer, one function-word list.

A question's words are compared with a graph's names (labels, relationship
types, property keys, stored values) and with each other. Both sides go through
the same steps: split at camel case and underscores (``ReportedCrime`` ->
``Reported``, ``Crime``), lower-cased, a possessive ``'s`` dropped, an irregular
plural made singular (:data:`SINGULARS`), then the Snowball English stemmer
(PyStemmer), so ``crimes``/``crime``, ``categories``/``category`` and
``investigated``/``investigating`` meet. Words of English closed classes
(:data:`FUNCTION_WORDS`) are never content.
"""

from __future__ import annotations

import re
from typing import Final

import Stemmer

__all__ = ["FUNCTION_WORDS", "SINGULARS", "WORD", "content_words", "stem", "stems", "words"]

WORD: Final = re.compile(r"[A-Za-z][A-Za-z']*")
"""A word: letters, with apostrophes after the first (``crime's``, ``don't``)."""

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

SINGULARS: Final = {"people": "person", "persons": "person", "children": "child", "men": "man",
                    "women": "woman", "criteria": "criterion", "data": "datum",
                    "mice": "mouse"}  # fmt: skip
"""Irregular English plurals and their singulars ("persons" is regular, listed for its stem)."""

_FUNCTION_TEXT = """a an the of in on at to for from by with without and or but not no nor is are
    was were be been being am do does did done has have had having how many much what which who
    whom whose when where why there here this that these those it its they them their theirs i
    me my we our you your he she his her all any each every some most more less least few than
    then so such per between across during before after since until can could would should will
    shall may might must also only just very please give list show tell find get whether ones
    one both either neither other others same about into over under as if onto"""
FUNCTION_WORDS: Final = frozenset(_FUNCTION_TEXT.split())
"""English closed classes and question words: never an antecedent, never a content word."""

_STEMMER = Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """``text``'s words as written, split at camel case and underscores (names of a schema too).

    Example:
        >>> words("ReportedCrime has_status lastOutcome")
        ['Reported', 'Crime', 'has', 'status', 'last', 'Outcome']
    """
    return WORD.findall(_CAMEL.sub(" ", text))


def _plain(word: str) -> str:
    lowered = word.lower().removesuffix("'s").strip("'")
    return SINGULARS.get(lowered, lowered)


def stem(word: str) -> str:
    """One word's stem: lower case, no possessive, irregular plurals singular, then Snowball.

    Example:
        >>> [stem(w) for w in ("Crimes", "crime", "people", "person", "LIVING")]
        ['crime', 'crime', 'person', 'person', 'live']
    """
    return _STEMMER.stemWord(_plain(word))


def stems(text: str) -> list[str]:
    """The stems of every word of ``text`` (:func:`words`, then :func:`stem`), in order."""
    return _STEMMER.stemWords([p for p in map(_plain, words(text)) if p])


def content_words(text: str) -> list[str]:
    """``text``'s words of three letters or more that are no :data:`FUNCTION_WORDS`, lower case.

    Not split at camel case: a question's words as a person typed them.
    """
    lowered = (w.lower().removesuffix("'s").strip("'") for w in WORD.findall(text))
    return [w for w in lowered if len(w) >= 3 and w not in FUNCTION_WORDS]

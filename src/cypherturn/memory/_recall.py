"""Recall: the remembered pairs nearest a new question, by BM25 over the questions' words.

Ranking is Okapi BM25 (``bm25s``, defaults k1 = 1.5, b = 0.75) over the English
words of the remembered questions, stop words dropped and words stemmed with the
Snowball English stemmer (PyStemmer), so "crimes" finds "crime". Only pairs that
share at least one such word with the question are recalled: a memory with
nothing near says nothing, rather than showing an unrelated query.

The pairs are indexed once per :class:`Recall`; an index over a few thousand
pairs builds in milliseconds, so a process rebuilds it when the memory changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import bm25s
import numpy as np
import Stemmer

from cypherturn.memory._store import VerifiedPair

__all__ = ["DEFAULT_RECALL", "Recall"]

DEFAULT_RECALL = 3
"""Pairs shown to the model per question unless asked otherwise."""

_STEMMER = Stemmer.Stemmer("english")

# bm25s logs every index build at DEBUG; cypherturn's -v is for its own progress
logging.getLogger("bm25s").setLevel(logging.WARNING)


def _tokens(texts: list[str]) -> list[list[str]]:
    tokenized = bm25s.tokenize(
        texts, stopwords="en", stemmer=_STEMMER.stemWords, return_ids=False, show_progress=False
    )
    assert isinstance(tokenized, list)
    return [list(words) for words in tokenized]


class Recall:
    """A BM25 index over remembered questions.

    Args:
        pairs: the remembered pairs (any graphs; :meth:`nearest` filters by graph).
    """

    def __init__(self, pairs: Sequence[VerifiedPair]) -> None:
        self.pairs = list(pairs)
        self._retriever: bm25s.BM25 | None = None
        if self.pairs:
            retriever = bm25s.BM25()
            retriever.index(_tokens([pair.question for pair in self.pairs]), show_progress=False)
            self._retriever = retriever

    def nearest(
        self,
        question: str,
        k: int = DEFAULT_RECALL,
        *,
        graph: str | None = None,
        exclude: Callable[[VerifiedPair], bool] | None = None,
    ) -> list[tuple[VerifiedPair, float]]:
        """The ``k`` pairs nearest ``question``, best first, with their BM25 scores.

        Args:
            question: the new question.
            k: at most this many pairs (0 gives none).
            graph: keep only pairs verified on this graph.
            exclude: pairs for which this returns true are never recalled
                (for leave-one-out evaluation: the question's own pair).

        Returns:
            ``(pair, score)`` with score > 0, highest first; ties keep the
            memory's order. Empty when no remembered question shares a word.
        """
        if k <= 0 or self._retriever is None:
            return []
        vocabulary = self._retriever.vocab_dict
        words = [word for word in _tokens([question])[0] if word in vocabulary]
        if not words:
            return []
        allowed = np.array(
            [
                (graph is None or pair.graph == graph) and not (exclude and exclude(pair))
                for pair in self.pairs
            ],
            dtype=float,
        )
        if not allowed.any():
            return []
        scores = self._retriever.get_scores(words) * allowed
        order = sorted(range(len(self.pairs)), key=lambda i: (-scores[i], i))
        return [(self.pairs[i], float(scores[i])) for i in order[:k] if scores[i] > 0]

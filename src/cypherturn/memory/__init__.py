"""The memory of verified questions: question → Cypher pairs per graph, recalled as few-shot examples.

A pair is kept only after its query ran on the graph read-only
(:func:`verify_pair`): a person confirmed it (chat ``/remember``, the API's
:func:`~cypherturn.api.remember`) or it came from a file (``cypherturn learn``).
:class:`Recall` picks the pairs nearest a new question by BM25; ``ask``, ``chat``
and the ask benchmark show them to the model after the schema examples. Not part
of either paper (docs/design/memory.md).
"""

from cypherturn.memory._learn import LearnReport, learn_file
from cypherturn.memory._recall import DEFAULT_RECALL, Recall
from cypherturn.memory._store import (
    MEMORY_SCHEMA_VERSION,
    PairSource,
    QuestionMemory,
    VerifiedPair,
    memory_path,
    normalize_question,
    verify_pair,
)

__all__ = [
    "DEFAULT_RECALL",
    "MEMORY_SCHEMA_VERSION",
    "LearnReport",
    "PairSource",
    "QuestionMemory",
    "Recall",
    "VerifiedPair",
    "learn_file",
    "memory_path",
    "normalize_question",
    "verify_pair",
]

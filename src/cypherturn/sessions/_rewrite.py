"""Optional rewriting of utterances by a chat model, for naturalness (CypherTurn §2.5).

The paper rewrote template utterances with an LLM; here it is off by default and
never touches a gold query or result. A rewrite is kept only when the same gold
still answers it (:func:`rewrite_problem`): it keeps every number and every
literal the gold compares with (entity names, category values), adds no number
or name, keeps every word of the closed lexicon that decides a query's meaning
(comparatives, superlatives, ordinals, negations, quantifiers, aggregates,
demonstratives and pronouns that point at an earlier answer) and adds none of
them, keeps most content words, is one
message of about the same length, and is no assistant's reply ("Sure, here's
...", an answer, an echo of the earlier messages). The turn then records the
model and the original utterance in ``rewrite``; a rejected rewrite keeps the
template's utterance.

Why the checks: with Qwen2.5-Coder-1.5B as the rewriting model (the only local
one), about half of the rewrites that kept every literal still changed the
question: "the highest birth year" became "the oldest birth year", a condition
was added ("Monument type is Temple and ..."), a reference was dropped ("their
average" became "the average ... of the citizens"), earlier messages were merged
in, or the model answered ("the total count ... is 10"). A paraphrase whose gold
no longer answers it measures the rewriter, not the system.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from cypherturn.sessions._format import RewriteInfo, Session, Turn
from cypherturn.sessions._templates import TemplateBank, load_bank

if TYPE_CHECKING:
    from cypherturn.models import ChatModel

__all__ = [
    "MEANING_WORDS",
    "REWRITE_PROMPT",
    "required_literals",
    "rewrite_problem",
    "rewrite_sessions",
]

log = logging.getLogger(__name__)

REWRITE_PROMPT = (
    "You rewrite one message that a user sends to an assistant answering questions from a graph "
    "database, so that it sounds like a natural message from this user: {title} ({traits}).\n"
    "Rules: keep every name, number and category value exactly as written; keep references to "
    "earlier answers (such as 'those', 'their', 'the first one') as references; do not add, drop "
    "or change any condition; do not answer the question. Reply with the rewritten message only."
)
"""System prompt of the rewriting model; ``{title}`` and ``{traits}`` come from the persona."""

_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_ASSISTANT = re.compile(
    r"^(sure|certainly|of course|here is|here's|rewritten|absolutely)\b|rewrit|earlier message|"
    r"message to rewrite",
    re.IGNORECASE,
)
MEANING_WORDS = frozenset(
    [
        "highest",
        "lowest",
        "most",
        "least",
        "top",
        "bottom",
        "fewest",
        "greatest",
        "largest",
        "smallest",
        "biggest",
        "maximum",
        "minimum",
        "more",
        "less",
        "fewer",
        "greater",
        "larger",
        "smaller",
        "higher",
        "lower",
        "over",
        "under",
        "above",
        "below",
        "exceeding",
        "least",
        "most",
        "first",
        "second",
        "third",
        "last",
        "next",
        "previous",
        "earlier",
        "before",
        "after",
        "not",
        "no",
        "never",
        "without",
        "except",
        "excluding",
        "other",
        "others",
        "only",
        "every",
        "all",
        "each",
        "any",
        "none",
        "and",
        "or",
        "both",
        "either",
        "neither",
        "those",
        "these",
        "them",
        "their",
        "they",
        "that",
        "this",
        "it",
        "its",
        "one",
        "ones",
        "total",
        "sum",
        "combined",
        "average",
        "mean",
        "count",
        "number",
        "many",
        "much",
    ]
)
"""Words that decide which rows a question asks for (a closed English lexicon, no
benchmark phrase): a rewrite must keep each one its original holds."""
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "from",
        "at",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "how",
        "can",
        "could",
        "would",
        "will",
        "shall",
        "should",
        "may",
        "might",
        "please",
        "you",
        "your",
        "me",
        "my",
        "i",
        "we",
        "our",
        "us",
        "show",
        "list",
        "give",
        "tell",
        "find",
        "get",
        "want",
        "know",
        "need",
        "just",
    ]
)
"""Function words left out of the content-word recall."""
MIN_CONTENT_RECALL = 0.6
"""Share of the original's content words (5-letter stems) a rewrite must keep."""
LENGTH_RANGE = (0.5, 1.8)
"""A rewrite's length in words, as a multiple of the original's (plus 6 words of slack)."""


def required_literals(turn: Turn) -> set[str]:
    """Strings a rewrite must keep: the utterance's numbers and the literals its gold compares with."""
    needed = set(_NUMBER.findall(turn.utterance))
    if turn.skeleton is not None:
        for block in turn.skeleton.blocks:
            for condition in block.conditions:
                values = condition.value if isinstance(condition.value, list) else [condition.value]
                needed.update(v for v in values if isinstance(v, str) and v in turn.utterance)
    return needed


def _stem(word: str) -> str:
    return word.lower()[:5]


def rewrite_problem(original: str, rewrite: str, required: set[str]) -> str | None:
    """Why ``rewrite`` may not stand for ``original`` (``None``: it may).

    Args:
        original: the template's utterance.
        rewrite: the model's rewrite, cleaned (:func:`_clean`).
        required: literals it must keep (:func:`required_literals`).

    Returns:
        A short reason, or ``None`` when the rewrite is kept.
    """
    if not rewrite:
        return "empty"
    missing = sorted(v for v in required if v not in rewrite)
    if missing:
        return f"missing {missing}"
    first = original.split(maxsplit=1)[0].lower().strip(",.!:") if original.split() else ""
    found = _ASSISTANT.search(rewrite)
    if "\n" in rewrite or (found and not found.group(0).lower().startswith(first or "\0")):
        return "an assistant's reply, not the user's message"
    added = set(_NUMBER.findall(rewrite)) - set(_NUMBER.findall(original))
    if added:
        return f"adds numbers {sorted(added)}"
    said = {w.lower() for w in _WORD.findall(original)}
    names = [
        w
        for sentence in re.split(r"[.?!:]\s+", rewrite)
        for w in _WORD.findall(sentence)[1:]
        if w[0].isupper() and w.lower() not in said
    ]
    if names:
        return f"adds names {names}"
    words = [w.lower() for w in _WORD.findall(rewrite)]
    lost = sorted({w for w in said & MEANING_WORDS if w not in words})
    if lost:
        return f"drops {lost}"
    gained = sorted({w for w in words if w in MEANING_WORDS and w not in said})
    if gained:
        return f"adds {gained}"
    if '"' in rewrite and '"' not in original:
        return "quotes a message"
    content = {_stem(w) for w in said if w not in STOPWORDS and w not in MEANING_WORDS}
    kept = content & {_stem(w) for w in words}
    if content and len(kept) / len(content) < MIN_CONTENT_RECALL:
        return f"keeps {len(kept)} of {len(content)} content words"
    low, high = LENGTH_RANGE
    length, base = len(words), len(_WORD.findall(original))
    if not low * base <= length <= high * base + 6:
        return f"{length} words for {base}"
    return None


def _clean(text: str) -> str:
    text = _THINK.sub("", text).strip()
    return text.strip().strip('"').strip()


def _rewrite_turns(
    session: Session, model: ChatModel, bank: TemplateBank, temperature: float, seed: int | None
) -> Iterator[Turn]:
    # Imported here: the models package (and its SDKs) is only needed when rewriting.
    from cypherturn.models import ChatMessage

    persona = bank.persona(session.persona)
    system = ChatMessage(
        role="system", content=REWRITE_PROMPT.format(title=persona.title, traits=persona.traits)
    )
    history: list[str] = []
    for turn in session.turns:
        context = "\n".join(f"Earlier message: {u}" for u in history[-3:])
        prompt = f"{context}\nMessage to rewrite: {turn.utterance}".strip()
        reply = model.chat(
            [system, ChatMessage(role="user", content=prompt)], temperature=temperature, seed=seed
        )
        text = _clean(reply.text)
        problem = rewrite_problem(turn.utterance, text, required_literals(turn))
        history.append(turn.utterance)
        if problem is not None:
            log.info(
                "rewrite of %s turn %d dropped: %s", session.session_id, turn.turn_index, problem
            )
            yield turn
            continue
        yield turn.model_copy(
            update={
                "utterance": text,
                "rewrite": RewriteInfo(model=model.spec, original_utterance=turn.utterance),
            }
        )


def rewrite_sessions(
    sessions: Iterable[Session],
    model: ChatModel,
    *,
    temperature: float = 0.7,
    seed: int | None = 0,
    bank: TemplateBank | None = None,
) -> list[Session]:
    """Rewrite every utterance with ``model``; gold queries and results are left as they are.

    Args:
        sessions: the sessions to rewrite.
        model: the chat model.
        temperature: sampling temperature.
        seed: sampling seed passed to the model (``None`` for none).
        bank: personas (default: the packaged ones).

    Returns:
        New sessions; a turn whose rewrite lost a required literal keeps its utterance.

    Raises:
        ModelError: the model failed.
    """
    bank = bank or load_bank()
    return [
        session.model_copy(
            update={"turns": list(_rewrite_turns(session, model, bank, temperature, seed))}
        )
        for session in sessions
    ]

"""Optional rewriting of utterances by a chat model, for naturalness (CypherTurn §2.5).

The paper rewrote template utterances with an LLM; here it is off by default and
never touches a gold query or result. A rewrite is kept only when it still
contains every number and every literal the gold compares with (entity names,
category values), so the question stays answerable by the same gold; the turn
then records the model and the original utterance in ``rewrite``.
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

__all__ = ["REWRITE_PROMPT", "required_literals", "rewrite_sessions"]

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


def required_literals(turn: Turn) -> set[str]:
    """Strings a rewrite must keep: the utterance's numbers and the literals its gold compares with."""
    needed = set(_NUMBER.findall(turn.utterance))
    if turn.skeleton is not None:
        for block in turn.skeleton.blocks:
            for condition in block.conditions:
                values = condition.value if isinstance(condition.value, list) else [condition.value]
                needed.update(v for v in values if isinstance(v, str) and v in turn.utterance)
    return needed


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
        missing = [v for v in required_literals(turn) if v not in text]
        history.append(turn.utterance)
        if not text or missing:
            log.info(
                "rewrite of %s turn %d dropped (missing %s)",
                session.session_id,
                turn.turn_index,
                missing,
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

"""The conversation so far as model context, so a follow-up is resolved against earlier turns.

The layout is the CypherTurn benchmark's history (guided protocol, CypherTurn
App. D.5: ``Turn k`` / ``User:`` / ``Assistant: [Query Result]`` with up to
:data:`~cypherturn.protocols.HISTORY_ROWS` rows, rendered by
:func:`~cypherturn.agent.render_rows`), with each turn's Cypher added, as the
agentic history records its ``EXECUTE_CYPHER`` payloads: a follow-up ("which
of those ...", "and in 2020?") is usually the earlier query edited.
"""

from __future__ import annotations

from collections.abc import Sequence

from cypherturn.agent import render_rows
from cypherturn.chat._records import ChatTurn
from cypherturn.protocols import HISTORY_ROWS

__all__ = ["HISTORY_TURNS", "chat_history", "contextual_question"]

HISTORY_TURNS = 3
"""Earlier answered turns shown to the model (the most recent ones)."""

_CURRENT = (
    "Current question (it may refer to the conversation above; build on the earlier Cypher "
    "instead of copying values from its rows, which show 10 rows at most):"
)
"""Why the last clause: asked "Which of those types has the fewest crimes?" after a
14-row count per type, Qwen2.5-Coder-1.5B filtered on three types copied from the
shown rows instead of reordering the earlier query."""


def chat_history(
    turns: Sequence[ChatTurn], *, keep: int = HISTORY_TURNS, rows: int = HISTORY_ROWS
) -> str:
    """The last ``keep`` answered turns as a ``Conversation so far:`` block.

    Out-of-scope turns are left out: they hold no query or result to build on.

    Args:
        turns: the conversation's turns, in order.
        keep: answered turns kept at most (0: none).
        rows: rows of each result kept.

    Returns:
        The block, ending with a blank line; empty when no answered turn is kept.
    """
    blocks: list[str] = []
    for turn in turns:
        if turn.query is None or turn.result is None:
            continue
        shown = render_rows(turn.result.columns, turn.result.rows, rows)
        blocks.append(
            f"Turn {turn.index}\nUser: {turn.question}\nCypher: {turn.query}\n"
            f"Assistant: [Query Result] {shown}"
        )
    blocks = blocks[-keep:] if keep > 0 else []
    if not blocks:
        return ""
    return "Conversation so far:\n" + "\n\n".join(blocks) + "\n\n"


def contextual_question(question: str, history: str) -> str:
    """The text the strategy answers: ``question`` alone, or the history and then the question.

    Args:
        question: the question as typed.
        history: :func:`chat_history` of the earlier turns.

    Returns:
        ``question`` when ``history`` is empty.
    """
    if not history:
        return question.strip()
    return f"{history}{_CURRENT}\n{question.strip()}"

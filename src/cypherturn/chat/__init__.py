"""A conversation over a graph: follow-ups in context, answers in words, out-of-scope questions named.

The pieces below take objects (an engine's index, turns, results); the session
that opens the graph and the model by name is :class:`cypherturn.api.ChatSession`,
and the terminal front end is ``cypherturn chat``. Design: ``docs/design/chat.md``.
"""

from cypherturn.chat._history import HISTORY_TURNS, chat_history, contextual_question
from cypherturn.chat._records import (
    TRANSCRIPT_VERSION,
    ChatTurn,
    Transcript,
    TurnOutcomeName,
    read_transcript,
    write_transcript,
)
from cypherturn.chat._scope import (
    FOLLOW_UP_WORDS,
    graph_vocabulary,
    refers_back,
    result_problem,
    scope_problem,
    stem,
)

__all__ = [
    "FOLLOW_UP_WORDS",
    "HISTORY_TURNS",
    "TRANSCRIPT_VERSION",
    "ChatTurn",
    "Transcript",
    "TurnOutcomeName",
    "chat_history",
    "contextual_question",
    "graph_vocabulary",
    "read_transcript",
    "refers_back",
    "result_problem",
    "scope_problem",
    "stem",
    "write_transcript",
]

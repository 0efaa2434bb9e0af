"""What a chat stores: one record per turn, one transcript per conversation, read back as written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from cypherturn.answers import Answer
from cypherturn.errors import ConfigError
from cypherturn.graph import QueryResult
from cypherturn.records import read_model
from cypherturn.strategies import StrategyResult

__all__ = [
    "TRANSCRIPT_VERSION",
    "ChatTurn",
    "Transcript",
    "TurnOutcomeName",
    "read_transcript",
    "write_transcript",
]

TRANSCRIPT_VERSION = 1
"""Layout version of a chat transcript file."""

TurnOutcomeName = Literal["answered", "out_of_scope"]
"""``answered``: a query ran and its rows (possibly none) are the answer; ``out_of_scope``:
the graph cannot answer the question (see :mod:`cypherturn.chat._scope`)."""


class ChatTurn(BaseModel):
    """One question of a conversation and what came of it.

    Attributes:
        index: 1-based position in the conversation.
        question: the question as the user typed it.
        asked: the text the strategy answered: the question preceded by the
            conversation so far (:func:`~cypherturn.chat.contextual_question`).
        outcome: ``answered`` or ``out_of_scope``.
        reason: why the graph cannot answer (``out_of_scope`` only).
        query: the Cypher that ran and produced ``result`` (``None``: none ran).
        result: its columns and rows.
        answer: the answer in words (``None``: out of scope, or answers were off).
        strategy: every attempt of the strategy (``None`` when the scope check
            refused the question before any model call).
        seconds: wall time of the turn, seconds.
    """

    index: int = Field(ge=1)
    question: str
    asked: str
    outcome: TurnOutcomeName
    reason: str | None = None
    query: str | None = None
    result: QueryResult | None = None
    answer: Answer | None = None
    strategy: StrategyResult | None = None
    seconds: float = 0.0


class Transcript(BaseModel):
    """A whole conversation as saved to disk (``chat --resume FILE`` reads it back).

    Attributes:
        schema_version: layout version (:data:`TRANSCRIPT_VERSION`).
        graph: the graph name the conversation is over.
        engine: the engine's spec (no secrets).
        model: the model's spec.
        strategy: the strategy and its budget, e.g. ``ras+@5``.
        turns: every turn, in order.
    """

    schema_version: int = TRANSCRIPT_VERSION
    graph: str
    engine: str = ""
    model: str = ""
    strategy: str = ""
    turns: list[ChatTurn] = Field(default_factory=list)


def write_transcript(transcript: Transcript, path: Path) -> Path:
    """Write ``transcript`` as indented JSON, atomically (a reader never sees half a file).

    Args:
        transcript: the conversation.
        path: the file; its directory is created.

    Returns:
        ``path``.

    Raises:
        ConfigError: the file cannot be written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(transcript.model_dump_json(indent=2), encoding="utf-8")
        os.replace(partial, path)
    except OSError as e:
        raise ConfigError(f"cannot write transcript {path}: {e}") from e
    return path


def read_transcript(path: Path) -> Transcript:
    """Read a transcript written by :func:`write_transcript`.

    Args:
        path: the file.

    Returns:
        The conversation, every turn with its query, rows, answer and attempts.

    Raises:
        ConfigError: the file is missing or unreadable, is not a transcript, or
            has a layout version this cypherturn does not read (the message names
            the file and the first problem).
    """
    transcript = read_model(path, Transcript, "chat transcript", ConfigError)
    if transcript.schema_version != TRANSCRIPT_VERSION:
        raise ConfigError(
            f"{path} is a chat transcript of layout version {transcript.schema_version}; "
            f"this cypherturn reads version {TRANSCRIPT_VERSION}"
        )
    return transcript

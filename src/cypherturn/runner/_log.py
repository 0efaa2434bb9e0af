"""Per-session action logs: versioned JSONL, one event per line, appended as it happens.

A log holds ``session_start``, then one ``step`` per action and one ``turn_end``
per turn, then ``session_end``. Each line is flushed as it is written (a killed
process loses nothing written), and ``session_start``, ``turn_end`` and
``session_end`` are also fsynced (an operating-system crash loses at most the
steps of the unfinished turn, which resume replays anyway). A kill mid-write
leaves at most one torn final line; :func:`read_log` drops it. On resume the
turns whose ``turn_end`` was written are kept (:func:`finished_turns`) and the
session continues from the first unfinished turn; the steps of that torn turn
are set aside with the old log and the turn is played again.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Annotated, Final, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from cypherturn.agent import ActionStep, TurnEnd
from cypherturn.errors import DatasetError
from cypherturn.records import TurnRecord, validation_problem

__all__ = [
    "LOG_SCHEMA_VERSION",
    "LogEvent",
    "SessionFinished",
    "SessionLog",
    "SessionStarted",
    "SessionStatus",
    "StepLogged",
    "TurnFinished",
    "finished_turns",
    "read_log",
]

LOG_SCHEMA_VERSION: Final = 1
"""Layout version of every log event."""


def _now() -> datetime:
    return datetime.now(UTC)


class SessionStatus(StrEnum):
    """How a session ended (closed vocabulary)."""

    COMPLETED = "completed"
    """Every turn was played; the session is scored."""
    INFRA_FAILURE = "infra_failure"
    """The endpoint or the engine failed persistently; unscored, listed apart, redone on resume."""


class SessionStarted(BaseModel):
    """First line of a session log.

    Attributes:
        config_digest: digest of the run configuration the session was played under.
        session_digest: digest of the session's benchmark line.
        turns: T, the session's turn count.
        budget: the session's action budget (B = T x m in agentic, 3 per turn in guided).
        resumed_turns: turns copied from an interrupted run's log (0 on a first start).
    """

    schema_version: Literal[1] = LOG_SCHEMA_VERSION
    event: Literal["session_start"] = "session_start"
    at: datetime = Field(default_factory=_now)
    session_id: str
    config_digest: str
    session_digest: str
    turns: int
    budget: int
    resumed_turns: int = 0


class StepLogged(BaseModel):
    """One action step (model reply, action, observation, tokens, latency)."""

    schema_version: Literal[1] = LOG_SCHEMA_VERSION
    event: Literal["step"] = "step"
    at: datetime = Field(default_factory=_now)
    step: ActionStep


class TurnFinished(BaseModel):
    """A finished turn: why it ended and its scorer record."""

    schema_version: Literal[1] = LOG_SCHEMA_VERSION
    event: Literal["turn_end"] = "turn_end"
    at: datetime = Field(default_factory=_now)
    end: TurnEnd
    record: TurnRecord


class SessionFinished(BaseModel):
    """Last line of a finished session log.

    Attributes:
        status: completed, or infrastructure failure.
        error: the failure's message, when it failed.
    """

    schema_version: Literal[1] = LOG_SCHEMA_VERSION
    event: Literal["session_end"] = "session_end"
    at: datetime = Field(default_factory=_now)
    status: SessionStatus
    error: str | None = None


LogEvent = Annotated[
    SessionStarted | StepLogged | TurnFinished | SessionFinished, Field(discriminator="event")
]
_EVENT: TypeAdapter[SessionStarted | StepLogged | TurnFinished | SessionFinished] = TypeAdapter(
    LogEvent
)


class SessionLog:
    """Appends events to one session's log file: every line flushed, turn boundaries fsynced.

    The file is replaced atomically: ``first`` is written to a temporary file
    beside it, forced to disk and renamed over ``path``, so at every instant the
    path holds either the old log or a new one that already has ``first`` (a
    resumed session's kept turns are never lost by a kill at the wrong moment).

    Args:
        path: the log file; replaced when it exists.
        first: the events the new log starts with (``session_start`` and, on
            resume, the kept turns' events).

    Raises:
        DatasetError: the file cannot be written.
    """

    def __init__(self, path: Path, first: Sequence[BaseModel] = ()) -> None:
        staging = path.with_name(path.name + ".new")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = staging.open("w", encoding="utf-8")
            self._fh.writelines(event.model_dump_json() + "\n" for event in first)
            self._fh.flush()
            os.fsync(self._fh.fileno())
            os.replace(staging, path)
            _sync_dir(path.parent)
        except OSError as e:
            raise DatasetError(f"cannot write session log {path}: {e}") from e
        self.path = path

    def append(self, event: BaseModel) -> None:
        """Write one event line; force it to disk unless it is a step."""
        self._fh.write(event.model_dump_json())
        self._fh.write("\n")
        self._fh.flush()
        if not isinstance(event, StepLogged):
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Close the file."""
        self._fh.close()

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _sync_dir(folder: Path) -> None:
    """Force a rename in ``folder`` to disk (directories are fsynced through a read-only fd)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_log(path: Path) -> list[SessionStarted | StepLogged | TurnFinished | SessionFinished]:
    """Read a session log, dropping a torn last line (a run killed mid-write).

    Args:
        path: the log file.

    Returns:
        The events in order.

    Raises:
        DatasetError: the file cannot be read, a line other than the last is
            invalid, or an event has a newer schema version.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise DatasetError(f"cannot read session log {path}: {e}") from e
    events: list[SessionStarted | StepLogged | TurnFinished | SessionFinished] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            events.append(_EVENT.validate_json(line))
        except ValidationError as e:
            if number == len(lines):
                break
            raise DatasetError(
                f"{path}:{number}: {validation_problem(e, 'session log event')}"
            ) from e
    return events


def finished_turns(
    events: list[SessionStarted | StepLogged | TurnFinished | SessionFinished],
) -> list[tuple[list[StepLogged], TurnFinished]]:
    """The turns a log finished, each with its step events, in order.

    Steps after the last ``turn_end`` (a turn cut short by a crash) are not
    included; nor is anything after an infrastructure failure's ``session_end``.

    Args:
        events: a session log's events (:func:`read_log`).

    Returns:
        ``(steps, turn_end)`` per finished turn.
    """
    turns: list[tuple[list[StepLogged], TurnFinished]] = []
    steps: list[StepLogged] = []
    for event in events:
        if isinstance(event, StepLogged):
            steps.append(event)
        elif isinstance(event, TurnFinished):
            turns.append(([s for s in steps if s.step.turn == event.record.turn], event))
            steps = []
    return turns

"""Reading and writing records: run-directory file names, JSON Lines, one-line errors.

The layout these names make up is described once, in :mod:`cypherturn.records`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Final, TypeVar

from pydantic import BaseModel, Field, ValidationError

from cypherturn.errors import CypherTurnError, DatasetError
from cypherturn.records._ask import AskAnswer, GoldCheck
from cypherturn.records._models import STORED_CONTEXT, QerEpisode, RunManifest, TurnScore

__all__ = [
    "ABORTED_DIR",
    "ANSWERS_FILE",
    "ASK_CONFIG_FILE",
    "ATTEMPTS_FILE",
    "BENCH_CONFIG_FILE",
    "GOLDS_FILE",
    "INFRA_FILE",
    "MANIFEST_FILE",
    "PROMPTS_FILE",
    "QER_CONFIG_FILE",
    "RECORDS_FILE",
    "SCORES_FILE",
    "SESSIONS_DIR",
    "TRANSCRIPTS_FILE",
    "JsonlAppender",
    "RunData",
    "config_changes",
    "intact_lines",
    "read_jsonl",
    "read_model",
    "read_run",
    "validation_problem",
    "write_jsonl",
]

logger = logging.getLogger(__name__)

MANIFEST_FILE: Final = "run.json"
"""A scored run's :class:`~cypherturn.records.RunManifest`."""
RECORDS_FILE: Final = "records.jsonl"
"""One :class:`~cypherturn.records.TurnRecord` per line: the scorer's input."""
SCORES_FILE: Final = "scores.jsonl"
"""One :class:`~cypherturn.records.TurnScore` per line: what reports read."""
ATTEMPTS_FILE: Final = "attempts.jsonl"
"""One :class:`~cypherturn.records.QerEpisode` per line: a QER run's attempt logs."""
BENCH_CONFIG_FILE: Final = "bench_config.json"
"""A benchmark run's configuration (``cypherturn.runner.RunConfig``)."""
PROMPTS_FILE: Final = "prompts.json"
"""The prompt texts a benchmark run used."""
SESSIONS_DIR: Final = "sessions"
"""A benchmark run's per-session action logs (``cypherturn.runner.SessionLog``)."""
ABORTED_DIR: Final = "aborted"
"""Copies of the session logs an interrupted benchmark run left unfinished."""
INFRA_FILE: Final = "infra_failures.json"
"""The work a run's last invocation lost to infrastructure failures (unscored)."""
QER_CONFIG_FILE: Final = "qer.json"
"""A QER run's configuration (``cypherturn.experiments.QerRunConfig``)."""
TRANSCRIPTS_FILE: Final = "transcripts.jsonl"
"""One ``cypherturn.experiments.QerTranscript`` per line: a QER episode in full."""
ASK_CONFIG_FILE: Final = "ask.json"
"""An ask benchmark run's configuration (``cypherturn.experiments.AskRunConfig``)."""
GOLDS_FILE: Final = "golds.jsonl"
"""One :class:`~cypherturn.records.GoldCheck` per line: each question's gold on our engine."""
ANSWERS_FILE: Final = "answers.jsonl"
"""One :class:`~cypherturn.records.AskAnswer` per line: an ask benchmark run's answers."""

M = TypeVar("M", bound=BaseModel)


def config_changes(stored: BaseModel, requested: BaseModel) -> list[str]:
    """What differs between a run directory's stored configuration and the one asked for.

    Used to refuse resuming a run under other settings with a message naming them.

    Args:
        stored: the configuration the run directory was started with.
        requested: the configuration of the resuming command (same model class).

    Returns:
        ``"<dotted key> <old>!r -> <new>!r"`` per differing leaf of the JSON dumps
        (nested objects are compared key by key), in key order; empty when equal.
    """
    return [
        f"{key} {old!r} -> {new!r}"
        for key, old, new in _leaf_differences(
            stored.model_dump(mode="json"), requested.model_dump(mode="json")
        )
    ]


def _leaf_differences(
    old: dict[str, object], new: dict[str, object], prefix: str = ""
) -> list[tuple[str, object, object]]:
    found: list[tuple[str, object, object]] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            found.extend(_leaf_differences(a, b, f"{prefix}{key}."))
        elif a != b:
            found.append((f"{prefix}{key}", a, b))
    return found


def validation_problem(error: ValidationError, what: str) -> str:
    """One line saying why a stored record is unreadable (pydantic's own message spans lines).

    A ``schema_version`` this cypherturn does not read is named as such (whatever else is
    wrong: the version explains the rest); otherwise
    the first error's field and message are given.

    Args:
        error: the record's validation error.
        what: what the record should have been (``"TurnScore"``, ``"run configuration"``).

    Returns:
        ``"schema version 9 is not one this cypherturn reads (1)"`` or
        ``"not a valid WHAT: FIELD: MESSAGE"`` (no field when the line is not JSON).
    """
    errors = error.errors()
    for found in errors:
        if found["loc"] == ("schema_version",) and found["type"] == "literal_error":
            expected = found.get("ctx", {}).get("expected", "")
            return (
                f"schema version {found['input']!r} is not one this cypherturn reads ({expected})"
            )
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"not a valid {what}: {where + ': ' if where else ''}{first['msg']}"


def read_model(
    path: Path, model: type[M], what: str, error: type[CypherTurnError] = DatasetError
) -> M:
    """Read one JSON document and validate it as ``model``, with one-line errors.

    Args:
        path: the file.
        model: the pydantic model of the document.
        what: what the file should be, for messages (``"question set"``).
        error: the error class raised.

    Returns:
        The validated document.

    Raises:
        error: the file cannot be read (``cannot read WHAT PATH: REASON``) or is not a
            valid document (``PATH:`` and :func:`validation_problem`).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise error(f"cannot read {what} {path}: {e.strerror or e}") from e
    try:
        return model.model_validate_json(text)
    except ValidationError as e:
        raise error(f"{path}: {validation_problem(e, what)}") from e


def read_jsonl(
    path: Path,
    model: type[M],
    *,
    problem: Callable[[str, ValidationError], str] | None = None,
) -> Iterator[M]:
    """Read one pydantic record per non-empty line (older layouts migrate on the way in).

    Args:
        path: the JSON Lines file.
        model: the record type of every line.
        problem: says in one line why a line (its text and the validation error)
            is not a record; :func:`validation_problem` by default.

    Raises:
        DatasetError: the file is missing, or a line is not a valid record
            (the message names the file and line).
    """
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    with handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield model.model_validate_json(line, context={STORED_CONTEXT: True})
            except ValidationError as exc:
                why = problem(line, exc) if problem else validation_problem(exc, model.__name__)
                raise DatasetError(f"{path}:{number}: {why}") from exc


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> int:
    """Write records one per line, replacing the file; returns how many were written.

    Raises:
        OSError: the file cannot be written.
    """
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(record.model_dump_json())
            handle.write("\n")
            count += 1
    return count


def intact_lines(path: Path) -> Iterator[str]:
    """The non-empty lines of a JSONL file that is appended to as work finishes.

    A final line without its newline is what a kill mid-write leaves; it is
    removed from the file (with a warning), so appending continues on a line
    boundary and the torn record's work is redone. A missing file has no lines.

    Raises:
        OSError: the file exists but cannot be read or trimmed.
    """
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        logger.warning("%s: dropping a partial last line (%d bytes)", path, len(data) - cut)
        data = data[:cut]
        path.write_bytes(data)
    for line in data.decode("utf-8").splitlines():
        if line.strip():
            yield line


class JsonlAppender:
    """Appends records to a JSONL file one whole line at a time, each flushed as written.

    A killed process loses no line it wrote; it can leave at most one torn final
    line, which :func:`intact_lines` drops on the next read. Use from one thread.

    Args:
        path: the file; created when missing, appended to otherwise.

    Raises:
        OSError: the file cannot be opened.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = path.open("a", encoding="utf-8")

    def append(self, record: BaseModel) -> None:
        """Write ``record`` as one line and flush it."""
        self._fh.write(record.model_dump_json() + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Close the file."""
        self._fh.close()

    def __enter__(self) -> JsonlAppender:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class RunData(BaseModel):
    """Everything a report reads back from one run directory.

    Attributes:
        path: the run directory.
        manifest: its ``run.json``, when it has one.
        scores: its ``scores.jsonl`` (empty when absent).
        episodes: its ``attempts.jsonl`` (empty when absent).
        answers: its ``answers.jsonl``, an ask benchmark run's (empty when absent).
        golds: its ``golds.jsonl``, the gold labels of an ask benchmark run.
    """

    path: Path
    manifest: RunManifest | None
    scores: list[TurnScore]
    episodes: list[QerEpisode]
    answers: list[AskAnswer] = Field(default_factory=list)
    golds: list[GoldCheck] = Field(default_factory=list)


def read_run(path: Path) -> RunData:
    """Read a run directory (scored by ``cypherturn.metrics.score_run``, a QER run, or an ask run).

    Args:
        path: the run directory.

    Returns:
        The :class:`RunData`.

    Raises:
        DatasetError: not a directory, nothing to report, or a malformed file.
    """
    if not path.is_dir():
        raise DatasetError(f"run directory {path} does not exist")
    manifest = None
    manifest_path = path / MANIFEST_FILE
    if manifest_path.exists():
        try:
            manifest = RunManifest.model_validate_json(manifest_path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise DatasetError(
                f"{manifest_path}: {validation_problem(exc, 'run manifest')}"
            ) from exc
    scores_path = path / SCORES_FILE
    attempts_path = path / ATTEMPTS_FILE
    answers_path = path / ANSWERS_FILE
    if not any(p.exists() for p in (scores_path, attempts_path, answers_path)):
        raise DatasetError(f"{path} holds none of {SCORES_FILE}, {ATTEMPTS_FILE}, {ANSWERS_FILE}")
    scores = list(read_jsonl(scores_path, TurnScore)) if scores_path.exists() else []
    episodes = list(read_jsonl(attempts_path, QerEpisode)) if attempts_path.exists() else []
    answers = list(read_jsonl(answers_path, AskAnswer)) if answers_path.exists() else []
    golds_path = path / GOLDS_FILE
    golds = list(read_jsonl(golds_path, GoldCheck)) if golds_path.exists() else []
    return RunData(
        path=path,
        manifest=manifest,
        scores=scores,
        episodes=episodes,
        answers=answers,
        golds=golds,
    )

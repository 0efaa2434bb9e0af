"""The run directory: what a scored run holds on disk, and the function that scores into it.

Layout (all JSON Lines files hold one record per line)::

    RUN_DIR/
      run.json         RunManifest: run id, settings, counts, engine executions, the
                       engine (name, version) of each graph, the metric definitions version
      records.jsonl    TurnRecord per line: the scorer's input (kept for re-scoring)
      scores.jsonl     TurnScore per line: what reports read
      attempts.jsonl   QerEpisode per line: IS/RAS attempt logs for QER (optional)

``cypherturn report`` needs ``scores.jsonl`` and/or ``attempts.jsonl``; ``run.json``
is read when present.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from cypherturn.errors import DatasetError
from cypherturn.metrics._engineinfo import engine_info
from cypherturn.metrics._records import (
    METRICS_VERSION,
    STORED_CONTEXT,
    QerEpisode,
    RunManifest,
    ScoringSettings,
    TurnRecord,
    TurnScore,
)
from cypherturn.metrics._scorer import EngineSource, GoldCache, Scorer

__all__ = [
    "ATTEMPTS_FILE",
    "MANIFEST_FILE",
    "RECORDS_FILE",
    "SCORES_FILE",
    "RunData",
    "config_changes",
    "read_jsonl",
    "read_run",
    "score_run",
    "validation_problem",
    "write_jsonl",
]

logger = logging.getLogger(__name__)

MANIFEST_FILE = "run.json"
RECORDS_FILE = "records.jsonl"
SCORES_FILE = "scores.jsonl"
ATTEMPTS_FILE = "attempts.jsonl"

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


def read_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    """Read one pydantic record per non-empty line (older layouts migrate on the way in).

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
                raise DatasetError(
                    f"{path}:{number}: {validation_problem(exc, model.__name__)}"
                ) from exc


def write_jsonl(path: Path, records: Iterable[BaseModel]) -> int:
    """Write records one per line; returns how many were written.

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


class RunData(BaseModel):
    """Everything read back from one run directory."""

    path: Path
    manifest: RunManifest | None
    scores: list[TurnScore]
    episodes: list[QerEpisode]


def read_run(path: Path) -> RunData:
    """Read a run directory written by :func:`score_run` (or by hand, in that layout).

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
    if not scores_path.exists() and not attempts_path.exists():
        raise DatasetError(f"{path} holds neither {SCORES_FILE} nor {ATTEMPTS_FILE}")
    scores = list(read_jsonl(scores_path, TurnScore)) if scores_path.exists() else []
    episodes = list(read_jsonl(attempts_path, QerEpisode)) if attempts_path.exists() else []
    return RunData(path=path, manifest=manifest, scores=scores, episodes=episodes)


def score_run(
    records: Sequence[TurnRecord] | Path,
    engines: EngineSource,
    out_dir: Path,
    *,
    settings: ScoringSettings | None = None,
    gold_cache: GoldCache | None = None,
    description: str = "",
) -> RunManifest:
    """Score turn records and write a run directory (``records.jsonl``, ``scores.jsonl``, ``run.json``).

    Args:
        records: the turns, or a ``records.jsonl`` path to read them from.
        engines: the engine of each graph (mapping or factory by graph name).
        out_dir: the run directory; created when missing.
        settings: scoring settings (defaults: tolerance 1e-6, 2 workers).
        gold_cache: a gold cache to reuse and fill.
        description: free text stored in the manifest.

    Returns:
        The :class:`RunManifest` written to ``run.json``.

    Raises:
        DatasetError: unreadable records, or no engine for a graph.
        EngineConnectionError: an engine is unreachable.
    """
    turns = list(read_jsonl(records, TurnRecord)) if isinstance(records, Path) else list(records)
    if not turns:
        raise DatasetError("no turn records to score")
    out_dir.mkdir(parents=True, exist_ok=True)
    scorer = Scorer(engines, settings, gold_cache)
    scores = scorer.score(turns)
    write_jsonl(out_dir / RECORDS_FILE, turns)
    write_jsonl(out_dir / SCORES_FILE, scores)
    files = {"records": RECORDS_FILE, "scores": SCORES_FILE}
    if (out_dir / ATTEMPTS_FILE).exists():
        files["attempts"] = ATTEMPTS_FILE
    manifest = RunManifest(
        run_id="+".join(sorted({t.run_id for t in turns})),
        description=description,
        turns=len(scores),
        sessions=len({t.session_key for t in turns}),
        models=sorted({t.model for t in turns}),
        protocols=sorted({t.protocol.value for t in turns}),
        graphs=sorted({t.graph for t in turns}),
        settings=scorer.settings,
        executions=scorer.stats,
        metrics_version=METRICS_VERSION,
        engines={
            graph: engine_info(scorer.engine(graph)) for graph in sorted({t.graph for t in turns})
        },
        files=files,
    )
    (out_dir / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2), encoding="utf-8")
    logger.info(
        "scored %d turns in %.1f s (%.3f executions per predicted query)",
        len(scores),
        manifest.executions.seconds,
        manifest.executions.executions_per_prediction,
    )
    return manifest

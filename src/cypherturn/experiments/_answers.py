"""Answer accuracy of a QER run: EX and relaxed EX of each episode's final query.

The rules: docs/design/metrics.md, "Answer accuracy of the RAS experiment".

QER (RAS eq. 4) counts queries that fail to execute; a query that runs can
still answer another question. This module scores the final query of every
episode of a run directory against the gold of its question
(:func:`cypherturn.experiments.gold_query`), with the project's EX and relaxed
EX (:func:`cypherturn.metrics.ex_scores`; rows compared in order only when the
gold's final RETURN has ORDER BY, :func:`cypherturn.cypher.output_order`).

The predicted rows are the ``final_result`` the strategy recorded in
``transcripts.jsonl`` (nothing is re-executed); the gold runs once per question
on the engine at scoring time, under the run's row cap. An episode whose final
query did not execute scores 0. A question is left out of EX, and counted, when
it has no gold, when its gold returns no rows (an empty answer cannot tell a
right query from a wrong one) or more rows than the row cap (its rows cannot be
compared), or when its gold fails on the engine.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from cypherturn.cypher import OutputOrder, output_order
from cypherturn.errors import ConfigError, DatasetError, QueryError
from cypherturn.experiments._golds import GOLD_VERSION, gold_query, no_gold_reason
from cypherturn.experiments._questions import Question, QuestionSet
from cypherturn.experiments._runner import (
    QER_CONFIG_FILE,
    TRANSCRIPTS_FILE,
    QerRunConfig,
    QerTranscript,
    question_set_digest,
)
from cypherturn.graph import GraphEngine, QueryResult
from cypherturn.metrics import ex_scores
from cypherturn.records import ATTEMPTS_FILE, QerEpisode, read_jsonl

__all__ = [
    "AnswerStatus",
    "QerAnswer",
    "QerAnswers",
    "read_qer_config",
    "score_qer_answers",
]

logger = logging.getLogger(__name__)

AnswerStatus = Literal["scored", "no_gold", "empty_gold", "gold_over_cap", "gold_failed"]
"""Whether an episode's answer was scored, and if not, why its question was left out."""


class QerAnswer(BaseModel):
    """The answer accuracy of one episode's final query.

    Attributes:
        strategy / dataset / tier / model / run_index / question_id: the episode.
        status: ``scored``, or why the question is left out of EX.
        reason: the reason in words when not scored (empty when scored).
        executed: the final query executed (the strategy's ``success``).
        ex / ex_relaxed: strict and relaxed EX against the gold (0 or 1), ``None``
            when not scored.
    """

    model_config = ConfigDict(frozen=True)

    strategy: str
    dataset: str
    tier: str
    model: str
    run_index: int
    question_id: str
    status: AnswerStatus
    reason: str = ""
    executed: bool
    ex: int | None = None
    ex_relaxed: int | None = None


class QerAnswers(BaseModel):
    """Every scored episode of a run, with the gold version used.

    Attributes:
        gold_version: :data:`~cypherturn.experiments.GOLD_VERSION` of the golds.
        answers: one per episode of ``attempts.jsonl`` that has a transcript.
        missing_transcripts: episodes of ``attempts.jsonl`` without a transcript
            (not scored).
    """

    gold_version: str = GOLD_VERSION
    answers: list[QerAnswer]
    missing_transcripts: int = 0


@dataclass(frozen=True, slots=True)
class _Gold:
    status: AnswerStatus
    reason: str = ""
    result: QueryResult | None = None
    order: OutputOrder | None = None


def read_qer_config(run_dir: Path) -> QerRunConfig:
    """The configuration a QER run directory was started with (its ``qer.json``).

    Raises:
        DatasetError: the file is missing or not a valid configuration.
    """
    path = run_dir / QER_CONFIG_FILE
    try:
        return QerRunConfig.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise DatasetError(f"{run_dir} is not a QER run directory: cannot read {path}: {e}") from e
    except ValidationError as e:
        raise DatasetError(f"{path}: not a valid QER configuration: {e.errors()[0]['msg']}") from e


def _gold(question: Question, engine: GraphEngine, row_cap: int | None) -> _Gold:
    query = gold_query(question)
    if query is None:
        return _Gold("no_gold", no_gold_reason(question) or "no gold")
    try:
        result = engine.execute(query, row_cap=row_cap)
    except QueryError as e:
        logger.warning("the gold of %s fails on %s: %s", question.id, engine.graph, e)
        return _Gold("gold_failed", f"gold fails on the engine: {e}")
    if result.truncated:
        return _Gold("gold_over_cap", f"gold returns more rows than the row cap ({row_cap})")
    if not result.rows:
        return _Gold("empty_gold", "gold returns no rows on this graph")
    return _Gold("scored", result=result, order=output_order(query))


def _transcripts(path: Path) -> Iterator[QerTranscript]:
    if path.exists():
        yield from read_jsonl(path, QerTranscript)


def score_qer_answers(
    run_dir: Path,
    engines: Mapping[str, GraphEngine],
    question_sets: Mapping[str, QuestionSet],
) -> QerAnswers:
    """Score the final query of every episode of a QER run directory against its gold.

    Args:
        run_dir: a directory written by :func:`run_qer_experiment`.
        engines: dataset -> engine on that dataset's loaded graph (the one the run used).
        question_sets: dataset -> the question set the run was played with.

    Returns:
        The :class:`QerAnswers`, in ``attempts.jsonl`` order.

    Raises:
        DatasetError: the directory is not a QER run, or a record is malformed.
        ConfigError: a question set differs from the one the run was bound to, a
            dataset has no engine or question set, or an episode names a question
            its set does not hold.
        EngineConnectionError: an engine is unreachable.
    """
    config = read_qer_config(run_dir)
    for dataset in config.datasets:
        if dataset not in question_sets:
            raise ConfigError(f"no question set for dataset {dataset!r}")
        if dataset not in engines:
            raise ConfigError(f"no engine for dataset {dataset!r}")
        digest = config.question_sets.get(dataset)
        if digest is not None and question_set_digest(question_sets[dataset]) != digest:
            raise ConfigError(
                f"the question set of {dataset!r} is not the one {run_dir} was run with"
            )
    results: dict[tuple[str, str, str, str, int, str], tuple[bool, QueryResult | None]] = {}
    for t in _transcripts(run_dir / TRANSCRIPTS_FILE):
        key = (t.result.strategy, t.dataset, t.tier, t.result.model, t.run_index, t.question_id)
        final = t.result.final_result if t.result.success else None
        results[key] = (t.result.success, final)
    golds: dict[tuple[str, str], _Gold] = {}
    answers: list[QerAnswer] = []
    missing = 0
    for e in read_jsonl(run_dir / ATTEMPTS_FILE, QerEpisode):
        key = (e.strategy, e.dataset, e.tier, e.model, e.run_index, e.question_id)
        if key not in results:
            missing += 1
            continue
        executed, pred = results[key]
        gold = golds.get((e.dataset, e.question_id))
        if gold is None:
            gold = _gold(_question(question_sets, e), engines[e.dataset], config.row_cap)
            golds[(e.dataset, e.question_id)] = gold
        answer = QerAnswer(
            strategy=e.strategy,
            dataset=e.dataset,
            tier=e.tier,
            model=e.model,
            run_index=e.run_index,
            question_id=e.question_id,
            executed=executed,
            status=gold.status,
            reason=gold.reason,
        )
        if gold.result is not None and gold.order is not None:
            ex, relaxed = ex_scores(gold.result, pred, gold.order) if pred is not None else (0, 0)
            answer = answer.model_copy(update={"ex": ex, "ex_relaxed": relaxed})
        answers.append(answer)
    if missing:
        logger.warning(
            "%d episode(s) of %s have no transcript and are not scored", missing, run_dir
        )
    return QerAnswers(answers=answers, missing_transcripts=missing)


def _question(question_sets: Mapping[str, QuestionSet], episode: QerEpisode) -> Question:
    qs = question_sets[episode.dataset]
    found = next((q for q in qs.questions if q.id == episode.question_id), None)
    if found is None:
        raise ConfigError(
            f"episode question {episode.question_id!r} is not in the {episode.dataset} question set"
        )
    return found

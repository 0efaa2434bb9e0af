"""The RAS experiment (RAS §4-§5): run it, score and report it, and manage its question sets."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cypherturn.api._engines import connect
from cypherturn.api._hooks import Status, quiet
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.experiments import (
    DATASETS,
    QerAnswers,
    QerRunConfig,
    QerRunSummary,
    QuestionSet,
    dataset_graph,
    generate_model_questions,
    generate_question_set,
    load_question_set,
    question_set_digest,
    read_qer_config,
    run_qer_experiment,
    score_qer_answers,
    validate_question_set,
    write_question_set,
)
from cypherturn.graph import GraphEngine
from cypherturn.models import ChatModel, load_model
from cypherturn.records import QerEpisode, read_run
from cypherturn.reports import Report, ReportFormat, build_report, write_report
from cypherturn.strategies import get_strategy

__all__ = [
    "QerQuestionsConfig",
    "QerQuestionsResult",
    "QerReportConfig",
    "QerReportResult",
    "QerRun",
    "qer_questions",
    "qer_report",
    "run_qer",
]


class QerRun(BaseModel):
    """What `cypherturn qer run` plays: an experiment, and where and how it runs.

    Attributes:
        experiment: the experiment as stored in ``qer.json`` and compared on resume.
            Its ``model`` is the spec to load (the loaded model's own spec is
            recorded); its ``strategies`` may be any name
            :func:`~cypherturn.strategies.get_strategy` knows (the strategy's own
            name is recorded); empty ``question_sets`` digests are filled in from
            the sets loaded, given ones are checked against them.
        out_dir: the run directory (resumed when it exists).
        model_options: keyword options for :func:`cypherturn.models.load_model`;
            an ``n_ctx`` among them is recorded as the experiment's ``n_ctx``, and
            the experiment's ``n_ctx``, when set, is the model's window.
        question_dir: folder with ``<dataset>.json`` question sets (``None``: packaged).
        engine_url: as in :func:`~cypherturn.api.connect`.
        concurrency: worker threads (useful for ``openai:`` endpoints; GGUF is serialised).
    """

    model_config = ConfigDict(extra="forbid")

    experiment: QerRunConfig
    out_dir: Path
    model_options: dict[str, Any] = Field(default_factory=dict)
    question_dir: Path | None = None
    engine_url: str | None = None
    concurrency: int = 1


@contextmanager
def _dataset_engines(
    datasets: Sequence[str], engine_url: str | None, status: Status
) -> Iterator[dict[str, GraphEngine]]:
    """Engines on the datasets' graphs, each loaded on first use; closed on exit."""
    with ExitStack() as stack:
        engines: dict[str, GraphEngine] = {}
        with status("Opening (and on first use loading) the graphs ..."):
            for dataset in datasets:
                engines[dataset] = stack.enter_context(
                    connect(dataset_graph(dataset), engine_url=engine_url)
                )
        yield engines


def run_qer(
    run: QerRun,
    *,
    model: ChatModel | None = None,
    status: Status = quiet,
    on_start: Callable[[QerRunConfig, int, int], None] | None = None,
    on_episode: Callable[[QerEpisode], None] | None = None,
) -> QerRunSummary:
    """Run (or resume) the QER experiment of IS vs RAS (RAS §4.7) into ``run.out_dir``.

    Args:
        run: the experiment and where it runs.
        model: a loaded model to use instead of loading ``run.experiment.model``.
        status: wraps opening (and on first use loading) the graphs.
        on_start: called once with the configuration recorded, the episodes
            planned and those already done.
        on_episode: called after each episode is written.

    Returns:
        The :class:`~cypherturn.experiments.QerRunSummary`.

    Raises:
        ConfigError: an unknown strategy, dataset or tier, an experiment ``n_ctx`` other
            than the ``n_ctx`` model option, a changed configuration in
            the run directory, a question set that does not match its digest.
        DatasetError: a missing or malformed question set or run directory.
        ModelError: the model cannot be loaded.
        EngineConnectionError: an engine is unreachable before any episode is played.

    A model or engine failure during an episode ends only that episode: it is listed
    in the summary's ``infra_failures`` (and ``infra_failures.json``), and rerunning
    plays it.
    """
    experiment = run.experiment
    # The strategy's own name, which episodes record: resuming matches episodes by it.
    strategies = [get_strategy(name).name for name in experiment.strategies]
    sets = {d: load_question_set(d, run.question_dir) for d in experiment.datasets}
    options = dict(run.model_options)
    if (
        experiment.n_ctx is not None
        and options.setdefault("n_ctx", experiment.n_ctx) != experiment.n_ctx
    ):
        raise ConfigError(
            f"the experiment's n_ctx {experiment.n_ctx} and the model option n_ctx "
            f"{options['n_ctx']} differ"
        )
    chat_model = model if model is not None else load_model(experiment.model, **options)
    config = experiment.model_copy(
        update={
            "strategies": strategies,
            "model": chat_model.spec,
            "n_ctx": options.get("n_ctx"),
            "question_sets": experiment.question_sets
            or {d: question_set_digest(qs) for d, qs in sets.items()},
        }
    )
    with _dataset_engines(config.datasets, run.engine_url, status) as engines:
        return run_qer_experiment(
            config,
            chat_model,
            engines,
            sets,
            run.out_dir,
            concurrency=run.concurrency,
            on_start=None if on_start is None else lambda t, d: on_start(config, t, d),
            on_episode=on_episode,
        )


class QerReportConfig(BaseModel):
    """What `cypherturn qer report` renders.

    Attributes:
        run_dir: a `qer run` directory.
        out: output folder (``None``: ``run_dir/report``).
        fmt: file format of the written tables.
        qer_n: scaled budget n of the QER tables.
        question_dir: folder with the run's ``<dataset>.json`` sets (``None``: packaged).
        engine_url: as in :func:`~cypherturn.api.connect`.
    """

    model_config = ConfigDict(extra="forbid")

    run_dir: Path
    out: Path | None = None
    fmt: ReportFormat = ReportFormat.MD
    qer_n: int = 5
    question_dir: Path | None = None
    engine_url: str | None = None


@dataclass(frozen=True, slots=True)
class QerReportResult:
    """What :func:`qer_report` computed and wrote.

    Attributes:
        report: Tables 3-4, Figure 3 and the answer tables.
        answers: the final queries scored against the golds.
        written: the tables file first, then each plot.
    """

    report: Report
    answers: QerAnswers
    written: list[Path]


def qer_report(config: QerReportConfig, *, status: Status = quiet) -> QerReportResult:
    """Tables 3-4 and Figure 3 with, per configuration, EX of the final query and QER vs Q@1.

    The final queries' rows are read from ``run_dir/transcripts.jsonl`` and compared
    with each question's gold, executed now on the dataset's graph (loaded on first use).

    Args:
        config: the run and the report's options.
        status: wraps opening the graphs and scoring the final queries.

    Returns:
        The :class:`QerReportResult`.

    Raises:
        DatasetError: a missing or malformed run directory or question set.
        EngineConnectionError: an engine is unreachable.
    """
    experiment = read_qer_config(config.run_dir)
    sets = {d: load_question_set(d, config.question_dir) for d in experiment.datasets}
    run = read_run(config.run_dir)
    with (
        _dataset_engines(experiment.datasets, config.engine_url, status) as engines,
        status("Scoring the final queries against the golds ..."),
    ):
        answers = score_qer_answers(config.run_dir, engines, sets)
    report = build_report([run], qer_n=config.qer_n, qer_answers=answers)
    out = config.out if config.out is not None else config.run_dir / "report"
    written = write_report(report, out, config.fmt)
    return QerReportResult(report=report, answers=answers, written=written)


class QerQuestionsConfig(BaseModel):
    """What `cypherturn qer questions` lists, validates, regenerates or extends.

    Attributes:
        datasets: the datasets (``healthcare``, ``crime``, ``fraud``).
        question_dir: read sets from this folder (``None``: packaged).
        validate_sets: check every question's values against the loaded graph.
        regenerate: rewrite the template questions from the graph (needs ``out``).
        generate: have ``model`` write ``count`` more questions per tier (needs ``out``).
        count: model-written questions per tier.
        model: the writing model's spec.
        model_options: keyword options for :func:`cypherturn.models.load_model`.
        seed: sampling and template seed.
        out: folder the ``<dataset>.json`` sets are written into (``None``: none written).
        engine_url: as in :func:`~cypherturn.api.connect`.
    """

    model_config = ConfigDict(extra="forbid")

    datasets: list[str] = Field(default_factory=lambda: list(DATASETS))
    question_dir: Path | None = None
    validate_sets: bool = False
    regenerate: bool = False
    generate: bool = False
    count: int = 5
    model: str = "default"
    model_options: dict[str, Any] = Field(default_factory=dict)
    seed: int = 0
    out: Path | None = None
    engine_url: str | None = None


@dataclass(frozen=True, slots=True)
class QerQuestionsResult:
    """What :func:`qer_questions` read or made.

    Attributes:
        sets: dataset -> its question set.
        problems: dataset -> what validation found (empty: valid); only when validating.
        written: the files written.
    """

    sets: dict[str, QuestionSet]
    problems: dict[str, list[str]]
    written: list[Path]


def qer_questions(config: QerQuestionsConfig, *, status: Status = quiet) -> QerQuestionsResult:
    """List, validate, regenerate (templates) or extend (model-written) the question sets.

    Args:
        config: which sets and what to do with them.
        status: wraps the model writing questions.

    Returns:
        The :class:`QerQuestionsResult`.

    Raises:
        ConfigError: ``regenerate`` or ``generate`` without ``out``; an unknown dataset.
        DatasetError: a missing or malformed question set.
        ModelError: the writing model failed.
    """
    if (config.regenerate or config.generate) and config.out is None:
        raise ConfigError("--regenerate and --generate write new sets: give --out DIR")
    sets: dict[str, QuestionSet] = {}
    problems: dict[str, list[str]] = {}
    written: list[Path] = []
    for dataset in config.datasets:
        qs = None if config.regenerate else load_question_set(dataset, config.question_dir)
        if config.regenerate or config.generate or config.validate_sets:
            with connect(dataset_graph(dataset), engine_url=config.engine_url) as target:
                if qs is None:
                    qs = generate_question_set(dataset, target, seed=config.seed)
                if config.generate:
                    chat_model = load_model(config.model, **config.model_options)
                    with status(f"{config.model} is writing {dataset} questions ..."):
                        qs = generate_model_questions(
                            qs, chat_model, target, count=config.count, seed=config.seed
                        )
                if config.validate_sets:
                    problems[dataset] = validate_question_set(qs, target)
        if qs is None:
            raise DatasetError(f"no question set for {dataset}")
        sets[dataset] = qs
        if config.out is not None:
            path = config.out / f"{dataset}.json"
            write_question_set(path, qs)
            written.append(path)
    return QerQuestionsResult(sets=sets, problems=problems, written=written)

"""`cypherturn qer`: the RAS experiment (QER of IS vs RAS) and its question sets (RAS §4-§5)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from cypherturn import api
from cypherturn.cli._app import console
from cypherturn.cli._exit import ExitCode
from cypherturn.cli._options import BaseUrlOpt, ContextOpt, EngineOpt, ModelOptions, model_options
from cypherturn.cli._qer_options import (
    ALL_DATASETS,
    ALL_TIERS,
    QerBudgetOpt,
    QerConcurrencyOpt,
    QerDatasetsOpt,
    QerMaxTokensOpt,
    QerOutOpt,
    QerPromptOpt,
    QerQuestionDirOpt,
    QerQuestionsOpt,
    QerRowCapOpt,
    QerRunsOpt,
    QerSeedOpt,
    QerStrategiesOpt,
    QerTemperatureOpt,
    QerTiersOpt,
    QerTimeoutOpt,
)
from cypherturn.cli._signals import stoppable
from cypherturn.errors import ConfigError
from cypherturn.experiments import (
    DATASETS,
    TIERS,
    QerRunConfig,
    QerRunSummary,
)
from cypherturn.records import QerEpisode
from cypherturn.reports import ReportFormat, to_rich
from cypherturn.strategies import PROMPT_VERSION, strategy_names

__all__ = ["qer_app"]

qer_app = typer.Typer(
    name="qer",
    help="The RAS experiment: query execution error rate (QER) of IS vs RAS across datasets, tiers, runs.",
    no_args_is_help=True,
)


def _names(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        raise ConfigError(
            f"unknown {what} {', '.join(unknown) or '(none)'}; choose from {', '.join(allowed)}"
        )
    return names


def _strategies(text: str) -> list[str]:
    """Strategy names; ``ras+:check+values`` is ras+ with only those parts.

    The parts of a ras+ variant are joined with ``+`` on the command line, since
    commas separate strategies; the API checks each name and records the
    strategy's own (``ras+:check,values``, parts in their canonical order).

    Raises:
        ConfigError: no name.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ConfigError(f"no strategy given; choose from {', '.join(strategy_names())}")
    return [
        f"ras+:{n.removeprefix('ras+:').replace('+', ',')}" if n.startswith("ras+:") else n
        for n in names
    ]


@qer_app.command("run")
def run_command(
    ctx: typer.Context,
    out: QerOutOpt,
    datasets: QerDatasetsOpt = ALL_DATASETS,
    tiers: QerTiersOpt = ALL_TIERS,
    strategies: QerStrategiesOpt = "is,ras",
    budget: QerBudgetOpt = 5,
    runs: QerRunsOpt = 128,
    temperature: QerTemperatureOpt = 0.9,
    max_tokens: QerMaxTokensOpt = 512,
    model: ModelOptions = "default",
    base_url: BaseUrlOpt = None,
    n_ctx: ContextOpt = None,
    prompt: QerPromptOpt = PROMPT_VERSION,
    questions: QerQuestionsOpt = None,
    question_dir: QerQuestionDirOpt = None,
    seed: QerSeedOpt = 0,
    concurrency: QerConcurrencyOpt = 1,
    timeout: QerTimeoutOpt = None,
    row_cap: QerRowCapOpt = None,
    engine: EngineOpt = None,
) -> None:
    """Run (or resume) the experiment; then `cypherturn qer report OUT` renders Tables 3-4, Figure 3 and EX."""
    run = _qer_run(ctx.params)
    display = _QerDisplay(runs=runs)
    try:
        with stoppable():  # Ctrl-C 130, SIGTERM 143 within 2 s; the same command resumes
            summary = api.run_qer(
                run,
                status=console.status,
                on_start=display.start,
                on_episode=display.advance,
            )
    finally:
        display.progress.stop()
    _print_qer_summary(summary, out)
    if summary.infra_failures:
        raise typer.Exit(ExitCode.SESSIONS_LOST)


_EXPERIMENT_RENAMED = {
    "prompt": "prompt_version",
    "questions": "questions_per_tier",
    "timeout": "timeout_s",
}
"""Options of `qer run` whose :class:`~cypherturn.experiments.QerRunConfig` field has another name."""

_RUN_OPTIONS = ("out", "base_url", "n_ctx", "question_dir", "engine", "concurrency")
"""Options of `qer run` that configure the run (:class:`~cypherturn.api.QerRun`), not the experiment."""


def _qer_run(params: dict[str, Any]) -> api.QerRun:
    """The run of `qer run` from its parsed parameters (``typer.Context.params``).

    Every option not in :data:`_RUN_OPTIONS` is the experiment's field of its
    name (or of its :data:`_EXPERIMENT_RENAMED` name); datasets, tiers and
    strategies are split and checked.

    Raises:
        ConfigError: an unknown dataset or tier, no strategy, an option the model
            does not take.
    """
    experiment = {
        _EXPERIMENT_RENAMED.get(k, k): v for k, v in params.items() if k not in _RUN_OPTIONS
    }
    experiment.update(
        datasets=_names(params["datasets"], DATASETS, "dataset"),
        tiers=_names(params["tiers"], TIERS, "tier"),
        strategies=_strategies(params["strategies"]),
    )
    return api.QerRun(
        experiment=QerRunConfig(**experiment),
        out_dir=params["out"],
        model_options=model_options(params["model"], params["base_url"], params["n_ctx"]),
        question_dir=params["question_dir"],
        engine_url=params["engine"],
        concurrency=params["concurrency"],
    )


_QER_COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TextColumn("QER@n {task.fields[qer]}"),
    TimeElapsedColumn(),
    TimeRemainingColumn(),
)


class _QerDisplay:
    """The progress of `qer run`: episodes played and QER@n per strategy so far.

    The display starts when the run knows its plan (after the question sets and
    the model are loaded, under their own status lines).

    Args:
        runs: runs per configuration, for the description.
    """

    def __init__(self, runs: int) -> None:
        self.progress = Progress(*_QER_COLUMNS, console=console)
        self._task: TaskID = self.progress.add_task("episodes", total=None, qer="-")
        self._runs = runs
        self._failed: Counter[str] = Counter()
        self._strategies: list[str] = []

    def start(self, config: QerRunConfig, total: int, done: int) -> None:
        """The plan is known: ``total`` episodes, ``done`` of them from an earlier run."""
        self._strategies.extend(config.strategies)
        self.progress.start()
        self.progress.update(self._task, total=total, completed=done)

    def advance(self, episode: QerEpisode) -> None:
        """One episode was played."""
        failed = self._failed
        failed[episode.strategy + ("_fail" if episode.failed_by(episode.budget) else "")] += 1
        shown = ", ".join(
            f"{s.upper()} {failed[s + '_fail'] / (failed[s] + failed[s + '_fail']):.2f}"
            for s in self._strategies
            if failed[s] + failed[s + "_fail"]
        )
        self.progress.update(
            self._task,
            advance=1,
            qer=shown,
            description=f"{episode.dataset}/{episode.tier} run {episode.run_index + 1}/{self._runs}",
        )


def _print_qer_summary(summary: QerRunSummary, out: Path) -> None:
    """What the run did, and the episodes lost to infrastructure failures, if any."""
    console.print(
        f"{summary.ran} episodes played, {summary.skipped} already done, {summary.planned} planned "
        f"({summary.seconds:.1f} s); render the tables with: cypherturn qer report {out}",
        highlight=False,
    )
    if summary.infra_failures:
        console.print(
            f"[yellow]{len(summary.infra_failures)} episodes lost to infrastructure failures "
            f"(not scored, listed in {out / 'infra_failures.json'}); rerun the same command to "
            "play them[/]"
        )


@qer_app.command("questions")
def questions_command(
    datasets: Annotated[
        str, typer.Option("--datasets", help="Comma-separated datasets.")
    ] = ",".join(DATASETS),
    question_dir: Annotated[
        Path | None,
        typer.Option("--question-dir", help="Read sets from this folder (default: packaged)."),
    ] = None,
    validate: Annotated[
        bool,
        typer.Option("--validate", help="Check every question's values against the loaded graph."),
    ] = False,
    regenerate: Annotated[
        bool,
        typer.Option(
            "--regenerate", help="Rewrite the template questions from the graph (needs --out)."
        ),
    ] = False,
    generate: Annotated[
        bool,
        typer.Option(
            "--generate", help="Have --model write more questions per tier (needs --out)."
        ),
    ] = False,
    count: Annotated[
        int, typer.Option("--count", min=1, help="Model-written questions per tier.")
    ] = 5,
    model: ModelOptions = "default",
    base_url: BaseUrlOpt = None,
    n_ctx: ContextOpt = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder to write <dataset>.json sets into.")
    ] = None,
    engine: EngineOpt = None,
) -> None:
    """List, validate, regenerate (templates) or extend (model-written) the question sets."""
    config = api.QerQuestionsConfig(
        datasets=_names(datasets, DATASETS, "dataset"),
        question_dir=question_dir,
        validate_sets=validate,
        regenerate=regenerate,
        generate=generate,
        count=count,
        model=model,
        model_options=model_options(model, base_url, n_ctx) if generate else {},
        seed=seed,
        out=out,
        engine_url=engine,
    )
    result = api.qer_questions(config, status=console.status)
    sets, problems = result.sets, result.problems
    table = Table(title="question sets")
    for column in ("dataset", "tier", "paper", "template", "model", "total"):
        table.add_column(column, justify="left" if column in ("dataset", "tier") else "right")
    for dataset, qs in sets.items():
        for tier in TIERS:
            by_source = Counter(q.source for q in qs.tier(tier))
            table.add_row(
                dataset,
                tier,
                *(str(by_source[s]) for s in ("paper", "template", "model")),
                str(sum(by_source.values())),
            )
    console.print(table)
    if out is not None:
        console.print(f"wrote {', '.join(str(out / f'{d}.json') for d in sets)}", highlight=False)
    if validate:
        bad = {d: p for d, p in problems.items() if p}
        for dataset, found in bad.items():
            for problem in found:
                console.print(f"[red]{dataset}[/]: {problem}", highlight=False)
        if bad:
            raise typer.Exit(ExitCode.ERROR)
        console.print("every question set is valid on the loaded graphs")


@qer_app.command("report")
def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A `qer run` directory.")],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Output folder (default: RUN_DIR/report)."),
    ] = None,
    fmt: Annotated[
        ReportFormat, typer.Option("--format", "-f", help="File format of the written tables.")
    ] = ReportFormat.MD,
    qer_n: Annotated[
        int, typer.Option("--qer-n", min=1, help="Scaled budget n of the QER tables.")
    ] = 5,
    question_dir: Annotated[
        Path | None,
        typer.Option(
            "--question-dir", help="Folder with the run's <dataset>.json sets (default: packaged)."
        ),
    ] = None,
    engine: EngineOpt = None,
) -> None:
    """Tables 3-4 and Figure 3 with, per configuration, EX of the final query and QER vs Q@1.

    The final queries' rows are read from RUN_DIR/transcripts.jsonl and compared with
    each question's gold, executed now on the dataset's graph (loaded on first use).
    """
    result = api.qer_report(
        api.QerReportConfig(
            run_dir=run_dir,
            out=out,
            fmt=fmt,
            qer_n=qer_n,
            question_dir=question_dir,
            engine_url=engine,
        ),
        status=console.status,
    )
    report, answers, written = result.report, result.answers, result.written
    for table in report.tables:
        if table.name in ("qer", "qer_answers_datasets", "qer_answers"):
            console.print(to_rich(table, width=console.width))
    if answers.missing_transcripts:
        console.print(
            f"[yellow]{answers.missing_transcripts} episode(s) have no transcript: not scored[/]"
        )
    plots = len(written) - 1
    console.print(
        f"golds {answers.gold_version}; wrote {written[0]}"
        + (f" and {plots} plot(s)" if plots else ""),
        highlight=False,
    )

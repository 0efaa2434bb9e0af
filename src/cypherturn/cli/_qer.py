"""`cypherturn qer`: the RAS experiment (QER of IS vs RAS) and its question sets (RAS §4-§5)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

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
from cypherturn.cli._signals import stoppable
from cypherturn.errors import ConfigError
from cypherturn.experiments import (
    DATASETS,
    TIERS,
    QerRunConfig,
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
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Run directory (resumed when it exists).")
    ],
    datasets: Annotated[
        str, typer.Option("--datasets", help="Comma-separated: healthcare, crime, fraud.")
    ] = ",".join(DATASETS),
    tiers: Annotated[
        str, typer.Option("--tiers", help="Comma-separated: easy, medium, hard.")
    ] = ",".join(TIERS),
    strategies: Annotated[
        str,
        typer.Option(
            "--strategies",
            help="Comma-separated: is, ras, ras+ (grounded RAS), single, or ras+:<part>+<part>.",
        ),
    ] = "is,ras",
    budget: Annotated[
        int, typer.Option("-n", "--budget", min=1, help="Budget n (RAS §4.7: 5).")
    ] = 5,
    runs: Annotated[
        int,
        typer.Option(
            "--runs", "-r", min=1, help="Independent runs per configuration (paper: 128)."
        ),
    ] = 128,
    temperature: Annotated[
        float,
        typer.Option("--temperature", "-t", min=0.0, help="Sampling temperature (paper: 0.9)."),
    ] = 0.9,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Most tokens per attempt.")
    ] = 512,
    model: ModelOptions = "default",
    base_url: BaseUrlOpt = None,
    n_ctx: ContextOpt = None,
    prompt: Annotated[
        str,
        typer.Option(
            "--prompt",
            help="Prompt version: v1 (the paper's zero-shot GraphCypherQAChain prompt) or v2 (few-shot).",
        ),
    ] = PROMPT_VERSION,
    questions: Annotated[
        int | None,
        typer.Option(
            "--questions", "-q", min=1, help="Questions per dataset and tier (default: all)."
        ),
    ] = None,
    question_dir: Annotated[
        Path | None,
        typer.Option(
            "--question-dir", help="Folder with <dataset>.json question sets (default: packaged)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Experiment seed.")] = 0,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency",
            "-j",
            min=1,
            help="Worker threads (useful for openai: endpoints; GGUF is serialised).",
        ),
    ] = 1,
    timeout: Annotated[
        float | None, typer.Option("--timeout", min=0.001, help="Per-query timeout, seconds.")
    ] = None,
    row_cap: Annotated[
        int | None, typer.Option("--row-cap", min=1, help="Rows kept per query.")
    ] = None,
    engine: EngineOpt = None,
) -> None:
    """Run (or resume) the experiment; then `cypherturn qer report OUT` renders Tables 3-4, Figure 3 and EX."""
    run = api.QerRun(
        experiment=QerRunConfig(
            datasets=_names(datasets, DATASETS, "dataset"),
            tiers=_names(tiers, TIERS, "tier"),
            strategies=_strategies(strategies),
            model=model,
            budget=budget,
            runs=runs,
            temperature=temperature,
            max_tokens=max_tokens,
            prompt_version=prompt,
            seed=seed,
            questions_per_tier=questions,
            timeout_s=timeout,
            row_cap=row_cap,
        ),
        out_dir=out,
        model_options=model_options(model, base_url, n_ctx),
        question_dir=question_dir,
        engine_url=engine,
        concurrency=concurrency,
    )
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("QER@n {task.fields[qer]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    failed: Counter[str] = Counter()
    progress = Progress(*columns, console=console)
    task: TaskID = progress.add_task("episodes", total=None, qer="-")
    shown_strategies: list[str] = []

    def start(config: QerRunConfig, total: int, done: int) -> None:
        shown_strategies.extend(config.strategies)
        progress.start()
        progress.update(task, total=total, completed=done)

    def advance(episode: QerEpisode) -> None:
        failed[episode.strategy + ("_fail" if episode.failed_by(episode.budget) else "")] += 1
        shown = ", ".join(
            f"{s.upper()} {failed[s + '_fail'] / (failed[s] + failed[s + '_fail']):.2f}"
            for s in shown_strategies
            if failed[s] + failed[s + "_fail"]
        )
        progress.update(
            task,
            advance=1,
            qer=shown,
            description=f"{episode.dataset}/{episode.tier} run {episode.run_index + 1}/{runs}",
        )

    try:
        with stoppable():  # Ctrl-C 130, SIGTERM 143 within 2 s; the same command resumes
            summary = api.run_qer(run, status=console.status, on_start=start, on_episode=advance)
    finally:
        progress.stop()
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
        raise typer.Exit(ExitCode.SESSIONS_LOST)


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

"""`cypherturn qer`: the RAS experiment (QER of IS vs RAS) and its question sets (RAS §4-§5)."""

from __future__ import annotations

from collections import Counter
from contextlib import ExitStack
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
from cypherturn.cli._options import EngineOpt, ModelOptions, model_options
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.experiments import (
    DATASETS,
    TIERS,
    QerRunConfig,
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
from cypherturn.metrics import QerEpisode, read_run
from cypherturn.models import load_model
from cypherturn.reports import ReportFormat, build_report, to_rich, write_report
from cypherturn.strategies import PROMPT_VERSION, get_strategy, strategy_names

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
    """Strategy names, each checked; ``ras+:check+values`` is ras+ with only those parts.

    The parts of a ras+ variant are joined with ``+`` on the command line, since
    commas separate strategies; the name kept is the strategy's own
    (``ras+:check,values``, parts in their canonical order).

    Raises:
        ConfigError: no name, or a name :func:`get_strategy` does not know.
    """
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise ConfigError(f"no strategy given; choose from {', '.join(strategy_names())}")
    # The strategy's own name, which episodes record: resuming matches episodes by it.
    return [
        get_strategy(
            f"ras+:{n.removeprefix('ras+:').replace('+', ',')}" if n.startswith("ras+:") else n
        ).name
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
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Base URL of an OpenAI-compatible endpoint.")
    ] = None,
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
    chosen = _names(datasets, DATASETS, "dataset")
    sets = {d: load_question_set(d, question_dir) for d in chosen}
    chat_model = load_model(model, **model_options(model, base_url))
    config = QerRunConfig(
        datasets=chosen,
        tiers=_names(tiers, TIERS, "tier"),
        strategies=_strategies(strategies),
        model=chat_model.spec,
        budget=budget,
        runs=runs,
        temperature=temperature,
        max_tokens=max_tokens,
        prompt_version=prompt,
        seed=seed,
        questions_per_tier=questions,
        timeout_s=timeout,
        row_cap=row_cap,
        question_sets={d: question_set_digest(qs) for d, qs in sets.items()},
    )
    with ExitStack() as stack:
        engines: dict[str, GraphEngine] = {}
        with console.status("Opening (and on first use loading) the graphs ..."):
            for dataset in chosen:
                engines[dataset] = stack.enter_context(
                    api.connect(dataset_graph(dataset), engine_url=engine)
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
        with Progress(*columns, console=console) as progress:
            task: TaskID = progress.add_task("episodes", total=None, qer="-")

            def start(total: int, done: int) -> None:
                progress.update(task, total=total, completed=done)

            def advance(episode: QerEpisode) -> None:
                failed[
                    episode.strategy + ("_fail" if episode.failed_by(episode.budget) else "")
                ] += 1
                shown = ", ".join(
                    f"{s.upper()} {failed[s + '_fail'] / (failed[s] + failed[s + '_fail']):.2f}"
                    for s in config.strategies
                    if failed[s] + failed[s + "_fail"]
                )
                progress.update(
                    task,
                    advance=1,
                    qer=shown,
                    description=f"{episode.dataset}/{episode.tier} run {episode.run_index + 1}/{runs}",
                )

            summary = run_qer_experiment(
                config,
                chat_model,
                engines,
                sets,
                out,
                concurrency=concurrency,
                on_start=start,
                on_episode=advance,
            )
    console.print(
        f"{summary.ran} episodes played, {summary.skipped} already done, {summary.planned} planned "
        f"({summary.seconds:.1f} s); render the tables with: cypherturn qer report {out}",
        highlight=False,
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
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Base URL of an OpenAI-compatible endpoint.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Folder to write <dataset>.json sets into.")
    ] = None,
    engine: EngineOpt = None,
) -> None:
    """List, validate, regenerate (templates) or extend (model-written) the question sets."""
    chosen = _names(datasets, DATASETS, "dataset")
    if (regenerate or generate) and out is None:
        raise ConfigError("--regenerate and --generate write new sets: give --out DIR")
    sets: dict[str, QuestionSet] = {}
    problems: dict[str, list[str]] = {}
    for dataset in chosen:
        qs = None if regenerate else load_question_set(dataset, question_dir)
        if regenerate or generate or validate:
            with api.connect(dataset_graph(dataset), engine_url=engine) as target:
                if qs is None:
                    qs = generate_question_set(dataset, target, seed=seed)
                if generate:
                    chat_model = load_model(model, **model_options(model, base_url))
                    with console.status(f"{model} is writing {dataset} questions ..."):
                        qs = generate_model_questions(
                            qs, chat_model, target, count=count, seed=seed
                        )
                if validate:
                    problems[dataset] = validate_question_set(qs, target)
        if qs is None:
            raise DatasetError(f"no question set for {dataset}")
        sets[dataset] = qs
        if out is not None:
            write_question_set(out / f"{dataset}.json", qs)
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
    config = read_qer_config(run_dir)
    sets = {d: load_question_set(d, question_dir) for d in config.datasets}
    run = read_run(run_dir)
    with ExitStack() as stack:
        engines: dict[str, GraphEngine] = {}
        with console.status("Opening (and on first use loading) the graphs ..."):
            for dataset in config.datasets:
                engines[dataset] = stack.enter_context(
                    api.connect(dataset_graph(dataset), engine_url=engine)
                )
        with console.status("Scoring the final queries against the golds ..."):
            answers = score_qer_answers(run_dir, engines, sets)
    report = build_report([run], qer_n=qer_n, qer_answers=answers)
    written = write_report(report, out if out is not None else run_dir / "report", fmt)
    for table in report.tables:
        if table.name in ("qer", "qer_answers_datasets", "qer_answers"):
            console.print(to_rich(table))
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

"""`cypherturn bench ask` and `bench ask-import`: single-question accuracy on any question set."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from cypherturn import api
from cypherturn.cli._app import console
from cypherturn.cli._bench import bench_app
from cypherturn.cli._exit import ExitCode
from cypherturn.cli._options import BaseUrlOpt, ContextOpt, EngineOpt, model_options
from cypherturn.cli._signals import stoppable
from cypherturn.errors import ConfigError
from cypherturn.experiments import reason_counts
from cypherturn.graph import DEFAULT_ROW_CAP
from cypherturn.memory import DEFAULT_RECALL
from cypherturn.records import AskAnswer, DataSplit, GoldCheck
from cypherturn.reports import ask_tables, to_rich

__all__ = ["ask_command", "ask_import_command"]


def _names(text: str, what: str) -> list[str]:
    """Comma-separated names; ``ras+:a,b`` keeps its commas when ``;`` separates strategies."""
    separator = ";" if ";" in text else ","
    names = [n.strip() for n in text.split(separator) if n.strip()]
    if not names:
        raise ConfigError(f"no {what} given")
    return list(dict.fromkeys(names))


def _golds_line(checks: list[GoldCheck]) -> str:
    counts = reason_counts(checks)
    reasons = ", ".join(
        f"{name} {n}"
        for name, n in counts.items()
        if n and name not in ("kept", "repaired", "excluded")
    )
    return (
        f"golds: {counts['kept']} kept, {counts['repaired']} repaired, "
        f"{counts['excluded']} excluded" + (f" ({reasons})" if reasons else "")
    )


_MemoryOpt = Annotated[
    str | None,
    typer.Option(
        "--memory",
        help="A question set (name or file) whose usable golds are the memory of verified "
        "questions: each question is shown the --recall nearest of its graph, never its "
        "own (leave-one-out).",
    ),
]
_RecallOpt = Annotated[
    int, typer.Option("--recall", min=1, max=20, help="Pairs shown per question with --memory.")
]


@bench_app.command("ask")
def ask_command(
    ctx: typer.Context,
    ask_set: Annotated[
        str,
        typer.Argument(
            help="ask-dev | ask-test (packaged sets) or a JSONL/YAML file of question, gold, graph."
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (resumed if it exists).")],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="Model spec(s), comma-separated: default, qwen2.5-coder-1.5b, gguf:PATH, openai:NAME.",
        ),
    ] = "default",
    strategy: Annotated[
        str,
        typer.Option(
            "--strategy",
            "-s",
            help="Strategies, comma-separated (single, is, ras, ras+); use ';' between "
            "strategies that hold commas (ras+:check,values).",
        ),
    ] = "ras+",
    budget: Annotated[int, typer.Option("-n", "--budget", min=1, help="Attempts T.")] = 5,
    temperature: Annotated[
        float, typer.Option("--temperature", "-t", min=0.0, help="Sampling temperature.")
    ] = 0.9,
    seed: Annotated[int, typer.Option("--seed", help="Base sampling seed.")] = 0,
    prompt: Annotated[
        str | None,
        typer.Option("--prompt", help="v1 (the RAS paper's zero-shot prompt) or v2 (default)."),
    ] = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Most tokens per attempt.")
    ] = 512,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=0.001, help="Timeout of a generated query, seconds."),
    ] = api.BENCH_TIMEOUT_S,
    gold_timeout: Annotated[
        float,
        typer.Option(
            "--gold-timeout",
            min=0.001,
            help="Timeout of a gold, seconds, when the set's labels are made or checked.",
        ),
    ] = api.GOLD_TIMEOUT_S,
    row_cap: Annotated[
        int, typer.Option("--row-cap", min=1, help="Rows kept per query.")
    ] = DEFAULT_ROW_CAP,
    graph: Annotated[
        str | None, typer.Option("--graph", "-g", help="Graph of lines that name none.")
    ] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Only the first N questions.")
    ] = None,
    memory: _MemoryOpt = None,
    recall: _RecallOpt = DEFAULT_RECALL,
    engine: EngineOpt = None,
    base_url: BaseUrlOpt = None,
    n_ctx: ContextOpt = None,
) -> None:
    """Ask every question of a set and score it: executable, strict and relaxed EX with 95% CIs.

    Every gold is first re-executed on the engine and labelled kept, repaired or
    excluded (the report counts them). Answers are appended as they finish; the same
    command resumes a killed run. `cypherturn report OUT` and `cypherturn view OUT`
    read the run directory.
    """
    config = _ask_bench_config(ctx.params)
    with Progress(*_ASK_COLUMNS, console=console, transient=True) as progress:
        display = _AskDisplay(progress)
        with stoppable():  # Ctrl-C 130, SIGTERM 143 within 2 s; the same command resumes
            result = api.run_ask_bench(
                config,
                status=console.status,
                on_check=display.checked,
                on_start=display.start,
                on_answer=display.answered,
            )
    _print_ask_result(result, out)
    if result.summary.failures:
        raise typer.Exit(ExitCode.SESSIONS_LOST)


_RENAMED = {
    "out": "out_dir",
    "prompt": "prompt_version",
    "timeout": "timeout_s",
    "gold_timeout": "gold_timeout_s",
    "engine": "engine_url",
}
"""Options of `bench ask` whose :class:`~cypherturn.api.AskBenchConfig` field has another name."""


def _ask_bench_config(params: dict[str, Any]) -> api.AskBenchConfig:
    """The configuration of `bench ask` from its parsed parameters (``typer.Context.params``).

    Each parameter is the field of its name (or of its :data:`_RENAMED` name);
    ``--model`` and ``--strategy`` are split into lists, and ``--base-url``
    makes every model's ``model_options``.

    Raises:
        ConfigError: no model or no strategy named, or an option a model does not take.
    """
    models = _names(params["model"], "model")
    options: dict[str, Any] = {}
    for spec in models:
        options.update(model_options(spec, params["base_url"], None))
        if params["n_ctx"] is not None:
            model_options(spec, None, params["n_ctx"])  # refuses --n-ctx for a remote model
    fields = {
        _RENAMED.get(k, k): v
        for k, v in params.items()
        if k not in ("model", "strategy", "base_url")
    }
    return api.AskBenchConfig(
        **fields,
        models=models,
        model_options=options,
        strategies=_names(params["strategy"], "strategy"),
    )


_ASK_COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TextColumn("{task.fields[stats]}"),
    TimeElapsedColumn(),
    TimeRemainingColumn(),
)


class _AskDisplay:
    """The progress of `bench ask`: golds checked, then answers with exec, EX and rEX so far.

    Args:
        progress: where it shows (a task for the golds, then one for the answers).
    """

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tally: Counter[str] = Counter()
        self._checking = progress.add_task("golds", total=None, stats="")
        self._asking = progress.add_task("answers", total=None, stats="", visible=False)

    def checked(self, check: GoldCheck) -> None:
        """One gold was re-executed and labelled."""
        tally = self.tally
        tally[check.status.value] += 1
        self.progress.update(
            self._checking,
            advance=1,
            stats=f"{tally['kept']} kept, {tally['repaired']} repaired, "
            f"{tally['excluded']} excluded",
        )

    def start(self, planned: int, done: int) -> None:
        """The golds are checked: ``planned`` answers, ``done`` of them from an earlier run."""
        self.progress.update(self._checking, visible=False)
        self.progress.update(self._asking, total=planned, completed=done, visible=True)

    def answered(self, answer: AskAnswer) -> None:
        """One question was answered and scored."""
        tally = self.tally
        tally["n"] += 1
        tally["ex"] += answer.ex
        tally["rex"] += answer.ex_relaxed
        tally["exec"] += int(answer.executable)
        n = tally["n"]
        self.progress.update(
            self._asking,
            advance=1,
            description=f"{answer.strategy} {answer.question_id}",
            stats=f"exec {tally['exec'] / n:.2f} EX {tally['ex'] / n:.2f} "
            f"rEX {tally['rex'] / n:.2f} ({answer.seconds:.1f} s)",
        )


def _print_ask_result(result: api.AskBenchResult, out: Path) -> None:
    """The golds' labels, the accuracy table, what ran, and the questions lost, if any."""
    summary = result.summary
    console.print(_golds_line(result.golds), highlight=False)
    if result.ask_set.split is DataSplit.TEST:
        console.print(
            "[yellow]this is a frozen TEST split: run it only to confirm a decision made on "
            "development data, and log the look (docs/results/test-looks.md)[/]"
        )
    if result.answers:
        console.print(
            to_rich(ask_tables(result.answers, n_resamples=1_000)[0], width=console.width)
        )
    console.print(
        f"{summary.ran} answered, {summary.skipped} already done, {summary.planned} planned "
        f"({summary.seconds:.1f} s) → {out}; tables and plots: cypherturn report {out}",
        highlight=False,
    )
    if summary.failures:
        console.print(
            f"[yellow]{len(summary.failures)} questions lost to infrastructure failures "
            "(not scored); rerun the same command to ask them[/]"
        )


@bench_app.command("ask-import")
def ask_import_command(
    source: Annotated[
        str, typer.Argument(help="A JSONL/YAML question set (or ask-dev / ask-test).")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Labelled JSONL to write (every question).")
    ],
    graph: Annotated[
        str | None, typer.Option("--graph", "-g", help="Graph of lines that name none.")
    ] = None,
    split: Annotated[
        DataSplit | None,
        typer.Option("--split", help="Data split to declare in the written file."),
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample", min=1, help="Also write a stratified sample of N usable questions."
        ),
    ] = None,
    sample_out: Annotated[
        Path | None, typer.Option("--sample-out", help="Where the sample goes.")
    ] = None,
    sample_seed: Annotated[int, typer.Option("--sample-seed", help="The sample's seed.")] = 0,
    sample_split: Annotated[
        DataSplit | None, typer.Option("--sample-split", help="Data split of the sample.")
    ] = None,
    exclude: Annotated[
        Path | None,
        typer.Option("--exclude", help="A question file whose ids the sample must not draw."),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.001, help="Per-gold timeout, seconds.")
    ] = api.GOLD_TIMEOUT_S,
    engine: EngineOpt = None,
) -> None:
    """Re-execute every gold on the engine and write the set with each gold's label.

    A gold is kept, repaired with the same meaning in FalkorDB's dialect (and
    marked), or excluded with its reason; `bench ask` on the written file checks
    that the engine still gives the same labels and answers.
    """
    config = api.AskImportConfig(
        source=source,
        out=out,
        graph=graph,
        engine_url=engine,
        split=split,
        sample=sample,
        sample_out=sample_out,
        sample_seed=sample_seed,
        sample_split=sample_split,
        exclude=exclude,
        timeout_s=timeout,
    )
    with Progress(
        *(TextColumn("{task.description}"), MofNCompleteColumn()), console=console, transient=True
    ) as progress:
        task = progress.add_task("golds", total=None)
        result = api.import_ask_set(config, on_check=lambda check: progress.update(task, advance=1))
    checks = [item.check for item in result.items if item.check is not None]
    console.print(_golds_line(checks), highlight=False)
    console.print(
        f"wrote {out}"
        + (f" and {sample_out} ({len(result.sample)} questions)" if result.sample else "")
    )

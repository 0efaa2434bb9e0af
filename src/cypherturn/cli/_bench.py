"""`cypherturn bench`: build, inspect and import the CypherTurn benchmark (CypherTurn §2).

The lead attaches ``bench_app`` to the root app (``app.add_typer(bench_app)``);
later command modules add their commands (``bench run``) to the same sub-app.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated

import typer
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table

from cypherturn import api
from cypherturn.cli._app import console
from cypherturn.cli._bench_run_options import (
    ActionFormatOpt,
    ActionGrammarOpt,
    BudgetMultiplierOpt,
    ChainNoteOpt,
    ConcurrencyOpt,
    DecodingGuardsOpt,
    FramingOpt,
    GroundingOpt,
    LastActionNoteOpt,
    MaxTokensOpt,
    OutputNoteOpt,
    ProtocolOpt,
    QueryMemoryOpt,
    ReleaseOpt,
    RepeatGuardOpt,
    RunTemperatureOpt,
    SchemaFirstOpt,
    ScoreOpt,
    SeedOpt,
    SessionsOpt,
    SimModelOpt,
    VariantOpt,
    bench_run_config,
)
from cypherturn.cli._exit import ExitCode
from cypherturn.cli._options import BaseUrlOpt, ContextOpt, EngineOpt, ModelOptions
from cypherturn.cli._signals import stoppable
from cypherturn.records import TurnRecord, TurnScore
from cypherturn.runner import RunSummary, SessionResult, SessionStatus
from cypherturn.sessions import (
    DEFAULT_SESSIONS,
    DEFAULT_WORLDS,
    BenchmarkStats,
    FileReport,
    Session,
)

__all__ = ["bench_app"]

bench_app = typer.Typer(
    name="bench",
    help="The CypherTurn benchmark: build it from the seven worlds, inspect it, import the official release.",
    no_args_is_help=True,
)

_SHOWN_ROWS = 10
_COLUMNS = (
    TextColumn("{task.description}"),
    BarColumn(),
    MofNCompleteColumn(),
    TimeElapsedColumn(),
)


@bench_app.command("build")
def build_command(
    seed: Annotated[
        int, typer.Option("--seed", help="Build seed; same seed, byte-identical file.")
    ] = 0,
    worlds: Annotated[
        str,
        typer.Option(
            "--worlds", help="Comma-separated worlds (default: the seven CypherTurn worlds)."
        ),
    ] = ",".join(DEFAULT_WORLDS),
    sessions: Annotated[
        int, typer.Option("--sessions", "-n", min=1, help="Number of sessions (paper: 721).")
    ] = DEFAULT_SESSIONS,
    turns: Annotated[
        int | None,
        typer.Option("--turns", help="Total turns (default: 5,927 scaled to --sessions)."),
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file to write.")] = Path(
        "cypherturn-bench.jsonl"
    ),
    engine: EngineOpt = None,
    graph_seed: Annotated[
        int, typer.Option("--graph-seed", help="Seed the worlds are built with.")
    ] = 0,
    scale: Annotated[float, typer.Option("--scale", help="World size multiplier.")] = 1.0,
    rewrite: Annotated[
        str | None,
        typer.Option(
            "--rewrite",
            help="Rewrite utterances with this model (gguf:PATH, openai:NAME...); off by default.",
        ),
    ] = None,
) -> None:
    """Generate the benchmark: every gold executed and audited on the engine, then written as JSONL."""
    config = api.BenchBuildConfig(
        seed=seed,
        worlds=[w.strip() for w in worlds.split(",") if w.strip()],
        sessions=sessions,
        turns=turns,
        out=out,
        engine_url=engine,
        graph_seed=graph_seed,
        scale=scale,
        rewrite=rewrite,
    )
    with Progress(*_COLUMNS, console=console, transient=True) as progress:
        task = progress.add_task("building sessions", total=None)

        def start(total: int) -> None:
            progress.update(task, total=total)

        def advance(session: Session) -> None:
            progress.update(task, advance=1, description=f"{session.world}")

        result = api.build_benchmark(
            config, on_start=start, on_session=advance, status=_stopping(progress)
        )
    _print_stats(result.stats)
    rejected = ", ".join(
        f"{k} {v}" for k, v in result.report.rejections.most_common() if k != "does_not_fit"
    )
    built = result.sessions
    console.print(
        f"{len(built)} sessions, {sum(len(s.turns) for s in built)} turns written to {out} "
        f"in {result.seconds:.1f} s ({result.report.queries:,} queries executed; "
        f"candidates rejected by audits: {rejected or 'none'})",
        highlight=False,
    )
    divergent = ", ".join(f"{k} {v}" for k, v in result.report.divergence.items())
    console.print(f"written golds per engine-divergence class: {divergent}", highlight=False)


def _stopping(progress: Progress) -> Callable[[str], AbstractContextManager[object]]:
    """A status that ends ``progress`` first, so the spinner never shares the screen with it."""

    def status(message: str) -> AbstractContextManager[object]:
        progress.stop()
        return console.status(message)

    return status


@bench_app.command("stats")
def stats_command(
    path: Annotated[Path, typer.Argument(help="A benchmark JSONL file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Show the distributions: sessions and turns per world, phenomenon, chain mode and persona."""
    stats = api.bench_stats(path)
    if as_json:
        console.print_json(stats.model_dump_json())
    else:
        _print_stats(stats)


@bench_app.command("show")
def show_command(
    path: Annotated[Path, typer.Argument(help="A benchmark JSONL file.")],
    session_id: Annotated[str, typer.Argument(help="The session to show.")],
) -> None:
    """Pretty-print one session: utterances, phenomena, chain modes, gold queries and results."""
    found = api.bench_session(path, session_id)
    console.print(
        f"[bold]{found.session_id}[/]  world [cyan]{found.world}[/]  persona [cyan]{found.persona.value}[/]  "
        f"{len(found.turns)} turns ({found.source})"
    )
    for turn in found.turns:
        tags = ", ".join(p.value for p in turn.phenomena) or "first turn"
        depends = f" <- turn {turn.depends_on}" if turn.depends_on is not None else ""
        body = Table.grid(padding=(0, 1))
        body.add_row("[bold]user[/]", turn.utterance)
        if turn.rewrite is not None:
            body.add_row("[dim]template[/]", f"[dim]{turn.rewrite.original_utterance}[/]")
        body.add_row(
            "[bold]gold[/]", Syntax(turn.gold_cypher, "cypher", theme="ansi_dark", word_wrap=True)
        )
        body.add_row(
            "[bold]result[/]", _result_table(turn.gold_result.columns, turn.gold_result.rows)
        )
        if turn.ambiguity_info is not None:
            body.add_row(
                "[bold]ask_user[/]",
                f"{turn.ambiguity_info.simulator_reply} ({turn.ambiguity_info.kind.value})",
            )
        if turn.reference_description:
            body.add_row("[bold]refers to[/]", turn.reference_description)
        title = f"turn {turn.turn_index} · {tags} · {turn.chain_mode.value}{depends}"
        console.print(Panel(body, title=title, title_align="left"))


@bench_app.command("import")
def import_command(
    paths: Annotated[list[Path], typer.Argument(help="Official <graph>_sessions.json files.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file to write.")] = Path(
        "cypherturn-official.jsonl"
    ),
    release: Annotated[
        Path | None,
        typer.Option(
            "--release",
            help="Release root holding data/graphs/<graph>/ (default: inferred from PATH).",
        ),
    ] = None,
    engine: EngineOpt = None,
    check: Annotated[
        bool, typer.Option("--check/--no-check", help="Re-execute every gold on our engine.")
    ] = True,
    gold: Annotated[
        str,
        typer.Option(
            "--gold", help="Gold results to store: official (as released) or engine (re-executed)."
        ),
    ] = "official",
) -> None:
    """Convert official release files to our format; re-execute every gold and report reproduction."""
    config = api.BenchImportConfig(
        paths=paths, out=out, release_root=release, engine_url=engine, check=check, gold=gold
    )
    result = api.import_benchmark(config, status=console.status)
    if result.reports:
        console.print(_import_table(result.reports))
    console.print(
        f"{len(result.sessions)} sessions, {sum(len(s.turns) for s in result.sessions)} turns "
        f"written to {out}",
        highlight=False,
    )


def _result_table(columns: list[str], rows: list[list[object]]) -> Table:
    table = Table(*columns, show_edge=False, pad_edge=False)
    for row in rows[:_SHOWN_ROWS]:
        table.add_row(
            *(json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v for v in row)
        )
    if len(rows) > _SHOWN_ROWS:
        table.caption = f"{len(rows)} rows, first {_SHOWN_ROWS} shown"
    return table


def _tally_table(
    title: str, key: str, counts: dict[str, tuple[int, int] | int], unit: str = "turns"
) -> Table:
    table = Table(title=title)
    table.add_column(key)
    with_sessions = any(isinstance(v, tuple) for v in counts.values())
    if with_sessions:
        table.add_column("sessions", justify="right")
    table.add_column(unit, justify="right")
    for name, value in counts.items():
        if isinstance(value, tuple):
            table.add_row(name, f"{value[0]:,}", f"{value[1]:,}")
        else:
            table.add_row(name, *([""] if with_sessions else []), f"{value:,}")
    return table


def _print_stats(stats: BenchmarkStats) -> None:
    head = Table(title="benchmark")
    for column in (
        "sessions",
        "turns",
        "turns/session",
        "min",
        "max",
        "chain-dependent",
        "ambiguous",
    ):
        head.add_column(column, justify="right")
    head.add_row(
        f"{stats.sessions:,}",
        f"{stats.turns:,}",
        f"{stats.mean_turns:.2f}",
        str(stats.min_turns),
        str(stats.max_turns),
        f"{stats.chain_dependent_turns:,}",
        f"{stats.ambiguous_turns:,}",
    )
    console.print(head)
    console.print(
        _tally_table("worlds", "world", {k: (v.sessions, v.turns) for k, v in stats.worlds.items()})
    )
    console.print(
        _tally_table(
            "personas", "persona", {k: (v.sessions, v.turns) for k, v in stats.personas.items()}
        )
    )
    console.print(_tally_table("phenomena", "phenomenon", dict(stats.phenomena)))
    console.print(_tally_table("chain modes", "chain mode", dict(stats.chain_modes)))
    console.print(
        _tally_table("session lengths", "turns", {str(k): v for k, v in stats.lengths.items()})
    )


def _import_table(reports: list[FileReport]) -> Table:
    # short headers, folded names, and the reasons under the table: whole at 80 columns
    table = Table(title="official gold answers re-executed")
    table.add_column("file", overflow="fold")
    for column in ("sessions", "turns", "same", "non-det.", "differ", "errors"):
        table.add_column(column, justify="right")
    reasons = []
    for report in reports:
        name = Path(report.path).name
        table.add_row(
            name,
            str(report.sessions),
            str(report.turns),
            str(report.reproduced),
            str(report.nondeterministic),
            str(report.differs),
            str(report.errors),
        )
        top = "; ".join(f"{why} ({n})" for why, n in list(report.reasons.items())[:3])
        if top:
            reasons.append(f"{name}: {top}")
    table.caption = "\n".join(
        ["same: reproduced; non-det.: the answer depends on the engine (ties, dialect)"]
        + [f"why, top reasons: {line}" for line in reasons]
    )
    table.caption_justify = "left"
    return table


@bench_app.command("run")
def run_command(
    ctx: typer.Context,
    benchmark: Annotated[Path, typer.Argument(help="A benchmark JSONL file (bench build).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (resumed if it exists).")],
    model: ModelOptions = "default",
    protocol: ProtocolOpt = "guided",
    budget: BudgetMultiplierOpt = None,
    variant: VariantOpt = "base",
    sim_model: SimModelOpt = None,
    sessions: SessionsOpt = None,
    concurrency: ConcurrencyOpt = 1,
    engine: EngineOpt = None,
    base_url: BaseUrlOpt = None,
    n_ctx: ContextOpt = None,
    temperature: RunTemperatureOpt = 0.0,
    seed: SeedOpt = None,
    max_tokens: MaxTokensOpt = 512,
    score: ScoreOpt = True,
    release: ReleaseOpt = None,
    action_format: ActionFormatOpt = "text",
    grounding: GroundingOpt = "none",
    framing: FramingOpt = "paper",
    decoding_guards: DecodingGuardsOpt = False,
    output_note: OutputNoteOpt = False,
    chain_note: ChainNoteOpt = False,
    repeat_guard: RepeatGuardOpt = False,
    query_memory: QueryMemoryOpt = False,
    schema_first: SchemaFirstOpt = False,
    last_action_note: LastActionNoteOpt = False,
    action_grammar: ActionGrammarOpt = False,
) -> None:
    """Play the benchmark under a protocol, one action log per session; a killed run resumes.

    Resume is per turn: finished sessions are kept, an interrupted session continues
    from its first unfinished turn. Exits 4 (SESSIONS_LOST) when sessions were lost to infrastructure
    failures (their finished turns are kept for the next run); Ctrl-C exits 130 and
    SIGTERM 143 within 2 s, abandoning the model calls in flight.
    """
    config = bench_run_config(ctx.params)
    with Progress(*_RUN_COLUMNS, console=console, transient=True) as progress:
        display = _RunDisplay(progress)
        # Ctrl-C / SIGTERM: the model calls in flight are abandoned, and the run exits
        # 130 / 143 within 2 s; the same command resumes it at the first unfinished turn
        with stoppable():
            summary = api.run_benchmark(
                config,
                on_start=display.start,
                on_session=display.advance,
                on_scores=display.tally,
                on_turn=display.turn_played,
            )
    display.print_summary(summary, out, score=score)
    if summary.infra_failures:
        raise typer.Exit(ExitCode.SESSIONS_LOST)


_RUN_COLUMNS = (*_COLUMNS, TextColumn("{task.fields[stats]}"))


class _RunDisplay:
    """The progress of `bench run`: sessions and turns played, and EX, tokens and failures so far.

    Args:
        progress: where it shows: one task for sessions (with the stats), one for turns.
    """

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.totals = {"turns": 0, "ex": 0, "tokens": 0, "failed": 0}
        self._played: Counter[str] = Counter()
        self._sessions = progress.add_task("sessions", total=None, stats="")
        self._turns = progress.add_task("turns played", total=None, stats="")

    def start(self, plan: api.BenchPlan) -> None:
        """The run's plan is known: totals of sessions and turns."""
        if plan.release_ignored:
            console.print(
                "[yellow]--release is ignored: the selected sessions are generated ones, "
                "not imported from the official release[/]"
            )
        self.progress.update(self._sessions, total=len(plan.sessions))
        self.progress.update(self._turns, total=plan.turns)

    def turn_played(self, record: TurnRecord) -> None:
        """One turn was played."""
        self._played[record.session_id] += 1
        self.progress.update(self._turns, advance=1)

    def advance(self, result: SessionResult) -> None:
        """One session ended (played, resumed, or lost)."""
        self.totals["failed"] += int(result.status is SessionStatus.INFRA_FAILURE)
        self.totals["tokens"] += sum(r.output_tokens for r in result.records)
        self.progress.update(self._sessions, advance=1)
        # a completed session's turns read back from logs (finished earlier or kept
        # from an interrupted run) count as done too; a failed session has no
        # records, and the turns it played stay counted (they are kept for resume)
        if result.status is SessionStatus.COMPLETED:
            played = len(result.records) - self._played[result.session_id]
            self.progress.update(self._turns, advance=played)

    def tally(self, scores: list[TurnScore]) -> None:
        """A session was scored: EX so far over the valid turns."""
        totals = self.totals
        valid = [s for s in scores if s.valid]
        totals["turns"] += len(valid)
        totals["ex"] += sum(s.ex for s in valid)
        ex = totals["ex"] / totals["turns"] if totals["turns"] else 0.0
        stats = (
            f"EX {ex:.3f} over {totals['turns']} turns · {totals['tokens']:,} output tokens · "
            f"{totals['failed']} infra failures"
        )
        self.progress.update(self._sessions, stats=stats)

    def print_summary(self, summary: RunSummary, out: Path, *, score: bool) -> None:
        """What the run did, EX over its valid turns, and the sessions lost, if any."""
        totals = self.totals
        console.print(
            f"{summary.completed}/{summary.sessions} sessions completed "
            f"({summary.played} played, {summary.resumed} resumed, {summary.turns_kept} turns of "
            f"interrupted sessions kept), {summary.turns} turns in "
            f"{summary.wall_s:.1f} s → {out}",
            highlight=False,
        )
        if totals["turns"]:
            console.print(
                f"EX {totals['ex'] / totals['turns']:.3f} over {totals['turns']} valid turns"
            )
        if score and summary.turns:
            console.print(f"scored: cypherturn report {out}")
        if summary.infra_failures:
            console.print(
                f"[yellow]{len(summary.infra_failures)} sessions lost to infrastructure failures "
                f"(unscored, listed in {out / 'infra_failures.json'}); rerun the same command to "
                "retry them from their last finished turn[/]"
            )

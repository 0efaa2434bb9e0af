"""`cypherturn bench`: build, inspect and import the CypherTurn benchmark (CypherTurn §2).

The lead attaches ``bench_app`` to the root app (``app.add_typer(bench_app)``);
later command modules add their commands (``bench run``) to the same sub-app.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table

from cypherturn.api import official_graph_name
from cypherturn.cli._app import console
from cypherturn.cli._exit import ExitCode
from cypherturn.cli._options import EngineOpt, ModelOptions, model_options
from cypherturn.errors import ConfigError, DatasetError
from cypherturn.graph import GraphEngine, GraphSchema, open_engine
from cypherturn.sessions import (
    DEFAULT_SESSIONS,
    DEFAULT_WORLDS,
    BenchmarkStats,
    FileReport,
    Session,
    check_reproduction,
    compute_stats,
    plan_build,
    read_official,
    read_sessions,
    write_sessions,
)
from cypherturn.sessions import build_sessions as run_build
from cypherturn.worlds import get_world, load_official_graph, load_world

__all__ = ["bench_app"]

bench_app = typer.Typer(
    name="bench",
    help="The CypherTurn benchmark: build it from the seven worlds, inspect it, import the official release.",
    no_args_is_help=True,
)

_SHOWN_ROWS = 10


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
    names = [w.strip() for w in worlds.split(",") if w.strip()]
    if scale <= 0:
        raise ConfigError(f"--scale must be positive, got {scale}")
    plan = plan_build(seed=seed, worlds=names, sessions=sessions, turns=turns)
    worlds_by_name = {name: get_world(name) for name in names}
    engines: list[GraphEngine] = []

    def provider(name: str) -> tuple[GraphEngine, GraphSchema]:
        target = open_engine(engine, f"cypherturn_bench_{name}")
        engines.append(target)
        world = worlds_by_name[name]
        load_world(target, world, seed=graph_seed, scale=scale, replace=True)
        return target, world.declared_schema()

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    started = time.perf_counter()
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("building sessions", total=len(plan))

            def advance(session: Session) -> None:
                progress.update(task, advance=1, description=f"{session.world}")

            built, report = run_build(
                plan,
                provider,
                seed=seed,
                graph_seed=graph_seed,
                graph_scale=scale,
                on_session=advance,
            )
    finally:
        for target in engines:
            target.close()
    if rewrite is not None:
        from cypherturn.models import load_model
        from cypherturn.sessions import rewrite_sessions

        with console.status(f"rewriting utterances with {rewrite} ..."):
            built = rewrite_sessions(built, load_model(rewrite), seed=seed)
    write_sessions(out, built)
    elapsed = time.perf_counter() - started
    _print_stats(compute_stats(built))
    rejected = ", ".join(
        f"{k} {v}" for k, v in report.rejections.most_common() if k != "does_not_fit"
    )
    console.print(
        f"{len(built)} sessions, {sum(len(s.turns) for s in built)} turns written to {out} in {elapsed:.1f} s "
        f"({report.queries:,} queries executed; candidates rejected by audits: {rejected or 'none'})",
        highlight=False,
    )


@bench_app.command("stats")
def stats_command(
    path: Annotated[Path, typer.Argument(help="A benchmark JSONL file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Show the distributions: sessions and turns per world, phenomenon, chain mode and persona."""
    stats = compute_stats(read_sessions(path))
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
    found = next((s for s in read_sessions(path) if s.session_id == session_id), None)
    if found is None:
        raise DatasetError(f"{path} has no session {session_id!r}")
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
    if gold not in ("official", "engine"):
        raise ConfigError(f"--gold must be official or engine, not {gold!r}")
    if gold == "engine" and not check:
        raise ConfigError("--gold engine needs --check")
    converted: list[Session] = []
    reports: list[FileReport] = []
    engines: dict[str, GraphEngine] = {}
    try:
        for path in paths:
            sessions = read_official(path)
            if check:
                root = release if release is not None else _release_root(path)

                def engine_for(graph: str, root: Path = root) -> GraphEngine:
                    if graph not in engines:
                        engines[graph] = _official_engine(engine, root, graph)
                    return engines[graph]

                with console.status(f"re-executing {path.name} ..."):
                    reports.append(check_reproduction(path, sessions, engine_for))
                if gold == "engine":
                    sessions = [_with_engine_results(s, engines[s.world]) for s in sessions]
            converted.extend(sessions)
    finally:
        for target in engines.values():
            target.close()
    write_sessions(out, converted)
    if reports:
        console.print(_import_table(reports))
    console.print(
        f"{len(converted)} sessions, {sum(len(s.turns) for s in converted)} turns written to {out}",
        highlight=False,
    )


def _release_root(path: Path) -> Path:
    parent = path.resolve().parent
    if parent.name != "scenarios":
        raise ConfigError(f"cannot infer the release root from {path}; pass --release DIR")
    return parent.parent.parent


def _official_engine(url: str | None, root: Path, graph: str) -> GraphEngine:
    folder = root / "data" / "graphs" / graph
    target = open_engine(url, official_graph_name(graph))
    try:
        load_official_graph(
            target, folder / "data.cypher", folder / "schema.json", target.graph, replace=True
        )
    except Exception:
        target.close()
        raise
    return target


def _with_engine_results(session: Session, target: GraphEngine) -> Session:
    from cypherturn.sessions import GoldResult
    from cypherturn.sessions._format import canonical_rows

    turns = []
    for turn in session.turns:
        result = target.execute(turn.gold_cypher)
        rows = result.rows if turn.gold_result.ordered else canonical_rows(result.rows)
        stored = GoldResult(
            columns=list(result.columns), rows=rows, ordered=turn.gold_result.ordered
        )
        turns.append(turn.model_copy(update={"gold_result": stored}))
    return session.model_copy(update={"turns": turns})


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
    table = Table(title="official gold answers re-executed")
    table.add_column("file")
    for column in ("sessions", "turns", "reproduced", "differ", "errors"):
        table.add_column(column, justify="right")
    table.add_column("why (top reasons)")
    for report in reports:
        reasons = "; ".join(f"{why} ({n})" for why, n in list(report.reasons.items())[:3])
        table.add_row(
            Path(report.path).name,
            str(report.sessions),
            str(report.turns),
            str(report.reproduced),
            str(report.differs),
            str(report.errors),
            reasons or "-",
        )
    return table


@bench_app.command("run")
def run_command(
    benchmark: Annotated[Path, typer.Argument(help="A benchmark JSONL file (bench build).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Run directory (resumed if it exists).")],
    model: ModelOptions = "default",
    protocol: Annotated[
        str, typer.Option("--protocol", "-p", help="guided | agentic (CypherTurn §3.1).")
    ] = "guided",
    budget: Annotated[
        int | None,
        typer.Option("--budget", "-b", min=1, help="Agentic budget multiplier m: 3, 5 or 10."),
    ] = None,
    variant: Annotated[
        str,
        typer.Option(
            "--variant",
            help="base | persistent_schema | disclosed_horizon | budget_encouraging (agentic).",
        ),
    ] = "base",
    sim_model: Annotated[
        str | None,
        typer.Option("--sim-model", help="User simulator model (default: the evaluated model)."),
    ] = None,
    sessions: Annotated[
        str | None,
        typer.Option("--sessions", help="Comma-separated patterns over session ids and worlds."),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-c", min=1, help="Sessions played at once.")
    ] = 1,
    engine: EngineOpt = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Base URL of an OpenAI-compatible endpoint (openai:)."),
    ] = None,
    temperature: Annotated[
        float, typer.Option("--temperature", "-t", min=0.0, help="Sampling temperature.")
    ] = 0.0,
    seed: Annotated[int | None, typer.Option("--seed", help="Sampling seed.")] = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Completion cap per action, tokens.")
    ] = 512,
    score: Annotated[
        bool, typer.Option("--score/--no-score", help="Score the run when it is done.")
    ] = True,
    release: Annotated[
        Path | None,
        typer.Option(
            "--release",
            help="Official release root (holds data/graphs/), for imported official sessions.",
        ),
    ] = None,
    action_format: Annotated[
        str,
        typer.Option(
            "--action-format",
            help="text (one JSON action per reply) | tools (native tool calling; "
            "grammar-constrained on GGUF models).",
        ),
    ] = "text",
) -> None:
    """Play the benchmark under a protocol, one action log per session; a killed run resumes.

    Resume is per turn: finished sessions are kept, an interrupted session continues
    from its first unfinished turn. Exits 4 (SESSIONS_LOST) when sessions were lost to infrastructure
    failures (their finished turns are kept for the next run).
    """
    from cypherturn import api
    from cypherturn.metrics import TurnRecord, TurnScore
    from cypherturn.runner import SessionResult, SessionStatus, select_sessions

    chosen = select_sessions(read_sessions(benchmark), sessions)
    if release is not None and not any(s.source == "official" for s in chosen):
        console.print(
            "[yellow]--release is ignored: the selected sessions are generated ones, "
            "not imported from the official release[/]"
        )
    totals = {"turns": 0, "ex": 0, "tokens": 0, "failed": 0}
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[stats]}"),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("sessions", total=len(chosen), stats="")
        turns = progress.add_task("turns played", total=sum(len(s.turns) for s in chosen), stats="")

        played: Counter[str] = Counter()

        def turn_played(record: TurnRecord) -> None:
            played[record.session_id] += 1
            progress.update(turns, advance=1)

        def advance(result: SessionResult) -> None:
            totals["failed"] += int(result.status is SessionStatus.INFRA_FAILURE)
            totals["tokens"] += sum(r.output_tokens for r in result.records)
            progress.update(task, advance=1)
            # a completed session's turns read back from logs (finished earlier or kept
            # from an interrupted run) count as done too; a failed session has no
            # records, and the turns it played stay counted (they are kept for resume)
            if result.status is SessionStatus.COMPLETED:
                progress.update(turns, advance=len(result.records) - played[result.session_id])

        def tally(scores: list[TurnScore]) -> None:
            valid = [s for s in scores if s.valid]
            totals["turns"] += len(valid)
            totals["ex"] += sum(s.ex for s in valid)
            ex = totals["ex"] / totals["turns"] if totals["turns"] else 0.0
            stats = (
                f"EX {ex:.3f} over {totals['turns']} turns · {totals['tokens']:,} output tokens · "
                f"{totals['failed']} infra failures"
            )
            progress.update(task, stats=stats)

        summary = api.run_benchmark(
            chosen,
            out,
            model=model,
            protocol=protocol,
            budget=budget,
            variant=variant,
            sim_model=sim_model,
            concurrency=concurrency,
            engine_url=engine,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
            model_options=model_options(model, base_url),
            score=score,
            on_session=advance,
            on_scores=tally,
            action_format=action_format,
            on_turn=turn_played,
            release_root=release,
        )
    console.print(
        f"{summary.completed}/{summary.sessions} sessions completed "
        f"({summary.played} played, {summary.resumed} resumed, {summary.turns_kept} turns of "
        f"interrupted sessions kept), {summary.turns} turns in "
        f"{summary.wall_s:.1f} s → {out}",
        highlight=False,
    )
    if totals["turns"]:
        console.print(f"EX {totals['ex'] / totals['turns']:.3f} over {totals['turns']} valid turns")
    if score and summary.turns:
        console.print(f"scored: cypherturn report {out}")
    if summary.infra_failures:
        console.print(
            f"[yellow]{len(summary.infra_failures)} sessions lost to infrastructure failures "
            f"(unscored, listed in {out / 'infra_failures.json'}); rerun the same command to "
            "retry them from their last finished turn[/]"
        )
        raise typer.Exit(ExitCode.SESSIONS_LOST)

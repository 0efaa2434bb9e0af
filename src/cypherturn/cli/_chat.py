"""`cypherturn chat`: a terminal conversation over a graph, with follow-ups, answers and commands."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import typer
from rich.markup import escape
from rich.status import Status
from rich.syntax import Syntax

from cypherturn import api
from cypherturn.chat import ChatTurn, read_transcript
from cypherturn.cli._app import app, console
from cypherturn.cli._ask import (
    AnswerStream,
    attempt_panel,
    print_answer,
    result_table,
    rows_summary,
)
from cypherturn.cli._background import in_background
from cypherturn.cli._options import (
    BaseUrlOpt,
    BudgetOpt,
    ContextOpt,
    DataPathOpt,
    EngineOpt,
    MaxSecondsOpt,
    ModelOptions,
    RecallOpt,
    RowCapOpt,
    TemperatureOpt,
    TimeoutOpt,
    max_seconds,
    model_options,
)
from cypherturn.cli._signals import stoppable
from cypherturn.errors import ConfigError, CypherTurnError, RunInterrupted
from cypherturn.memory import DEFAULT_RECALL

__all__ = ["COMMANDS", "PROMPT", "chat"]

PROMPT = "you> "
"""The input prompt (tests wait for it)."""

COMMANDS = {
    "/cypher [N]": "the Cypher that ran for the last question (or turn N)",
    "/rows [N]": "its result rows",
    "/schema": "the graph's schema",
    "/explain [N]": "every attempt: checks, repairs, errors, votes",
    "/save PATH": "write the transcript to PATH as well",
    "/remember [N]": "keep the last question (or turn N) and its Cypher in the graph's memory "
    '(also "remember this"): later questions are shown the nearest remembered ones as examples',
    "/help": "this list",
    "/quit": "end the conversation (also Ctrl-D)",
}
"""The chat commands and what each shows."""


_REMEMBER_WORDS = frozenset({"remember this", "remember that", "remember it"})
"""Lines that mean ``/remember``: keep the last answer's question and Cypher."""


def _target(graph: str | None, engine: str | None) -> tuple[str | None, str | None]:
    """``(graph name, engine URL)`` from ``--graph`` (a name, or a URL ending in ``#GRAPH``)."""
    if graph is None or "://" not in graph:
        return graph, engine
    if engine is not None:
        raise ConfigError("give the engine either in --graph URL#GRAPH or in --engine, not both")
    name = urlsplit(graph).fragment
    if not name:
        raise ConfigError(f"--graph {graph!r} is a URL without a graph: end it with #GRAPH")
    return name, graph


def _new_transcript(out: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = out / f"chat-{stamp}.json"
    suffix = 1
    while path.exists():
        suffix += 1
        path = out / f"chat-{stamp}-{suffix}.json"
    return path


@app.command()
def chat(
    graph: str | None = typer.Option(
        None,
        "--graph",
        "-g",
        help="pole | healthcare | fraud | any world or loaded graph | an engine URL ending in "
        "#GRAPH (default: pole, or the resumed transcript's graph).",
    ),
    engine: EngineOpt = None,
    strategy: str = typer.Option(
        "ras+", "--strategy", "-s", help="The strategy of every turn, as in `cypherturn ask`."
    ),
    budget: BudgetOpt = 5,
    model: ModelOptions = "default",
    base_url: BaseUrlOpt = None,
    n_ctx: ContextOpt = None,
    temperature: TemperatureOpt = None,
    seed: int | None = typer.Option(None, "--seed", help="Base sampling seed."),
    timeout: TimeoutOpt = None,
    row_cap: RowCapOpt = None,
    path: DataPathOpt = None,
    prompt: str | None = typer.Option(None, "--prompt", help="Prompt version: v1 or v2 (default)."),
    no_answer: bool = typer.Option(
        False, "--no-answer", help="Show the rows instead of an answer in words."
    ),
    resume: Path | None = typer.Option(
        None,
        "--resume",
        help="Continue the conversation saved in this transcript (its turns are the context).",
    ),
    out: Path = typer.Option(
        Path("runs/chat"), "--out", help="Directory new transcripts are saved in."
    ),
    seconds: MaxSecondsOpt = api.DEFAULT_MAX_SECONDS,
    recall: RecallOpt = DEFAULT_RECALL,
) -> None:
    """Talk to a graph: each question becomes Cypher (ras+), runs read-only, and is answered in words.

    Follow-ups ("which of those ...", "and in 2020?") are resolved against the
    earlier turns' questions, queries and results. The transcript is saved
    after every turn; `--resume FILE` continues it. Each answer takes at most
    ``--max-seconds`` (60 s). /quit or Ctrl-D ends the conversation (exit 0);
    Ctrl-C, at the prompt or during a turn, exits 130 and SIGTERM 143, within
    2 s (a turn in progress is not recorded).
    """
    with stoppable():
        name, engine_url = _target(graph, engine)
        if resume is not None:
            name = name or read_transcript(resume).graph
        config = api.ChatConfig(
            graph=name or api.DEFAULT_GRAPH,
            engine_url=engine_url,
            strategy=strategy,
            budget=budget,
            model=model,
            model_options=model_options(model, base_url, n_ctx),
            temperature=temperature,
            seed=seed,
            timeout_s=timeout,
            row_cap=row_cap,
            data_path=path,
            prompt_version=prompt,
            answer=not no_answer,
            transcript=resume or _new_transcript(out),
            max_seconds=max_seconds(seconds),
            recall=recall,
        )
        _chat(config, resume)


def _chat(config: api.ChatConfig, resume: Path | None) -> None:
    """Open the session and converse (the body of :func:`chat`, under ``stoppable``)."""
    session = (
        api.ChatSession.resume(resume, config) if resume is not None else api.ChatSession(config)
    )
    with console.status(f"Opening graph {config.graph} and model {config.model}..."):
        session.open()
    # the prompt prefix is evaluated (or read from disk) while the user types
    warming = in_background(session.warm, "warming the prompt prefix")
    try:
        _converse(session)
    finally:
        warming.stop()
        session.close()


def _converse(session: api.ChatSession) -> None:
    config = session.config
    console.print(
        f"[bold]cypherturn chat[/] [dim]· graph {escape(config.graph)} · model "
        f"{escape(session.model.spec)} · {escape(config.strategy)}@{config.budget}"
        + (f" · {config.max_seconds:g} s an answer" if config.max_seconds is not None else "")
        + "[/]"
    )
    console.print(f"[dim]transcript {config.transcript} · /help lists the commands[/]")
    if session.turns:
        console.print(f"[dim]resumed {len(session.turns)} turns; the last ones are the context:[/]")
        for turn in session.turns[-3:]:
            console.print(f"[dim]  {turn.index}. {escape(turn.question)}[/]")
    try:
        while True:
            try:
                line = console.input(f"[bold cyan]{PROMPT}[/]").strip()
            except EOFError:
                console.print()
                break
            if not line:
                continue
            if line.lower().rstrip(" .!") in _REMEMBER_WORDS:
                line = "/remember"
            if line.startswith("/"):
                if not _command(session, line):
                    break
                continue
            try:
                _turn(session, line)
            except RunInterrupted:
                # a signal abandoned the turn's model call: the signal's own exit follows
                raise
            except CypherTurnError as e:
                console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, emoji=False)
    except (KeyboardInterrupt, SystemExit, RunInterrupted):
        # Ctrl-C (at the prompt or in a turn) and SIGTERM end the conversation with
        # their exit codes (130, 143), as every command; the finished turns are saved
        console.print()
        raise
    finally:
        console.print(f"[dim]transcript saved: {config.transcript}[/]")


def _turn(session: api.ChatSession, question: str) -> None:
    status = Status("Writing Cypher...", console=console)
    tokens = 0

    def cypher_token(piece: str) -> None:
        nonlocal tokens
        tokens += 1
        status.update(f"Writing Cypher... ({tokens} pieces)")

    stream = AnswerStream(console)

    def answer_token(piece: str) -> None:
        status.stop()
        stream(piece)

    status.start()
    try:
        turn = session.ask(question, on_token=cypher_token, on_answer_token=answer_token)
    finally:
        status.stop()
    _show(turn, streamed=stream.started)


def _show(turn: ChatTurn, *, streamed: bool) -> None:
    if turn.outcome == "out_of_scope":
        if streamed:
            console.out("")
        console.print(
            f"[yellow]this graph cannot answer that:[/] {escape(turn.reason or '')}",
            highlight=False,
        )
        if turn.strategy is not None:
            console.print("[dim]/explain shows the attempts[/]")
        return
    if turn.answer is not None:
        print_answer(turn.answer, streamed=streamed, out=console)
    elif turn.result is not None:
        console.print(result_table(turn.result))
    attempts = turn.strategy.attempts_used if turn.strategy is not None else 0
    summary = rows_summary(turn.result) if turn.result is not None else "no rows"
    console.print(
        f"[dim]{summary} · {attempts} attempt(s) · {turn.seconds:.1f} s · /cypher /rows /explain[/]"
    )


def _command(session: api.ChatSession, line: str) -> bool:
    """Run one slash command; False ends the conversation."""
    name, _, argument = line.partition(" ")
    argument = argument.strip()
    handlers: dict[str, Callable[[api.ChatSession, str], None]] = {
        "/cypher": _show_cypher,
        "/rows": _show_rows,
        "/explain": _show_explain,
        "/schema": lambda s, _: console.print(s.schema_text, highlight=False, markup=False),
        "/save": _save,
        "/remember": _remember,
        "/help": lambda s, _: _help(),
    }
    if name in ("/quit", "/exit", "/q"):
        return False
    handler = handlers.get(name)
    if handler is None:
        console.print(f"[red]unknown command {escape(name)}[/]; /help lists them")
        return True
    try:
        handler(session, argument)
    except CypherTurnError as e:
        console.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False, emoji=False)
    return True


def _help() -> None:
    for usage, meaning in COMMANDS.items():
        console.print(f"  [bold]{escape(usage)}[/]  {meaning}")


def _chosen(session: api.ChatSession, argument: str) -> ChatTurn | None:
    if not session.turns:
        console.print("[dim]no question asked yet[/]")
        return None
    if not argument:
        return session.turns[-1]
    if not argument.isdigit() or not 1 <= int(argument) <= len(session.turns):
        console.print(f"[red]no turn {escape(argument)}[/]: turns are 1 to {len(session.turns)}")
        return None
    return session.turns[int(argument) - 1]


def _show_cypher(session: api.ChatSession, argument: str) -> None:
    turn = _chosen(session, argument)
    if turn is None:
        return
    if turn.query is None:
        console.print(f"[dim]no query ran for turn {turn.index}[/]")
        return
    console.print(Syntax(turn.query, "cypher", word_wrap=True, theme="ansi_dark"))


def _show_rows(session: api.ChatSession, argument: str) -> None:
    turn = _chosen(session, argument)
    if turn is None:
        return
    if turn.result is None:
        console.print(f"[dim]no rows for turn {turn.index}[/]")
        return
    console.print(result_table(turn.result))
    console.print(rows_summary(turn.result), style="dim")


def _show_explain(session: api.ChatSession, argument: str) -> None:
    turn = _chosen(session, argument)
    if turn is None:
        return
    if turn.asked != turn.question:
        console.print("[dim]the model was given the conversation so far:[/]")
        console.print(turn.asked, style="dim", highlight=False, markup=False)
    if turn.strategy is None:
        console.print(f"[dim]no attempt: {escape(turn.reason or '')}[/]")
        return
    for attempt in turn.strategy.attempts:
        console.print(attempt_panel(attempt, turn.strategy.budget))
    chosen = turn.strategy.selected_attempt
    console.print(
        f"[dim]attempt {chosen} selected of {turn.strategy.attempts_used}[/]"
        if chosen is not None
        else "[dim]no attempt selected[/]"
    )
    if turn.answer is not None and turn.answer.source == "template":
        console.print(f"[dim]answer from the rows: {escape(turn.answer.reason or '')}[/]")


def _remember(session: api.ChatSession, argument: str) -> None:
    if argument and not argument.isdigit():
        console.print("[red]/remember takes a turn number, or nothing for the last answer[/]")
        return
    pair = session.remember(int(argument) if argument else None)
    console.print(
        f"[green]remembered[/] {escape(pair.question)} [dim]({pair.rows} row(s) on "
        f"{escape(pair.graph)})[/]",
        highlight=False,
    )


def _save(session: api.ChatSession, argument: str) -> None:
    if not argument:
        console.print("[red]/save needs a PATH[/]")
        return
    saved = session.save(Path(argument).expanduser())
    console.print(f"[green]saved[/] {saved}")

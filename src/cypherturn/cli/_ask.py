"""`cypherturn ask`: one question, a strategy trace, the result rows, the answer in words."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any

import typer
from rich.console import Console, Group
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from cypherturn import api
from cypherturn.answers import Answer
from cypherturn.chat import result_problem
from cypherturn.cli._app import app, console
from cypherturn.cli._exit import ExitCode
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
from cypherturn.graph import QueryResult
from cypherturn.memory import DEFAULT_RECALL
from cypherturn.models import (
    DEFAULT_TEMPERATURE,
    ChatMessage,
    ChatModel,
    ChatResponse,
    GGUFChatModel,
    ToolSpec,
    load_model,
)
from cypherturn.strategies import Attempt, StrategyResult

__all__ = [
    "AnswerStream",
    "ask",
    "attempt_panel",
    "print_answer",
    "print_trace",
    "result_table",
    "rows_summary",
]

_SHOWN_ROWS = 25


@app.command()
def ask(
    question: str = typer.Argument(..., help="The question, in plain language."),
    graph: str = typer.Option(
        api.DEFAULT_GRAPH,
        "--graph",
        "-g",
        help="Graph to query; a known world is loaded on first use.",
    ),
    engine: EngineOpt = None,
    strategy: str = typer.Option(
        "ras+",
        "--strategy",
        "-s",
        help="single | is | ras (RAS paper, Algorithms 1 and 2) | ras+ (grounded: schema check, "
        "stored values, repairs, grammar, selection) | ras+:PART,... (only those parts).",
    ),
    budget: BudgetOpt = 5,
    model: ModelOptions = "default",
    base_url: BaseUrlOpt = None,
    n_ctx: ContextOpt = None,
    temperature: TemperatureOpt = None,
    seed: int | None = typer.Option(
        None, "--seed", help="Base sampling seed, for a reproducible run."
    ),
    timeout: TimeoutOpt = None,
    row_cap: RowCapOpt = None,
    path: DataPathOpt = None,
    prompt: str | None = typer.Option(
        None,
        "--prompt",
        help="Prompt version: v1 (the RAS paper's zero-shot prompt) or v2 (default, few-shot).",
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print one machine-readable JSON record instead of the trace."
    ),
    no_answer: bool = typer.Option(
        False, "--no-answer", help="Skip the answer in words (no extra model call)."
    ),
    seconds: MaxSecondsOpt = api.DEFAULT_MAX_SECONDS,
    recall: RecallOpt = DEFAULT_RECALL,
) -> None:
    """Turn a question into Cypher, execute it read-only, repair it from the engine's errors.

    Then the model writes an answer in words from the rows; every number in it
    must come from the rows, else a templated answer is shown (and recorded in
    ``--json`` as ``answer.source = "template"`` with the reason). The answer
    takes at most ``--max-seconds`` (60 s): then the best verified query so far
    is returned, or none (exit 3, the reason in the trace). Ctrl-C exits 130,
    SIGTERM 143, within 2 s.
    """
    with stoppable():
        _ask(
            question,
            api.AskConfig(
                graph=graph,
                engine_url=engine,
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
                max_seconds=max_seconds(seconds),
                recall=recall,
            ),
            as_json=as_json,
            no_answer=no_answer,
        )


def _ask(question: str, config: api.AskConfig, *, as_json: bool, no_answer: bool) -> None:
    """The body of :func:`ask`, under :func:`~cypherturn.cli._signals.stoppable`."""
    started = time.perf_counter()
    graph, strategy, budget, model = config.graph, config.strategy, config.budget, config.model
    seed = config.seed
    api.require_question(question)
    if not as_json:
        console.print(f"[bold]Question:[/] {escape(question)}")
        console.print(f"[dim]graph {graph} · strategy {strategy}@{budget} · model {model}[/]")
    streaming = not as_json and console.is_terminal
    loaded = load_model(model, **config.model_options)
    quiet = as_json or streaming
    if isinstance(loaded, GGUFChatModel):
        # loaded before the first attempt, whose seconds are then its own
        with nullcontext() if quiet else console.status("Loading the model..."):
            loaded.load()
    with nullcontext() if quiet else console.status("Generating and executing Cypher..."):
        result = api.run_ask(
            question, config, model=StreamedModel(loaded, console) if streaming else loaded
        )
    if not as_json:
        print_trace(result)
        if result.recalled:
            console.print(
                f"[dim]shown {len(result.recalled)} remembered question(s) of this graph "
                "as examples (--recall 0: none)[/]"
            )
    answer: Answer | None = None
    # as in chat: an empty result a check explains, or a query that still breaks the
    # schema, is no answer, whatever its rows say (a count of 0 for a value not stored)
    problem = result_problem(result) if result.success else None
    if problem is not None and not as_json:
        console.print(f"[bold yellow]This graph cannot answer that:[/] {escape(problem)}")
    if result.final_result is not None and not no_answer and problem is None:
        stream = AnswerStream(console)
        with nullcontext() if quiet else console.status("Writing the answer..."):
            answer = api.answer_within_budget(
                loaded, question, result, on_token=stream if streaming else None, seed=seed
            )
        if not as_json:
            print_answer(answer, streamed=stream.started)
    if as_json:
        record = result.model_dump(mode="json")
        record["answer"] = answer.model_dump(mode="json") if answer is not None else None
        record["problem"] = problem
        record["seconds"] = time.perf_counter() - started
        typer.echo(json.dumps(record))
    if not result.success:
        raise typer.Exit(ExitCode.NO_EXECUTABLE_QUERY)


class AnswerStream:
    """A token callback that prints ``Answer:`` before the first piece, then each piece as it comes.

    Args:
        out: the console.

    Attributes:
        started: some piece was printed (the line is still open).
    """

    def __init__(self, out: Console) -> None:
        self._out = out
        self.started = False

    def __call__(self, piece: str) -> None:
        """Print one generated piece."""
        if not self.started:
            self._out.print("[bold]Answer:[/] ", end="")
            self.started = True
        self._out.out(piece, end="", highlight=False)


def print_answer(answer: Answer, *, streamed: bool, out: Console | None = None) -> None:
    """Print the answer in words; after a streamed one, only a rejection and its replacement.

    Args:
        answer: the record.
        streamed: the model's text was already printed as it was generated
            (the line is then ended here).
        out: the console (default: the app's).
    """
    target = out or console
    if streamed:
        target.out("")
    if answer.source == "model":
        if not streamed:
            target.print(Text.assemble(("Answer: ", "bold"), answer.text))
        return
    if streamed and answer.model_text is not None:
        target.print(f"[yellow]replaced[/] [dim]({escape(answer.reason or '')}); from the rows:[/]")
    elif answer.reason not in (None, "no rows"):
        target.print(f"[dim]answer from the rows ({escape(answer.reason or '')})[/]")
    target.print(Text.assemble(("Answer: ", "bold"), answer.text))


class StreamedModel:
    """A chat model whose calls show their generated text on a console as it arrives.

    Each call prints an ``attempt k`` header, then the streamed pieces in dim
    text (the strategies call the model once per attempt); everything else is
    the wrapped model's.

    Args:
        model: the model that generates.
        console: where the text goes.
    """

    def __init__(self, model: ChatModel, console: Console) -> None:
        self._model = model
        self._console = console
        self._calls = 0

    @property
    def spec(self) -> str:
        """The wrapped model's spec."""
        return self._model.spec

    @property
    def supports_grammar(self) -> bool:
        """Whether the wrapped model decodes under a grammar."""
        return self._model.supports_grammar

    @property
    def supports_decoding_guards(self) -> bool:
        """False: :meth:`chat` passes no decoding guards on to the wrapped model."""
        return False

    def chat(
        self,
        messages: list[ChatMessage],
        *,
        temperature: float = DEFAULT_TEMPERATURE,
        max_tokens: int = 512,
        seed: int | None = None,
        tools: Sequence[ToolSpec] | None = None,
        grammar: str | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> ChatResponse:
        """The wrapped model's :meth:`~cypherturn.models.ChatModel.chat`, streamed to the console.

        A caller's own ``on_token`` still receives every piece.
        """
        self._calls += 1
        self._console.print(f"[bold dim]attempt {self._calls}[/]")

        def show(piece: str) -> None:
            self._console.out(piece, style="dim", end="", highlight=False)
            if on_token is not None:
                on_token(piece)

        try:
            return self._model.chat(
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                seed=seed,
                tools=tools,
                grammar=grammar,
                on_token=show,
            )
        finally:
            self._console.out("")


def print_trace(result: StrategyResult) -> None:
    """Print every attempt (query, then error or row count) and the final rows."""
    for attempt in result.attempts:
        console.print(attempt_panel(attempt, result.budget))
    chosen = (
        f", attempt {result.selected_attempt} selected"
        if result.selected_attempt is not None and result.selected_attempt != result.attempts_used
        else ""
    )
    if not result.attempts:
        summary = "[red]no answer within the time budget[/]"
    elif result.success:
        summary = (
            f"[green]executed[/] after {result.attempts_used} of {result.budget} attempts{chosen}"
        )
    elif result.stop_reason is not None:
        summary = "[red]no executable query[/] within the time budget; the last one is returned"
    else:
        summary = (
            f"[red]no executable query[/] in {result.budget} attempts; the last one is returned"
        )
    console.print(summary)
    if result.stop_reason is not None:
        console.print(f"[yellow]stopped:[/] {escape(result.stop_reason)}", highlight=False)
    if result.final_result is not None:
        console.print(result_table(result.final_result))
        console.print(rows_summary(result.final_result), style="dim")


def attempt_panel(attempt: Attempt, budget: int) -> Panel:
    """One attempt as a panel: repairs and findings, the query, the outcome, votes, tokens, seconds."""
    query = Syntax(
        attempt.query or "(no Cypher found in the answer)",
        "cypher",
        word_wrap=True,
        theme="ansi_dark",
    )
    if attempt.ok:
        status = f"[green]✓ {attempt.row_count} rows[/]" + (
            " [yellow](truncated)[/]" if attempt.truncated else ""
        )
        style = "green" if attempt.verdict in (None, "answer", "empty") else "yellow"
    else:
        status = f"[red]✗ {attempt.error_class}[/]: {escape(attempt.error_message or '')}"
        style = "red"
    if attempt.verdict is not None:
        status += f" [dim]· verdict[/] {_VERDICTS[attempt.verdict]}"
    if attempt.votes is not None:
        status += (
            f" [dim]· vote[/] {attempt.votes} of the answers so far return these rows"
            if attempt.votes > 1
            else " [dim]· vote[/] first answer with these rows"
        )
    if attempt.temperature is not None:
        status += f" [dim]· T={attempt.temperature:g}[/]"
    tokens = f"{attempt.prompt_tokens}+{attempt.completion_tokens} tokens, {attempt.model_latency_s:.1f} s"
    return Panel(
        Group(*_grounding_lines(attempt), query, Text.from_markup(status)),
        title=f"attempt {attempt.index}/{budget}",
        subtitle=tokens,
        border_style=style,
        title_align="left",
        subtitle_align="right",
    )


_VERDICTS = {
    "answer": "[green]answer[/]",
    "empty": "[green]empty answer[/] (no check explains it)",
    "flagged": "[yellow]flagged[/] (runs, but a check found a defect)",
    "explained_empty": "[yellow]no rows, explained by a check[/]",
    "error": "[red]error[/]",
}


def _grounding_lines(attempt: Attempt) -> list[Text]:
    """The model's own query when repairs changed it, each repair, and each finding (ras+)."""
    lines: list[Text] = []
    if attempt.original_query is not None:
        lines.append(Text.from_markup(f"[dim]model wrote:[/] {escape(attempt.original_query)}"))
    for repair in attempt.repairs:
        reason = repair.edit.reason if repair.edit is not None else ""
        lines.append(
            Text.from_markup(
                f"[cyan]repaired[/] {repair.code}: {escape(repair.message)} [dim]({escape(reason)})[/]"
            )
        )
    for finding in attempt.findings:
        lines.append(
            Text.from_markup(f"[yellow]check[/] {finding.code}: {escape(finding.message)}")
        )
    if attempt.verdict in ("answer", "empty") and not attempt.findings:
        lines.append(Text.from_markup("[green]checks passed[/] [dim](schema, stored values)[/]"))
    return lines


def result_table(result: QueryResult, limit: int = _SHOWN_ROWS) -> Table:
    """A rich table of the first ``limit`` rows."""
    table = Table(show_lines=False)
    for column in result.columns:
        table.add_column(column, overflow="fold")
    for row in result.rows[:limit]:
        table.add_row(*(_cell(value) for value in row))
    return table


def rows_summary(result: QueryResult, limit: int = _SHOWN_ROWS) -> str:
    """``"N rows"``, saying when only the first ``limit`` are shown or the row cap cut the result."""
    summary = f"{result.row_count} rows" + (
        f", first {limit} shown" if result.row_count > limit else ""
    )
    return summary + (" (row cap reached)" if result.truncated else "")


def _cell(value: Any) -> str:
    if value is None:
        return "[dim]null[/]"
    if isinstance(value, dict) and value.get("_kind") == "node":
        props = ", ".join(f"{k}: {v!r}" for k, v in list(value.get("properties", {}).items())[:4])
        return escape(f"(:{':'.join(value.get('labels', []))} {{{props}}})")
    text = str(value)
    return escape(text if len(text) <= 200 else text[:197] + "...")

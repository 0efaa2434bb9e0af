"""`cypherturn learn`: the memory of verified questions of one graph: add from a file, list, forget."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from cypherturn import api
from cypherturn.cli._app import app, console
from cypherturn.cli._exit import ExitCode
from cypherturn.cli._options import DataPathOpt, EngineOpt
from cypherturn.cli._signals import stoppable
from cypherturn.errors import ConfigError

__all__ = ["learn"]

_SHOWN_REFUSALS = 10


@app.command()
def learn(
    file: Path | None = typer.Argument(
        None,
        help="JSON Lines of question and cypher (or query, gold), optionally graph: each "
        "query is run read-only on the graph and kept if it runs.",
    ),
    graph: str = typer.Option(
        api.DEFAULT_GRAPH, "--graph", "-g", help="The graph whose memory this is."
    ),
    engine: EngineOpt = None,
    path: DataPathOpt = None,
    show: bool = typer.Option(False, "--list", help="List the remembered questions."),
    forget: str | None = typer.Option(
        None, "--forget", help="Drop the remembered pair of this question."
    ),
) -> None:
    """Teach the graph's memory question → Cypher pairs; ask and chat show the nearest as examples.

    A pair is kept only if its query runs read-only on the graph. A question
    learned again replaces its earlier pair. Exit 1 when a file gave no pair.
    """
    chosen = sum([file is not None, show, forget is not None])
    if chosen != 1:
        raise typer.BadParameter("give a FILE to learn, --list, or --forget QUESTION (one of them)")
    if show:
        _list(graph, engine)
    elif forget is not None:
        if not api.forget(forget, graph=graph, engine_url=engine):
            raise ConfigError(f"the memory of {graph} holds no question {forget!r}")
        console.print("[green]forgotten[/]")
    elif file is not None:
        if not file.is_file():
            raise ConfigError(f"not a file: {file}")
        with stoppable(), console.status(f"Checking the pairs of {file} on {graph} ..."):
            report = api.learn(file, graph=graph, engine_url=engine, data_path=path)
        console.print(
            f"kept [bold]{report.kept}[/] pair(s) ({report.new} new) · "
            f"skipped {report.skipped} of other graphs · refused {len(report.refused)} · "
            f"the memory of {escape(graph)} holds {report.total}"
        )
        for reason in report.refused[:_SHOWN_REFUSALS]:
            console.print(f"  [yellow]refused[/] {escape(reason)}", highlight=False)
        if len(report.refused) > _SHOWN_REFUSALS:
            console.print(f"  [dim]and {len(report.refused) - _SHOWN_REFUSALS} more[/]")
        if report.kept == 0:
            raise typer.Exit(ExitCode.ERROR)


def _list(graph: str, engine: str | None) -> None:
    memory = api.graph_memory(graph, engine)
    pairs = memory.pairs()
    if not pairs:
        console.print(f"[dim]the memory of {escape(graph)} is empty ({memory.path})[/]")
        return
    table = Table(title=f"{len(pairs)} remembered question(s) of {graph}", show_lines=True)
    table.add_column("question", overflow="fold", ratio=2)
    table.add_column("cypher", overflow="fold", ratio=3)
    table.add_column("from")
    for pair in pairs:
        table.add_row(pair.question, pair.cypher, pair.source)
    console.print(table)
    console.print(f"[dim]{memory.path}[/]")

"""`cypherturn worlds`: list the registered worlds, build one and export it as JSON lines.

The lead attaches ``worlds_app`` to the root app (``app.add_typer(worlds_app)``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from cypherturn.cli._app import console, err_console
from cypherturn.errors import ConfigError
from cypherturn.worlds import get_world, list_worlds, write_graph_jsonl

__all__ = ["worlds_app"]

worlds_app = typer.Typer(
    name="worlds",
    help="The graphs cypherturn knows: public datasets and generated worlds (CypherTurn §2.1, Fraud).",
    no_args_is_help=True,
)


@worlds_app.command("list")
def list_command() -> None:
    """Show every registered world: kind, size at the default scale and its topology."""
    table = Table(title="worlds", show_lines=False)
    table.add_column("name", style="bold")
    table.add_column("kind")
    table.add_column("nodes", justify="right")
    table.add_column("relationships", justify="right")
    table.add_column("topology")
    for world in list_worlds():
        info = world.info
        table.add_row(
            info.name,
            info.kind,
            "?" if info.expected_nodes is None else f"{info.expected_nodes:,}",
            "?" if info.expected_relationships is None else f"{info.expected_relationships:,}",
            _headline(info.topology),
        )
    console.print(table)
    console.print("Sizes of synthetic worlds are for --seed 0 --scale 1.", style="dim")


def _headline(topology: str) -> str:
    """The topology's name: the text before its first colon or semicolon, one line in a table."""
    for stop in (":", ";", "("):
        topology = topology.partition(stop)[0]
    return topology.strip()


@worlds_app.command("build")
def build_command(
    name: Annotated[str, typer.Argument(help="World to build (see `cypherturn worlds list`).")],
    seed: Annotated[int, typer.Option("--seed", help="Generator seed; same seed, same bytes.")] = 0,
    scale: Annotated[
        float, typer.Option("--scale", help="Size multiplier (fraud: 80 = public size).")
    ] = 1.0,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="JSON-lines file to write (default: standard output)."),
    ] = None,
) -> None:
    """Build a world and export it as portable JSON lines (header, nodes, relationships)."""
    if scale <= 0:
        raise ConfigError(f"--scale must be positive, got {scale}")
    world = get_world(name)
    started = time.perf_counter()
    data = world.build(seed=seed, scale=scale)
    built = time.perf_counter() - started
    target = out if out is not None else sys.stdout
    lines = write_graph_jsonl(data, target)
    report = err_console if out is None else console
    where = "standard output" if out is None else str(out)
    report.print(
        f"{data.name}: {len(data.nodes):,} nodes, {len(data.relationships):,} relationships "
        f"(built in {built:.2f} s), {lines:,} lines written to {where}",
        highlight=False,
    )

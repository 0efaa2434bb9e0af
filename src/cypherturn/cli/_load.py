"""`cypherturn load`: build a world or dataset and load it into an engine."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from cypherturn import api
from cypherturn.cli._app import app, console
from cypherturn.cli._options import EngineOpt
from cypherturn.errors import ConfigError
from cypherturn.graph import LoadStats, open_engine
from cypherturn.worlds import load_official_graph

__all__ = ["load"]


@app.command()
def load(
    name: str | None = typer.Argument(
        None, help="World to load: pole, healthcare, a synthetic world, fraud."
    ),
    engine: EngineOpt = None,
    graph: str | None = typer.Option(
        None, "--graph", "-g", help="Graph name to load under (default: the world's name)."
    ),
    path: Path | None = typer.Option(
        None, "--path", help="Dataset files (folder or zip) instead of the packaged copy."
    ),
    seed: int = typer.Option(0, "--seed", help="Generator seed (synthetic worlds)."),
    scale: float = typer.Option(
        1.0, "--scale", min=0.01, help="Size multiplier (synthetic worlds)."
    ),
    replace: bool = typer.Option(False, "--replace", help="Drop the graph first."),
    cypher_script: Path | None = typer.Option(
        None, "--cypher-script", help="Official CypherTurn data.cypher to load."
    ),
    schema_file: Path | None = typer.Option(
        None, "--schema", help="Official CypherTurn schema.json to check counts against."
    ),
    official_name: str | None = typer.Option(
        None, "--name", help="Graph name for --cypher-script."
    ),
) -> None:
    """Load a graph: batched parameterised writes, indexes, counts checked; idempotent."""
    if cypher_script is not None:
        if schema_file is None or official_name is None or name is not None:
            raise ConfigError("--cypher-script needs --schema and --name, and no world NAME")
        with console.status(f"Loading {cypher_script} ..."):
            target = open_engine(engine, official_name)
            try:
                stats = load_official_graph(target, cypher_script, schema_file, official_name)
            finally:
                target.close()
    elif name is None:
        raise ConfigError(
            "name a world to load (see `cypherturn worlds list`) or give --cypher-script"
        )
    else:
        with console.status(f"Loading {name} ..."):
            stats = api.load(
                name,
                engine_url=engine,
                graph=graph,
                path=path,
                seed=seed,
                scale=scale,
                replace=replace,
            )
    console.print(_stats_table(stats))


def _stats_table(stats: LoadStats) -> Table:
    table = Table(title=f"graph {stats.graph}")
    table.add_column("nodes", justify="right")
    table.add_column("relationships", justify="right")
    table.add_column("seconds", justify="right")
    table.add_row(f"{stats.nodes:,}", f"{stats.relationships:,}", f"{stats.seconds:.2f}")
    return table

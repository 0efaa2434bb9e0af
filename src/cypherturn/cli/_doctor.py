"""`cypherturn doctor`: the embedded FalkorDB servers running here, and stopping leftovers."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from cypherturn import api
from cypherturn.cli._app import app, console

__all__ = ["doctor_command"]


@app.command("doctor")
def doctor_command(
    stop: Annotated[
        bool, typer.Option("--stop", help="Stop leftovers: servers no live process uses.")
    ] = False,
    stop_all: Annotated[
        bool, typer.Option("--stop-all", help="Stop every embedded server, even those in use.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON list on stdout.")] = False,
) -> None:
    """Show the embedded FalkorDB servers of this user (pid, port, data dir, users, state)."""
    servers = api.doctor(stop=stop, stop_all=stop_all)
    if as_json:
        typer.echo(json.dumps([server.model_dump() for server in servers]))
        return
    if not servers:
        console.print("no embedded FalkorDB server is running")
        return
    table = Table("pid", "port", "state", "users", "watchdog", "data dir", "stopped")
    for server in servers:
        table.add_row(
            str(server.pid),
            str(server.port or "?"),
            server.state,
            ", ".join(map(str, server.users)) or "-",
            str(server.watchdog_pid or "none"),
            server.data_dir + ("" if server.data_dir_exists else " (removed)"),
            "yes" if server.stopped else "no",
        )
    console.print(table)
    leftovers = [s for s in servers if s.state != "in use" and not s.stopped]
    if leftovers and not (stop or stop_all):
        console.print(f"{len(leftovers)} leftover(s): run `cypherturn doctor --stop` to stop them")

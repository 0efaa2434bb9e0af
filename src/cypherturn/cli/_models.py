"""`cypherturn models`: the local model packs, whether each is installed, and how to install it.

The lead attaches ``models_app`` to the root app (``app.add_typer(models_app)``).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.filesize import decimal
from rich.table import Table
from rich.text import Text

from cypherturn.cli._app import console
from cypherturn.errors import ModelUnavailableError
from cypherturn.models import (
    MODEL_PACKS,
    CacheState,
    ModelPack,
    cache_state,
    default_model_name,
    ensure_model_file,
    get_pack,
    installed,
    resolve_model_spec,
)

__all__ = ["models_app"]

models_app = typer.Typer(
    name="models",
    help="Local models: list the model packs (size, licence, installed, install command); "
    "prepare one.",
    invoke_without_command=True,
)


def _parameters(count: int) -> str:
    """A parameter count the way model cards write it (1.54B, 135M)."""
    if count >= 1_000_000_000:
        return f"{count / 1e9:.3g}B"
    return f"{count / 1e6:.3g}M"


def _current_default() -> str | None:
    try:
        return default_model_name()
    except ModelUnavailableError:
        return None


def _installed_cell(pack: ModelPack) -> str:
    """``no``, or ``yes`` with the state of the model file (assembled, verified, bundled)."""
    if not installed(pack):
        return "no"
    state = cache_state(pack)
    return "yes, verified" if state is CacheState.VERIFIED else f"yes, {state.value}"


_WIDE = 110
"""Console width from which the install commands fit in the table as a column."""


def _show_table() -> None:
    current = _current_default()
    wide = console.width >= _WIDE
    table = Table(title="local models", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("name", style="bold", no_wrap=True)
    table.add_column("params", justify="right")
    table.add_column("size", justify="right", no_wrap=True)
    table.add_column("licence", no_wrap=True)
    table.add_column("installed", no_wrap=True)
    table.add_column("default", justify="center", no_wrap=True)
    if wide:
        table.add_column("install", no_wrap=True)
    for pack in MODEL_PACKS.values():
        row = [
            pack.name,
            _parameters(pack.parameters),
            decimal(pack.size),
            pack.licence,
            _installed_cell(pack),
            "*" if pack.name == current else "",
        ]
        table.add_row(*row, *([Text(pack.install_command)] if wide else []))
    console.print(table)
    if not wide:
        for pack in MODEL_PACKS.values():
            console.print(Text(f"install {pack.name}: {pack.install_command}"), soft_wrap=True)
    if current is None:
        console.print("No model is installed: `default` has nothing to resolve to.", style="yellow")
    else:
        console.print(
            f"`--model default` is {current}, the strongest model installed. A model's file is "
            "assembled and verified (SHA-256) on first use, or now with "
            "`cypherturn models prepare NAME`.",
            style="dim",
        )


@models_app.callback()
def _models(ctx: typer.Context) -> None:
    """List the local model packs: size, licence, installed, the default, how to install."""
    if ctx.invoked_subcommand is None:
        _show_table()


@models_app.command("list")
def list_command() -> None:
    """List the local model packs (the same table as `cypherturn models`)."""
    _show_table()


@models_app.command("prepare")
def prepare_command(
    name: Annotated[
        str, typer.Argument(help="Model to prepare: a name from `cypherturn models`, or default.")
    ],
) -> None:
    """Assemble and verify a model's file now (progress on stderr), instead of on first use."""
    pack = get_pack(resolve_model_spec(name))
    path = ensure_model_file(pack)
    how = "SHA-256 verified" if pack.parts else f"bundled with {pack.bundled_package}"
    console.print(
        f"{pack.name}: {path} ({path.stat().st_size:,} bytes, {how})", soft_wrap=True, markup=False
    )

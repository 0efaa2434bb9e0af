"""The root Typer application the command modules attach to, and the consoles they print on.

It holds no command itself: `cli/_commands.py` imports every command module, so
the app is complete once `cypherturn.cli` is imported, and `cli/_main.py` runs it.
"""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console

__all__ = ["app", "console", "err_console"]

app = typer.Typer(
    name="cypherturn",
    help="Executable, conversational Text-to-Cypher: ask a graph, run the CypherTurn benchmark, score it.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
console = Console()
# soft_wrap: an error is one line however long, so a log or a grep sees it whole
err_console = Console(stderr=True, soft_wrap=True)


@app.callback()
def _root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details to stderr."),
) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )

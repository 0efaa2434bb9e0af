"""The Typer application and the single place where errors become messages and exit codes."""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console
from rich.markup import escape

from cypherturn.cli._exit import ExitCode
from cypherturn.cli._signals import exit_code_of_signal
from cypherturn.errors import CypherTurnError, RunInterrupted

__all__ = ["app", "console", "err_console", "main"]

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


def _register_commands() -> None:
    # Command modules attach themselves to `app` on import.
    from cypherturn.cli import _commands  # noqa: F401


def main() -> None:
    """Console-script entry point: run the app; a CypherTurnError prints a message and exits 1.

    Exit codes are :class:`~cypherturn.cli._exit.ExitCode`: Ctrl-C exits 130
    (typer turns ``KeyboardInterrupt`` into that code), SIGTERM 143 (the
    long-running commands run under :func:`~cypherturn.cli._signals.stoppable`).
    """
    _register_commands()
    try:
        # Outside standalone mode click returns the code of `typer.Exit` instead of exiting.
        code = app(standalone_mode=False)
    except RunInterrupted:
        # work abandoned by a signal (a model call in flight) can surface before the
        # signal's own KeyboardInterrupt / SystemExit does: same exit, same message
        err_console.print("[yellow]interrupted[/]")
        raise SystemExit(exit_code_of_signal()) from None
    except CypherTurnError as exc:
        # The message is plain text: no markup, no emoji codes (``openai:m:`` is not an emoji).
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, emoji=False)
        raise SystemExit(ExitCode.ERROR) from None
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/]")
        raise SystemExit(ExitCode.INTERRUPTED) from None
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        raise SystemExit(ExitCode.ERROR) from None
    except typer.TyperException as exc:
        # usage errors (bad option values, unknown options) in non-standalone mode;
        # typer bundles its own click, so `click.ClickException` does not match them
        show = getattr(exc, "show", None)
        if show is None:
            raise
        show()
        raise SystemExit(getattr(exc, "exit_code", ExitCode.USAGE)) from None
    if isinstance(code, int) and code:
        raise SystemExit(code)

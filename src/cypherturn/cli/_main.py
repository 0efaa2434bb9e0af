"""The console-script entry point: the single place where errors become messages and exit codes."""

from __future__ import annotations

import typer
from rich.markup import escape

from cypherturn.cli._app import err_console
from cypherturn.cli._commands import app
from cypherturn.cli._exit import ExitCode
from cypherturn.cli._signals import exit_code_of_signal
from cypherturn.errors import CypherTurnError, RunInterrupted

__all__ = ["main"]


def main() -> None:
    """Console-script entry point: run the app; a CypherTurnError prints a message and exits 1.

    Exit codes are :class:`~cypherturn.cli._exit.ExitCode`: Ctrl-C exits 130
    (typer turns ``KeyboardInterrupt`` into that code), SIGTERM 143 (the
    long-running commands run under :func:`~cypherturn.cli._signals.stoppable`).
    """
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

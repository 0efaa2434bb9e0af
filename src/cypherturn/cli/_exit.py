"""The exit codes of every ``cypherturn`` command, one table (documented in README.md).

Scripts tell the outcomes apart by these codes alone: an answer, an error in
the input or the environment, a usage mistake, a question no generated query
could answer (within the budget of attempts or of time), a benchmark run that
lost sessions to infrastructure failures (rerunning the same command resumes
them), and a command stopped by Ctrl-C or SIGTERM (:mod:`cypherturn.cli._signals`).
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ExitCode"]


class ExitCode(IntEnum):
    """Process exit status of a ``cypherturn`` command."""

    OK = 0
    """Done: the question was answered, the run finished, the command did its work."""
    ERROR = 1
    """A clear one-line error: bad input file, unknown graph, unreachable engine or endpoint."""
    USAGE = 2
    """A usage error: unknown option, bad option value, missing argument (typer/click's code)."""
    NO_EXECUTABLE_QUERY = 3
    """``ask``: no generated query executed within the budget of attempts or of time
    (the trace says why)."""
    SESSIONS_LOST = 4
    """``bench run`` / ``qer run``: sessions or episodes lost to infrastructure failures,
    unscored; rerun to resume them."""
    INTERRUPTED = 130
    """Ctrl-C (128 + SIGINT): stopped within 2 s, work in flight abandoned, a run resumable."""
    TERMINATED = 143
    """SIGTERM (128 + SIGTERM): stopped as after Ctrl-C."""

"""`cypherturn report`: print the main table of scored runs and write tables and figures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from cypherturn import api
from cypherturn.cli._app import app, console
from cypherturn.metrics import DEFAULT_RESAMPLES
from cypherturn.reports import ReportFormat, to_rich

__all__ = ["report_command"]


@app.command("report")
def report_command(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(help="Run directories (bench runs, QER runs, ask benchmark runs)."),
    ],
    fmt: Annotated[
        ReportFormat, typer.Option("--format", "-f", help="File format of the written tables.")
    ] = ReportFormat.MD,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Output folder (default: RUN_DIR/report of the first run)."
        ),
    ] = None,
    resamples: Annotated[
        int, typer.Option("--resamples", min=100, help="Bootstrap resamples.")
    ] = DEFAULT_RESAMPLES,
    qer_n: Annotated[
        int, typer.Option("--qer-n", min=1, help="Scaled budget n of the QER tables.")
    ] = 5,
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = 0,
) -> None:
    """Report on scored runs: EX, PSJS, SEM, CER, Tok/S per model and protocol, breakdowns, QER, ask accuracy, plots."""
    config = api.ReportConfig(
        run_dirs=run_dirs, fmt=fmt, out=out, resamples=resamples, qer_n=qer_n, seed=seed
    )
    result = api.report(config, status=console.status)
    report, written = result.report, result.written
    for table in report.tables:
        if table.name in ("main", "qer", "qer_tiers", "qer_cost", "ask", "ask_pairs", "ask_golds"):
            console.print(to_rich(table, width=console.width))
    plots = len(written) - 1
    console.print(f"wrote {written[0]}" + (f" and {plots} plot(s)" if plots else ""))

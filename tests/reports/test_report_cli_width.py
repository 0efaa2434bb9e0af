"""`cypherturn report` on an 80-column terminal or a pipe: its tables fit and lose no cell."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from cypherturn.cli import app
from cypherturn.cli._app import console
from cypherturn.records import read_run
from cypherturn.reports import build_report, fmt

runner = CliRunner()


@pytest.mark.parametrize("width", [80, 200])
def test_report_tables_fit_the_terminal_and_show_every_cell(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    monkeypatch.setattr(console, "_width", width)
    out = tmp_path / "report"
    result = runner.invoke(app, ["report", str(run_dir), "--out", str(out), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    for line in result.output.splitlines():
        assert cell_len(line) <= width, line
    report = build_report([read_run(run_dir)], n_resamples=200)
    printed = [t for t in report.tables if t.name in ("main", "qer", "qer_tiers", "qer_cost")]
    assert printed and printed[0].name == "main"
    for table in printed:
        assert table.title in result.output
        for row in table.rows:
            for cell in row:
                assert fmt(cell) in result.output, (table.name, fmt(cell))

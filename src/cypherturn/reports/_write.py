"""Write a report to a folder: the tables in the chosen format and the PNG figures."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from cypherturn.reports._build import Report
from cypherturn.reports._plots import write_plots
from cypherturn.reports._tables import render_html, render_markdown

__all__ = ["ReportFormat", "write_report"]

_CAPTIONS = {
    "ex_vs_budget": "Agentic EX vs budget",
    "turn_position": "EX and CER per turn position",
    "qer_scaling": "QER vs inference scale (IS and RAS)",
    "ask_accuracy": "Ask accuracy per system (95% Wilson intervals)",
}


class ReportFormat(StrEnum):
    """File format of the written tables."""

    MD = "md"
    HTML = "html"
    JSON = "json"


def write_report(report: Report, out_dir: Path, fmt: ReportFormat = ReportFormat.MD) -> list[Path]:
    """Write ``report.<fmt>`` and ``plots/*.png`` into ``out_dir``.

    Args:
        report: the built report.
        out_dir: destination folder (created when missing).
        fmt: ``md`` and ``html`` render every table with the figures linked;
            ``json`` writes the whole :class:`Report` model.

    Returns:
        The files written, the report file first.

    Raises:
        OSError: the folder cannot be written.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    plots = write_plots(report, out_dir / "plots")
    images = [(_CAPTIONS[name], f"plots/{path.name}") for name, path in plots.items()]
    title = "cypherturn report"
    target = out_dir / f"report.{fmt.value}"
    if fmt is ReportFormat.MD:
        target.write_text(render_markdown(report.tables, images, title), encoding="utf-8")
    elif fmt is ReportFormat.HTML:
        target.write_text(render_html(report.tables, images, title), encoding="utf-8")
    else:
        target.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return [target, *plots.values()]

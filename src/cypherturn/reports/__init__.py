"""Reports over scored run directories: the main table, breakdowns, significance, QER tables and figures."""

from cypherturn.reports._ask import ask_system_label, ask_tables
from cypherturn.reports._build import Report, RunProvenance, build_report, system_label
from cypherturn.reports._plots import (
    PLOT_FILES,
    plot_ex_vs_budget,
    plot_qer_scaling,
    plot_turn_position,
    write_plots,
)
from cypherturn.reports._qer import qer_cost_table, qer_error_class_table
from cypherturn.reports._tables import Table, fmt, render_html, render_markdown, to_rich
from cypherturn.reports._write import ReportFormat, write_report

__all__ = [
    "PLOT_FILES",
    "Report",
    "ReportFormat",
    "RunProvenance",
    "Table",
    "ask_system_label",
    "ask_tables",
    "build_report",
    "fmt",
    "plot_ex_vs_budget",
    "plot_qer_scaling",
    "plot_turn_position",
    "qer_cost_table",
    "qer_error_class_table",
    "render_html",
    "render_markdown",
    "system_label",
    "to_rich",
    "write_plots",
    "write_report",
]

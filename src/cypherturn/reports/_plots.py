"""The report's three figures, drawn with matplotlib's Agg backend (no display needed).

* ``ex_vs_budget.png`` — agentic EX at budget x3/x5/x10 per model, 95% CI bars (CypherTurn Figure 4).
* ``turn_position.png`` — EX and CER per turn position, guided solid, agentic dashed (Figures 6, 8).
* ``qer_scaling.png`` — QER vs n for IS and RAS with +-sigma bands, one panel per dataset (RAS Figure 3).
* ``ask_accuracy.png`` — the ask benchmark: executable, EX and rEX per system, Wilson 95% bars.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from cypherturn.metrics import qer_scaling
from cypherturn.records import BASE_VARIANT
from cypherturn.reports._build import Report, system_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "PLOT_FILES",
    "plot_ask_accuracy",
    "plot_ex_vs_budget",
    "plot_qer_scaling",
    "plot_turn_position",
    "write_plots",
]

logger = logging.getLogger(__name__)

PLOT_FILES = {
    "ex_vs_budget": "ex_vs_budget.png",
    "turn_position": "turn_position.png",
    "qer_scaling": "qer_scaling.png",
    "ask_accuracy": "ask_accuracy.png",
}
"""Plot name -> file name inside the report's ``plots/`` folder."""


@functools.cache
def _pyplot() -> ModuleType:
    """matplotlib's pyplot on the Agg backend, imported at the first plot.

    Importing it costs about 0.4 s, which every ``cypherturn`` command paid at
    start-up while only ``report`` draws.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot

    return matplotlib.pyplot


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    _pyplot().close(fig)
    return path


def plot_ex_vs_budget(report: Report, path: Path) -> Path | None:
    """Agentic EX against the budget multiplier, one line per model.

    Returns:
        The file written, or ``None`` when no agentic run is in the report.
    """
    series = report.budget_series
    if not series:
        return None
    fig, ax = _pyplot().subplots(figsize=(7, 4.5))
    for model, points in sorted(series.items()):
        budgets = sorted(points)
        ex = np.array([points[b][0] for b in budgets])
        low = np.array([points[b][1] for b in budgets])
        high = np.array([points[b][2] for b in budgets])
        ax.errorbar(budgets, ex, yerr=[ex - low, high - ex], marker="o", capsize=3, label=model)
    all_budgets = sorted({b for points in series.values() for b in points})
    ax.set_xticks(all_budgets, [f"x{b}" for b in all_budgets])
    ax.set_xlabel("action budget multiplier m (B = T x m)")
    ax.set_ylabel("EX (agentic)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Agentic EX vs budget (95% CI)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_turn_position(report: Report, path: Path) -> Path | None:
    """EX and CER per turn position; guided solid, agentic dashed, one colour per model.

    Returns:
        The file written, or ``None`` when the report has no turn scores.
    """
    if not report.ex_by_position:
        return None
    fig, (ax_ex, ax_cer) = _pyplot().subplots(1, 2, figsize=(11, 4.5))
    models = sorted({s.model for s in report.summaries})
    colours = {m: _pyplot().get_cmap("tab10")(i % 10) for i, m in enumerate(models)}
    # Base-variant agentic runs at the smallest budget only, as in CypherTurn Figures 6 and 8:
    # one pair per model.
    smallest: dict[str, int] = {}
    for s in report.summaries:
        if s.protocol.value == "agentic" and s.variant == BASE_VARIANT:
            smallest[s.model] = min(smallest.get(s.model, s.budget_multiplier), s.budget_multiplier)
    for s in report.summaries:
        if s.protocol.value == "agentic" and (
            s.variant != BASE_VARIANT or s.budget_multiplier != smallest[s.model]
        ):
            continue
        label = system_label(s.system)
        style = "-" if s.protocol.value == "guided" else "--"
        ex = report.ex_by_position.get(label, {})
        if ex:
            xs = sorted(ex)
            ax_ex.plot(
                xs, [ex[x] for x in xs], style, marker="o", color=colours[s.model], label=label
            )
        cer = {p: v for p, v in report.cer_by_position.get(label, {}).items() if v is not None}
        if cer:
            xs = sorted(cer)
            ax_cer.plot(
                xs, [cer[x] for x in xs], style, marker="s", color=colours[s.model], label=label
            )
    for ax, name in ((ax_ex, "EX"), (ax_cer, "CER")):
        ax.set_xlabel("turn position t")
        ax.set_ylabel(name)
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
        ax.set_title(f"{name} per turn position")
        ax.xaxis.set_major_locator(_pyplot().MaxNLocator(integer=True))
    ax_ex.legend(fontsize=7)
    return _save(fig, path)


def plot_qer_scaling(report: Report, path: Path) -> Path | None:
    """QER vs n for IS and RAS with +-sigma bands over runs, one panel per dataset.

    Returns:
        The file written, or ``None`` when the report has no QER curves.
    """
    datasets = sorted({c.dataset for c in report.qer_curves})
    if not datasets:
        return None
    fig, axes = _pyplot().subplots(
        1, len(datasets), figsize=(4.5 * len(datasets), 4), squeeze=False
    )
    for ax, dataset in zip(axes[0], datasets, strict=True):
        for strategy, colour in (("is", "tab:blue"), ("ras", "tab:red")):
            curve = qer_scaling(report.qer_curves, dataset, strategy)
            if curve is None:
                continue
            mean, std = np.array(curve[0]), np.array(curve[1])
            ns = np.arange(1, len(mean) + 1)
            ax.plot(ns, mean, marker="o", color=colour, label=strategy.upper())
            ax.fill_between(
                ns, np.clip(mean - std, 0, 1), np.clip(mean + std, 0, 1), color=colour, alpha=0.2
            )
            ax.set_xticks(ns)
        ax.set_title(dataset)
        ax.set_xlabel("inference scale n")
        ax.set_ylabel("QER")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend()
    # two short lines: one panel (a single dataset) is too narrow for one long title
    fig.suptitle("Query execution error rate vs inference scale\n(mean ± \u03c3 over runs)")
    return _save(fig, path)


def plot_ask_accuracy(report: Report, path: Path) -> Path | None:
    """Executable, EX and rEX per ask system, horizontal bars with Wilson 95% whiskers.

    One row per system (data and harness in its name; peers are labelled), top to
    bottom in the main table's order.

    Returns:
        The file written, or ``None`` when the report has no ask answers.
    """
    points = report.ask_points
    if not points:
        return None
    fig, ax = _pyplot().subplots(figsize=(9, 1.4 + 0.6 * len(points)))
    metrics = [
        ("executable", "executable", "tab:gray"),
        ("ex", "EX", "tab:blue"),
        ("ex_relaxed", "rEX", "tab:red"),
    ]
    height = 0.8 / len(metrics)
    ys = np.arange(len(points))[::-1].astype(float)
    for k, (field, name, colour) in enumerate(metrics):
        values = np.array([getattr(p, field) for p in points])
        offset = ys + (1 - k) * height
        errors = np.vstack([values[:, 0] - values[:, 1], values[:, 2] - values[:, 0]])
        ax.barh(offset, values[:, 0], height, xerr=errors, color=colour, label=name, capsize=2)
    # one model for every row (the usual comparison): named once, in the title
    models = {p.system.split(" ", 1)[0] for p in points}
    shared = models.pop() + " " if len(models) == 1 else ""
    labels = [
        f"{p.system.removeprefix(shared)} [{p.harness}]\nn={p.n}, median {p.median_s:.1f} s"
        for p in points
    ]
    ax.set_yticks(ys, labels, fontsize=7)
    ax.set_xlim(0, 1)
    ax.set_xlabel("rate, with its 95% Wilson interval")
    data = ", ".join(sorted({p.data for p in points}))
    ax.set_title(f"Ask accuracy per system: {shared}on {data}", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return _save(fig, path)


def write_plots(report: Report, folder: Path) -> dict[str, Path]:
    """Draw every figure the report has data for into ``folder``.

    Returns:
        Plot name -> file written (figures without data are skipped and logged).

    Raises:
        OSError: the folder cannot be written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    drawers = {
        "ex_vs_budget": plot_ex_vs_budget,
        "turn_position": plot_turn_position,
        "qer_scaling": plot_qer_scaling,
        "ask_accuracy": plot_ask_accuracy,
    }
    written = {}
    for name, draw in drawers.items():
        path = draw(report, folder / PLOT_FILES[name])
        if path is None:
            logger.info("plot %s skipped: no data for it in these runs", name)
        else:
            written[name] = path
    return written

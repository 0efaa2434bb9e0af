"""Build the report of one or more run directories: main table, breakdowns, significance, QER.

The tables follow the papers' layouts: the main table is CypherTurn Table 2
(EX, PSJS, SEM, CER, Tok/S per model and protocol, with relaxed EX and QER
beside them); breakdowns are appendix E; cost, cliff and action usage are
Tables 18, 19 and 25; QER tables are RAS Tables 3 and 4. The loss-by-cause table
(wrong turns by why their turn ended, with the unreadable-action rate;
docs/design/metrics.md) and the simulator caveat of the pairwise comparisons
(docs/design/protocols.md, "One simulator for compared agentic runs") are not the
papers'.
"""

from __future__ import annotations

import itertools
import logging
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, Field

from cypherturn.errors import ConfigError, DatasetError
from cypherturn.experiments import QerAnswers
from cypherturn.metrics import (
    BREAKDOWN_DIMENSIONS,
    DEFAULT_RESAMPLES,
    METRICS,
    ConfidenceInterval,
    QerCurve,
    SystemKey,
    SystemSummary,
    TurnLoss,
    bootstrap_ci,
    breakdown,
    cer_by_position,
    ex_by_position,
    group_by_system,
    paired_bootstrap,
    qer_curves,
    qer_dataset_table,
    qer_tier_table,
    session_totals,
    spearman,
    summarize,
    turn_losses,
)
from cypherturn.records import (
    BASE_VARIANT,
    METRICS_VERSION,
    EngineInfo,
    QerEpisode,
    RunData,
    TurnEnd,
    TurnScore,
)
from cypherturn.reports._ask import AskPoint, ask_points, ask_tables
from cypherturn.reports._qer import (
    format_change,
    qer_answer_tables,
    qer_cost_table,
    qer_error_class_table,
    relative_change,
)
from cypherturn.reports._tables import Table
from cypherturn.runner import with_logged_play

__all__ = ["Report", "RunProvenance", "build_report", "system_label"]

logger = logging.getLogger(__name__)


def system_label(system: SystemKey) -> str:
    """A short display name: ``model guided``, ``model agentic x3``, ``model agentic x3 persistent_schema``.

    The variant is named unless it is ``base``, so a base run and a variant run of
    the same model and budget get two labels (CypherTurn appendix F); the harness,
    when it is not the paper's agent, follows in brackets
    (``model guided [explicit, guards, note]``).
    """
    model, protocol, budget, variant, harness = system
    label = f"{model} guided" if protocol == "guided" else f"{model} {protocol} x{budget}"
    if variant != BASE_VARIANT:
        label += f" {variant}"
    return f"{label} [{harness}]" if harness else label


class RunProvenance(BaseModel):
    """What a run directory's scores were computed with.

    Attributes:
        run: the run directory.
        metrics_versions: metric definitions versions of its scores (from the turn
            scores, else the manifest); more than one means mixed scores.
        engines: graph -> engine name and version, from ``run.json`` (empty when absent).
    """

    run: str
    metrics_versions: list[int]
    engines: dict[str, EngineInfo] = Field(default_factory=dict)


def _provenance(run: RunData) -> RunProvenance:
    versions = sorted({s.metrics_version for s in run.scores})
    if not versions and run.manifest is not None:
        versions = [run.manifest.metrics_version]
    engines = run.manifest.engines if run.manifest is not None else {}
    return RunProvenance(run=str(run.path), metrics_versions=versions, engines=engines)


def _runs_table(provenance: Sequence[RunProvenance]) -> Table:
    rows: list[list[str | int | float | None]] = [
        [
            p.run,
            ", ".join(str(v) for v in p.metrics_versions) or "-",
            "; ".join(f"{graph}: {info}" for graph, info in sorted(p.engines.items())) or "unknown",
        ]
        for p in provenance
    ]
    return Table(
        name="runs",
        title="Runs: metric definitions and engines",
        columns=["Run", "Metric definitions", "Engine per graph"],
        rows=rows,
        notes=(
            f"Metric definitions {METRICS_VERSION} are current (docs/design/metrics.md); "
            "figures of runs with different versions or engines are not comparable."
        ),
    )


class Report(BaseModel):
    """Everything a report shows, as data (the ``json`` format writes this model).

    Attributes:
        runs: the run directories read.
        summaries: one per system (CypherTurn Table 2 plus cost and cliff figures).
        ex_ci: system label -> bootstrap CI of EX (session-level resampling).
        tables: the rendered tables, main table first.
        ex_by_position / cer_by_position: system label -> position -> value (Figures 6, 8).
        qer_curves: QER@k curves per (strategy, dataset, tier, model).
        budget_series: model (with its harness in brackets when not the paper's) -> budget -> (EX, CI low, CI high) for base-variant agentic
            runs (Figure 4).
        provenance: one entry per run directory: its metric definitions version and
            the engine (name, version) of each graph (also the ``runs`` table).
        gold_version: version of the golds the QER answers were scored against
            (``None`` when no answers were scored).
        ask_points: one per ask system: its rates with 95% intervals (the ask plot).
    """

    runs: list[str]
    summaries: list[SystemSummary] = Field(default_factory=list)
    ex_ci: dict[str, ConfidenceInterval] = Field(default_factory=dict)
    tables: list[Table] = Field(default_factory=list)
    ex_by_position: dict[str, dict[int, float]] = Field(default_factory=dict)
    cer_by_position: dict[str, dict[int, float | None]] = Field(default_factory=dict)
    qer_curves: list[QerCurve] = Field(default_factory=list)
    budget_series: dict[str, dict[int, tuple[float, float, float]]] = Field(default_factory=dict)
    provenance: list[RunProvenance] = Field(default_factory=list)
    gold_version: str | None = None
    ask_points: list[AskPoint] = Field(default_factory=list)

    @property
    def main_table(self) -> Table | None:
        """The main table, when there are turn scores."""
        return next((t for t in self.tables if t.name == "main"), None)


def _main_table(
    summaries: Sequence[SystemSummary], cis: dict[str, ConfidenceInterval], n_resamples: int
) -> Table:
    metrics = METRICS.items()
    rows = []
    for s in summaries:
        label = system_label(s.system)
        ci = cis.get(label)
        ex_cell = f"{s.ex:.3f} [{ci.low:.3f}, {ci.high:.3f}]" if ci else f"{s.ex:.3f}"
        rows.append(
            [
                s.model,
                s.protocol.value,
                "-" if s.protocol.value == "guided" else f"x{s.budget_multiplier}",
                s.variant,
                s.harness or "paper",
                s.sessions,
                s.turns,
                *(ex_cell if m.name == "ex" else s.metrics.get(m.name) for m in metrics),
                s.sem,
                s.cer,
                f"{s.tok_per_session:.1f}",
                s.qer,
            ]
        )
    return Table(
        name="main",
        title="Main results",
        columns=[
            "Model",
            "Protocol",
            "Budget",
            "Variant",
            "Harness",
            "Sessions",
            "Turns",
            *(f"{m.label} [95% CI]" if m.name == "ex" else m.label for m in metrics),
            "SEM",
            "CER",
            "Tok/S",
            "QER",
        ],
        rows=rows,
        notes=(
            f"EX: strict execution accuracy (column names included), 95% CI from a {n_resamples:,}-resample "
            "session-level bootstrap. rEX: relaxed EX (column names and order ignored, lists of "
            "collect() columns with undefined order compared as multisets). rEX⊆: relaxed EX "
            "with extra predicted columns allowed (gold columns ⊆ predicted columns). PSJS: CypherBench's "
            "(nodes bound by the leading MATCH block, both empty = 0), comparable with published "
            "figures; PSJS-out: ours (nodes and relationships of the rows that reach the output, "
            "both empty = 1). Both are means over the turns whose gold provenance exists; the "
            "others are counted in the cost table. SEM: sessions with every turn correct. CER: "
            "P(EX_t = 0 | EX_dep = 0) over chain-dependent turns. Tok/S: clean output tokens per session. "
            "QER: fraction of executed queries that failed."
            + "".join(
                f" {m.label}: {m.description}"
                + ("" if m.description.endswith(".") else ".")
                + ("" if m.higher_is_better else " Lower is better.")
                for m in metrics
                if m.field is None
            )
        ),
    )


def _cost_table(summaries: Sequence[SystemSummary]) -> Table:
    rows = [
        [
            system_label(s.system),
            f"{s.tok_per_session:.1f}",
            f"{s.prompt_tokens_per_session:.1f}",
            s.latency_s_per_turn,
            s.executions_per_prediction,
            s.psjs_coverage,
            f"{s.psjs_excluded} / {s.psjs_output_excluded}",
            s.exhaustion_rate,
            s.ex,
            s.ex_excl_cliff,
        ]
        for s in summaries
    ]
    return Table(
        name="cost",
        title="Cost, budget cliff and scoring work",
        columns=[
            "System",
            "Tok/S",
            "Prompt tok/S",
            "Latency s/turn",
            "Exec/pred",
            "PSJS coverage",
            "PSJS excl. (CB / out)",
            "Exhaustion",
            "EX",
            "EX excl. cliff",
        ],
        rows=rows,
        notes=(
            "Exhaustion: sessions whose budget ran out (agentic: the shared budget reached zero; "
            "guided: a turn used its 3 actions without SUBMIT_ANSWER). EX excl. cliff: EX without the turns "
            "auto-scored 0 by budget exhaustion (CypherTurn Table 25). Exec/pred: engine executions per "
            "predicted query while scoring."
        ),
    )


def _actions_table(summaries: Sequence[SystemSummary]) -> Table:
    kinds = ["execute_cypher", "inspect_schema", "search_values", "ask_user"]
    rows = [
        [system_label(s.system)] + [s.action_fractions.get(k) for k in kinds]
        for s in summaries
        if s.action_fractions
    ]
    return Table(
        name="actions",
        title="Action usage (fraction of non-SUBMIT actions)",
        columns=["System", "EXEC", "INSPECT", "SEARCH", "ASK"],
        rows=rows,
        notes="CypherTurn Table 19; SUBMIT_ANSWER excluded.",
    )


def _breakdown_table(scores: Sequence[TurnScore], dimension: str, labels: list[str]) -> Table:
    cells = breakdown(scores, dimension)
    values = sorted({v for per in cells.values() for v in per}, key=_natural_key)
    rows: list[list[str | int | float | None]] = []
    for value in values:
        row: list[str | int | float | None] = [value]
        for system in cells:
            cell = cells[system].get(value)
            row.append(None if cell is None else f"{cell.ex:.3f} ({cell.n})")
        rows.append(row)
    return Table(
        name=f"breakdown_{dimension}",
        title=f"EX by {dimension.replace('_', ' ')}",
        columns=[dimension, *labels],
        rows=rows,
        notes="Cells: mean strict EX (turns).",
    )


def _natural_key(value: str) -> tuple[str, int]:
    digits = "".join(ch for ch in value if ch.isdigit())
    return (value.rstrip("0123456789"), int(digits) if digits else -1)


def _cer_table(positions: dict[str, dict[int, float | None]]) -> Table:
    all_positions = sorted({p for per in positions.values() for p in per})
    return Table(
        name="cer_by_position",
        title="CER by turn position",
        columns=["Turn", *positions],
        rows=[[f"T{p}", *(positions[label].get(p) for label in positions)] for p in all_positions],
        notes="P(EX_t = 0 | EX_dep = 0) among chain-dependent turns at position t (CypherTurn Figure 8).",
    )


def _comparison_table(
    groups: dict[SystemKey, list[TurnScore]], n_resamples: int, seed: int
) -> Table | None:
    # models compared under one setting, and one model's harnesses compared (the paired
    # ablation of the harness settings, docs/design/metrics.md)
    by_setting: dict[tuple[str, ...], list[SystemKey]] = defaultdict(list)
    for system in groups:
        by_setting[("setting", *map(str, system[1:]))].append(system)
        by_setting[("harness", *map(str, system[:4]))].append(system)
    rows: list[list[str | int | float | None]] = []
    for systems in by_setting.values():
        for a, b in itertools.combinations(sorted(systems), 2):
            try:
                cmp = paired_bootstrap(
                    session_totals(groups[a]),
                    session_totals(groups[b]),
                    n_resamples=n_resamples,
                    seed=seed,
                )
            except ConfigError as exc:
                logger.info("no paired comparison of %s and %s: %s", a, b, exc)
                continue
            rows.append(
                [
                    system_label(a),
                    system_label(b),
                    cmp.n_sessions,
                    cmp.difference,
                    cmp.low,
                    cmp.high,
                    cmp.p_value,
                    "yes" if cmp.significant else "no",
                    _simulator_caveat(groups[a], groups[b]),
                ]
            )
    if not rows:
        return None
    return Table(
        name="comparisons",
        title="Pairwise EX comparisons (paired session bootstrap)",
        columns=[
            "A",
            "B",
            "Shared sessions",
            "EX(A) - EX(B)",
            "CI low",
            "CI high",
            "p",
            "Significant",
            "Caveat",
        ],
        rows=rows,
        notes=(
            f"{n_resamples:,} resamples of the sessions both systems played; significant when the "
            "95% CI excludes 0. Caveat: two agentic systems whose user simulators differ "
            "(bench run --sim-model; by default each evaluated model plays its own) are flagged "
            "'simulator differs: A vs B': their EX difference may come from the simulator's "
            "replies to ASK_USER as well as from the agents. Compare agentic runs played with "
            "one fixed simulator."
        ),
    )


def _simulators(turns: Sequence[TurnScore]) -> str:
    """Who played the user simulator in a system's turns (``""`` for guided turns)."""
    return ", ".join(sorted({t.record.simulator for t in turns if t.record.simulator}))


def _simulator_caveat(a: Sequence[TurnScore], b: Sequence[TurnScore]) -> str:
    """``simulator differs: A vs B`` when two systems' user simulators differ, else ``""``."""
    sim_a, sim_b = _simulators(a), _simulators(b)
    return f"simulator differs: {sim_a} vs {sim_b}" if sim_a != sim_b else ""


_LOSS_CAUSES = (
    (TurnEnd.SUBMITTED, "Submitted wrong"),
    (TurnEnd.STUCK, "Stuck"),
    (TurnEnd.CLIFF, "Cliff"),
    (TurnEnd.ACTION_CAP, "Action cap"),
    (TurnEnd.BUDGET_EXHAUSTED, "Budget exhausted"),
    (TurnEnd.CONTEXT_OVERFLOW, "Context overflow"),
)
"""The columns of the loss-by-cause table; ``infra_error`` has none: such sessions are never scored."""


def _loss_table(losses: dict[SystemKey, TurnLoss]) -> Table:
    unrecorded = any(loss.unrecorded for loss in losses.values())
    rows: list[list[str | int | float | None]] = []
    for system, loss in losses.items():
        rate = loss.unreadable_rate
        row: list[str | int | float | None] = [
            system_label(system),
            loss.turns,
            loss.wrong,
            *(loss.ends.get(end, 0) for end, _ in _LOSS_CAUSES),
        ]
        if unrecorded:
            row.append(loss.unrecorded)
        row.append("-" if rate is None else f"{loss.unreadable} / {loss.actions} ({rate:.1%})")
        rows.append(row)
    return Table(
        name="loss_by_cause",
        title="Turns lost, by why the turn ended",
        columns=[
            "System",
            "Turns",
            "Wrong (EX = 0)",
            *(label for _, label in _LOSS_CAUSES),
            *(["Unrecorded"] if unrecorded else []),
            "Unreadable actions",
        ],
        rows=rows,
        notes=(
            "Each wrong turn (strict EX = 0) counts once, under why its turn ended "
            "(CypherTurn App. D.5). Submitted wrong: the model called SUBMIT_ANSWER with a "
            "query whose result is not the gold's. Stuck: the repeat guard ended the turn when "
            "the model took one action a third time (prediction: the turn's last executed "
            "query). Cliff: agentic; the shared budget was spent before the turn began, so it "
            "had no prediction. Action cap: guided; the turn's 3 actions ran out without "
            "SUBMIT_ANSWER (prediction: the last executed query, if any). Budget exhausted: "
            "agentic; the shared budget ran out during the turn without SUBMIT_ANSWER (same "
            "fallback). Context overflow: the turn's context outgrew the model's window before "
            "SUBMIT_ANSWER (same fallback). "
            + (
                "Unrecorded: wrong turns whose record names no end reason and whose run "
                "directory has no session log to read it from. "
                if unrecorded
                else ""
            )
            + "Unreadable actions: the model's replies the harness could not read as an "
            "action, over all its actions (actions the harness took for it excluded; - where "
            "no turn counts them)."
        ),
    )


def _rank_table(summaries: Sequence[SystemSummary]) -> Table | None:
    settings = sorted(
        {
            (s.budget_multiplier, s.variant, s.harness)
            for s in summaries
            if s.protocol.value == "agentic"
        }
    )
    rows: list[list[str | int | float | None]] = []
    for budget, variant, harness in settings:
        guided = {
            s.model: s.ex
            for s in summaries
            if s.protocol.value == "guided" and s.harness == harness
        }
        agentic = {
            s.model: s.ex
            for s in summaries
            if s.protocol.value == "agentic"
            and (s.budget_multiplier, s.variant, s.harness) == (budget, variant, harness)
        }
        try:
            rc = spearman(guided, agentic)
        except ConfigError:
            continue
        name = f"guided vs agentic x{budget}"
        if variant != BASE_VARIANT:
            name += f" {variant}"
        if harness:
            name += f" [{harness}]"
        rows.append([name, rc.n, rc.rho, rc.p_value, rc.loo_min, rc.loo_max])
    if not rows:
        return None
    return Table(
        name="rank_correlation",
        title="Rank correlation of model EX across protocols",
        columns=["Rankings", "Models", "Spearman rho", "p", "LOO min", "LOO max"],
        rows=rows,
        notes="Leave-one-out: rho recomputed with each model removed (CypherTurn §5.2).",
    )


def _qer_tables(curves: list[QerCurve], n: int) -> list[Table]:
    tier_rows = qer_tier_table(curves, n)
    if not tier_rows:
        return []
    data_rows = qer_dataset_table(tier_rows)
    return [
        Table(
            name="qer",
            title=f"Query execution error rate (QER), n = {n}",
            columns=[
                "Dataset",
                "Model",
                "Q@1",
                f"IS@{n}",
                f"RAS@{n}",
                "dIS",
                "dRAS",
                "IS vs Q@1",
                "RAS vs Q@1",
            ],
            rows=[
                [
                    r.dataset,
                    r.model,
                    r.q1,
                    r.is_n,
                    r.ras_n,
                    r.delta_is,
                    r.delta_ras,
                    format_change(relative_change(r.q1, r.is_n)),
                    format_change(relative_change(r.q1, r.ras_n)),
                ]
                for r in data_rows
            ],
            notes=(
                "RAS Table 3 layout: Q@1 averages IS@1 and RAS@1; every column averages the complexity tiers; "
                "dIS and dRAS are absolute reductions from Q@1; IS vs Q@1 and RAS vs Q@1 are relative "
                "changes, (QER@n - Q@1) / Q@1 (the paper: -32 to -38 % for IS@5, -41 to -50 % for RAS@5 "
                "with 7B code models)."
            ),
        ),
        Table(
            name="qer_tiers",
            title=f"QER per complexity tier, n = {n}",
            columns=[
                "Dataset",
                "Tier",
                "Model",
                "QER@1",
                f"IS@{n}",
                f"RAS@{n}",
                "sigma IS",
                "sigma RAS",
            ],
            rows=[
                [r.dataset, r.tier, r.model, r.q1, r.is_n, r.ras_n, r.sigma_is, r.sigma_ras]
                for r in tier_rows
            ],
            notes="RAS Table 4 layout: means over independent runs, sigma = sample standard deviation across runs.",
        ),
    ]


def build_report(
    runs: Sequence[RunData],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    qer_n: int = 5,
    seed: int = 0,
    qer_answers: QerAnswers | None = None,
) -> Report:
    """Compute every table and plot series of a report from run directories already read.

    Records written before they named why each turn ended, their action counts and
    their simulator are completed from the bench run's session logs and
    ``bench_config.json`` (:func:`cypherturn.runner.with_logged_play`).

    Args:
        runs: the runs (see :func:`cypherturn.metrics.read_run`).
        n_resamples: bootstrap resamples for CIs and comparisons.
        qer_n: the scaled budget n of the QER tables.
        seed: bootstrap seed.
        qer_answers: the QER runs' final queries scored against their golds
            (:func:`cypherturn.experiments.score_qer_answers`); ``None`` leaves the
            EX columns of the QER answer tables empty.

    Returns:
        The :class:`Report`.

    Raises:
        DatasetError: the runs hold neither turn scores nor QER episodes.
    """
    # records written before they named their end reason and simulator: from the run's files
    runs = [with_logged_play(run) for run in runs]
    scores = [s for run in runs for s in run.scores]
    episodes = [e for run in runs for e in run.episodes]
    answers = [a for run in runs for a in run.answers]
    if not scores and not episodes and not answers:
        raise DatasetError("the run directories hold no scores, QER attempts or ask answers")
    report = Report(
        runs=[str(run.path) for run in runs], provenance=[_provenance(run) for run in runs]
    )
    versions = {v for p in report.provenance for v in p.metrics_versions}
    if len(versions) > 1:
        logger.warning("the runs mix metric definitions %s", sorted(versions))
    if scores:
        _add_bench(report, scores, n_resamples, seed)
    if answers:
        golds = [
            (run.answers[0].ask_set if run.answers else run.path.name, check)
            for run in runs
            for check in run.golds
        ]
        report.tables += ask_tables(answers, golds, n_resamples=n_resamples, seed=seed)
        report.ask_points = ask_points(answers)
    report.tables.append(_runs_table(report.provenance))
    if episodes:
        _add_qer(report, episodes, qer_n, qer_answers)
    return report


def _add_bench(report: Report, scores: list[TurnScore], n_resamples: int, seed: int) -> None:
    """Add the benchmark's summaries, CIs, per-position series, budget series and tables to ``report``."""
    groups = group_by_system(scores)
    report.summaries = summarize(scores)
    labels = [system_label(system) for system in groups]
    for system, turns in groups.items():
        report.ex_ci[system_label(system)] = bootstrap_ci(
            session_totals(turns), n_resamples=n_resamples, seed=seed
        )
        report.ex_by_position[system_label(system)] = ex_by_position(turns)
        report.cer_by_position[system_label(system)] = cer_by_position(turns)
        if system[1] == "agentic" and system[3] == BASE_VARIANT:
            ci = report.ex_ci[system_label(system)]
            series = f"{system[0]} [{system[4]}]" if system[4] else system[0]
            report.budget_series.setdefault(series, {})[system[2]] = (
                ci.estimate,
                ci.low,
                ci.high,
            )
    report.tables.append(_main_table(report.summaries, report.ex_ci, n_resamples))
    report.tables.append(_cost_table(report.summaries))
    report.tables.append(_loss_table(turn_losses(scores)))
    actions = _actions_table(report.summaries)
    if actions.rows:
        report.tables.append(actions)
    report.tables += [_breakdown_table(scores, dim, labels) for dim in BREAKDOWN_DIMENSIONS]
    report.tables.append(_cer_table(report.cer_by_position))
    for extra in (_comparison_table(groups, n_resamples, seed), _rank_table(report.summaries)):
        if extra is not None:
            report.tables.append(extra)


def _add_qer(
    report: Report, episodes: list[QerEpisode], qer_n: int, qer_answers: QerAnswers | None
) -> None:
    """Add the QER curves and tables at the scaled budget (at most ``qer_n``) to ``report``."""
    report.qer_curves = qer_curves(episodes)
    scaled = [c.budget for c in report.qer_curves if c.strategy in ("is", "ras")]
    n = min([qer_n, *scaled])
    report.tables += _qer_tables(report.qer_curves, n)
    report.tables += qer_answer_tables(
        report.qer_curves,
        n,
        None if qer_answers is None else qer_answers.answers,
        None if qer_answers is None else qer_answers.gold_version,
    )
    report.gold_version = None if qer_answers is None else qer_answers.gold_version
    extras = (qer_error_class_table(episodes, n), qer_cost_table(episodes))
    report.tables += [table for table in extras if table is not None]

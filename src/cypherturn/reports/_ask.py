"""The ask benchmark's tables: accuracy per system with intervals, breakdowns, paired differences, gold labels.

Every row names its data (the question set and its split: development or test)
and its harness (paper-comparable or system), so that no figure can be read
without knowing whether the data shaped the system. Proportions carry Wilson
intervals (questions are independent); a difference between two strategies of
one model is a paired bootstrap over the questions both answered.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from cypherturn.metrics import DEFAULT_RESAMPLES, paired_difference, wilson_interval
from cypherturn.records import AskAnswer, GoldCheck, GoldReason, GoldStatus
from cypherturn.reports._tables import Cell, Table

__all__ = ["AskPoint", "ask_points", "ask_system_label", "ask_tables"]


class AskPoint(BaseModel):
    """One system's ask accuracy as numbers, for the plot (the table shows the same).

    Attributes:
        system: ``model strategy@T prompt`` (:func:`ask_system_label`).
        data: ``ask set (split)``.
        harness: paper-comparable, system or peer.
        n: questions answered.
        executable / ex / ex_relaxed: (rate, Wilson 95% low, high), each in [0, 1].
        median_s: median seconds per question.
    """

    model_config = ConfigDict(frozen=True)

    system: str
    data: str
    harness: str
    n: int
    executable: tuple[float, float, float]
    ex: tuple[float, float, float]
    ex_relaxed: tuple[float, float, float]
    median_s: float


_System = tuple[str, str, str, str, str, int, str]
"""(ask set, split, harness, model, strategy, budget, prompt)."""


def _system(answer: AskAnswer) -> _System:
    return (
        answer.ask_set,
        answer.split.value,
        answer.harness.value,
        answer.model,
        answer.strategy,
        answer.budget,
        answer.prompt,
    )


def ask_system_label(system: _System) -> str:
    """``model strategy@T prompt``: the system, without its data and harness columns."""
    _, _, _, model, strategy, budget, prompt = system
    return f"{model} {strategy}@{budget} {prompt}"


def _interval(answers: Sequence[AskAnswer], value: Callable[[AskAnswer], int]) -> str:
    estimate, low, high = _rate(answers, value)
    return f"{estimate:.3f} [{low:.3f}, {high:.3f}]"


def _p90(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


_STRATEGY_ORDER = ("single", "is", "ras", "ras+")
"""The paper's order, then cypherturn's: a paired difference reads later minus earlier."""


def _order(system: _System) -> tuple[object, ...]:
    strategy = system[4]
    base = strategy.partition(":")[0]
    rank = _STRATEGY_ORDER.index(base) if base in _STRATEGY_ORDER else len(_STRATEGY_ORDER)
    return (system[0], system[1], system[3], rank, strategy != base, strategy, system[5], system[6])


def _groups(answers: Sequence[AskAnswer]) -> dict[_System, list[AskAnswer]]:
    grouped: dict[_System, list[AskAnswer]] = defaultdict(list)
    for answer in answers:
        grouped[_system(answer)].append(answer)
    return {system: grouped[system] for system in sorted(grouped, key=_order)}


def _rate(
    answers: Sequence[AskAnswer], value: Callable[[AskAnswer], int]
) -> tuple[float, float, float]:
    ci = wilson_interval(sum(value(a) for a in answers), len(answers))
    return (ci.estimate, ci.low, ci.high)


def ask_points(answers: Sequence[AskAnswer]) -> list[AskPoint]:
    """Each system's rates with their Wilson 95% intervals, in the main table's order."""
    return [
        AskPoint(
            system=ask_system_label(system),
            data=f"{system[0]} ({system[1]})",
            harness=system[2],
            n=len(group),
            executable=_rate(group, lambda a: int(a.executable)),
            ex=_rate(group, lambda a: a.ex),
            ex_relaxed=_rate(group, lambda a: a.ex_relaxed),
            median_s=statistics.median(a.seconds for a in group),
        )
        for system, group in _groups(answers).items()
    ]


def _main_table(groups: dict[_System, list[AskAnswer]]) -> Table:
    rows: list[list[Cell]] = []
    for system, answers in groups.items():
        ask_set, split, harness, model, strategy, budget, prompt = system
        seconds = [a.seconds for a in answers]
        rows.append(
            [
                f"{model} {strategy}@{budget} {prompt}",
                f"{ask_set} ({split})",
                harness,
                len(answers),
                _interval(answers, lambda a: int(a.executable)),
                _interval(answers, lambda a: a.ex),
                _interval(answers, lambda a: a.ex_relaxed),
                statistics.fmean(a.attempts for a in answers),
                statistics.median(seconds),
                _p90(seconds),
            ]
        )
    return Table(
        name="ask",
        title="Ask accuracy per system [95% Wilson CI]",
        columns=[
            "System",
            "Data",
            "Harness",
            "n",
            "Executable",
            "EX",
            "rEX",
            "Attempts",
            "Median s",
            "p90 s",
        ],
        rows=rows,
        notes=(
            "EX: the final result equals the gold's (rows, and column names); rEX: the same "
            "rows under any column names and order (docs/design/ex-equivalence.md). A question "
            "whose final query did not execute scores 0. Data: the question set and whether it "
            "is development data (it shaped the system) or a frozen test split. Harness: "
            "paper-comparable (the RAS paper's strategy and prompt v1), system, or peer "
            "(another tool run as its docs show, on the same model and engine)."
        ),
    )


def _breakdown(groups: dict[_System, list[AskAnswer]], key: str) -> Table:
    rows: list[list[Cell]] = []
    for system, answers in groups.items():
        by_key: dict[str, list[AskAnswer]] = defaultdict(list)
        for answer in answers:
            by_key[getattr(answer, key) or "-"].append(answer)
        for value, group in sorted(by_key.items()):
            rows.append(
                [
                    ask_system_label(system),
                    f"{system[0]} ({system[1]})",
                    value,
                    len(group),
                    _interval(group, lambda a: a.ex),
                    _interval(group, lambda a: a.ex_relaxed),
                ]
            )
    return Table(
        name=f"ask_{key}",
        title=f"Ask accuracy per {key} [95% Wilson CI]",
        columns=["System", "Data", key.capitalize(), "n", "EX", "rEX"],
        rows=rows,
    )


def _pairs_table(
    groups: dict[_System, list[AskAnswer]], n_resamples: int, seed: int
) -> Table | None:
    rows: list[list[Cell]] = []
    systems = list(groups)
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            # one model on one set, two strategies (or prompts): what a strategy adds
            if a[:2] != b[:2] or a[3] != b[3]:
                continue
            answers_a = {x.question_id: x for x in groups[a]}
            answers_b = {x.question_id: x for x in groups[b]}
            shared = sorted(set(answers_a) & set(answers_b))
            if len(shared) < 2:
                continue
            # later minus earlier, but cypherturn minus a peer (peers sort last)
            first, second = (a, b) if b[2] == "peer" and a[2] != "peer" else (b, a)
            answers = {a: answers_a, b: answers_b}
            cells: list[Cell] = [
                ask_system_label(first),
                ask_system_label(second),
                f"{a[0]} ({a[1]})",
                len(shared),
            ]
            for metric in ("ex", "ex_relaxed"):
                diff = paired_difference(
                    [getattr(answers[first][q], metric) for q in shared],
                    [getattr(answers[second][q], metric) for q in shared],
                    n_resamples=n_resamples,
                    seed=seed,
                )
                cells.append(f"{diff.difference:+.3f} [{diff.low:+.3f}, {diff.high:+.3f}]")
                cells.append(diff.p_value)
            rows.append(cells)
    if not rows:
        return None
    return Table(
        name="ask_pairs",
        title="Paired differences on the same questions (A minus B) [95% bootstrap CI]",
        columns=["A", "B", "Data", "n", "EX change", "p (EX)", "rEX change", "p (rEX)"],
        rows=rows,
        notes=(
            "Percentile bootstrap over the questions both systems answered "
            f"({n_resamples} resamples); p is two-sided."
        ),
    )


def _golds_table(golds: Sequence[tuple[str, GoldCheck]]) -> Table | None:
    if not golds:
        return None
    by_set: dict[str, list[GoldCheck]] = defaultdict(list)
    for ask_set, check in golds:
        by_set[ask_set].append(check)
    rows: list[list[Cell]] = []
    for ask_set, checks in sorted(by_set.items()):
        counts = {status: sum(c.status is status for c in checks) for status in GoldStatus}
        reasons = {r: sum(r in c.reasons for c in checks) for r in GoldReason}
        rows.append(
            [
                ask_set,
                len(checks),
                counts[GoldStatus.KEPT],
                counts[GoldStatus.REPAIRED],
                counts[GoldStatus.EXCLUDED],
                ", ".join(f"{r.value} {n}" for r, n in reasons.items() if n) or "-",
            ]
        )
    return Table(
        name="ask_golds",
        title="Gold labels on our engine",
        columns=["Set", "Questions", "Kept", "Repaired", "Excluded", "Reasons"],
        rows=rows,
        notes=(
            "Every gold was re-executed on the engine before any model saw its question: "
            "repaired golds keep their meaning in FalkorDB's dialect, excluded ones are not "
            "asked (docs/design/ask-benchmark.md defines each reason)."
        ),
    )


def ask_tables(
    answers: Sequence[AskAnswer],
    golds: Sequence[tuple[str, GoldCheck]] = (),
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[Table]:
    """Every table of ask benchmark answers.

    Args:
        answers: the answers of one or more ask runs.
        golds: (ask set name, gold label) pairs of those runs.
        n_resamples: bootstrap resamples of the paired differences.
        seed: bootstrap seed.

    Returns:
        The main table (``ask``), per graph, per category, paired differences (when
        two strategies of a model answered one set) and the gold labels.
    """
    groups = _groups(answers)
    tables = [_main_table(groups), _breakdown(groups, "graph"), _breakdown(groups, "category")]
    extra = (_pairs_table(groups, n_resamples, seed), _golds_table(golds))
    return tables + [t for t in extra if t is not None]
